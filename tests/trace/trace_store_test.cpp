// Tests of up's trace store (src/trace/trace_store.h): which traces a window keeps (the slowest,
// every failed one), the summary fields and stages, spans back intact, and pruning by retention
// and by max_mb (oldest windows first).
#include "trace/trace_store.h"

#include <gtest/gtest.h>

#include "support/temp_dir.h"

namespace inferscope::trace {
namespace {

constexpr std::uint64_t kSecond = 1'000'000'000ULL;
// A window boundary, so that offsets below 300 s stay in one window.
constexpr std::uint64_t kStoreT0 = 1'800'000'000ULL * kSecond / kTraceWindowNs * kTraceWindowNs;

TraceId trace_id_of(int n) {
  TraceId id{};
  id[0] = 0xab;
  id[14] = static_cast<std::uint8_t>(n >> 8);
  id[15] = static_cast<std::uint8_t>(n);
  return id;
}

SpanId span_id_of(int n) {
  SpanId id{};
  id[0] = 0xcd;
  id[6] = static_cast<std::uint8_t>(n >> 8);
  id[7] = static_cast<std::uint8_t>(n);
  return id;
}

// request builds one request: a root span of `duration_ms` starting at `start_ns` and, when
// `stages`, its queue and decode children; service `job`, model attribute `model`.
ExportRequest request(int n, std::uint64_t start_ns, int duration_ms, bool failed = false, std::string job = "serve",
                      std::string model = "m", bool stages = true) {
  Span root;
  root.trace_id = trace_id_of(n);
  root.span_id = span_id_of(1);
  root.name = "chat " + model;
  root.kind = SpanKind::kServer;
  root.start_unix_ns = start_ns;
  root.end_unix_ns = start_ns + static_cast<std::uint64_t>(duration_ms) * 1'000'000;
  root.attributes = {{"gen_ai.request.model", model}, {"http.response.status_code", std::int64_t{failed ? 500 : 200}}};
  ScopeSpans scope{.scope_name = "test", .scope_version = "", .spans = {}};
  if (stages) {
    Span queue;
    queue.trace_id = root.trace_id;
    queue.span_id = span_id_of(2);
    queue.parent_span_id = root.span_id;
    queue.name = "queue";
    queue.start_unix_ns = start_ns;
    queue.end_unix_ns = start_ns + 1'000'000;  // 1 ms
    queue.attributes = {{"inferscope.stage", std::string("queue")}};
    Span decode = queue;
    decode.span_id = span_id_of(3);
    decode.name = "decode";
    decode.start_unix_ns = queue.end_unix_ns;
    decode.end_unix_ns = root.end_unix_ns;
    decode.attributes = {{"inferscope.stage", std::string("decode")}, {"gen_ai.usage.output_tokens", std::int64_t{7}}};
    scope.spans = {queue, decode};
  }
  scope.spans.push_back(root);
  ExportRequest r;
  r.resources.push_back({.resource_attributes = {{"service.name", std::move(job)}}, .scopes = {scope}});
  return r;
}

std::unique_ptr<TraceStore> open_store(const testing::TempDir& dir, TraceStoreOptions options = {}) {
  options.path = (dir.path() / "traces.db").string();
  auto store = TraceStore::open(options);
  EXPECT_TRUE(store) << store.error().message;
  return store ? std::move(*store) : nullptr;
}

std::vector<std::string> ids(const std::vector<TraceSummary>& traces) {
  std::vector<std::string> out;
  for (const TraceSummary& t : traces) out.push_back(t.trace_id);
  return out;
}

// Tests that a full window keeps its N slowest and every failed trace, evicting the fastest for a
// slower arrival and refusing a faster one; lists come back slowest first.
TEST(TraceStoreTest, KeepsTheSlowestAndEveryFailedTracePerWindow) {
  testing::TempDir dir("trace-store");
  auto store = open_store(dir, {.slowest_per_window = 2});
  ASSERT_TRUE(store);
  auto add = [&](int n, int ms, bool failed = false) {
    auto r = store->add(request(n, kStoreT0 + static_cast<std::uint64_t>(n) * kSecond, ms, failed), kStoreT0);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : AddOutcome{};
  };
  EXPECT_EQ(add(1, 100).stored, 1u);
  EXPECT_EQ(add(2, 300).stored, 1u);
  const AddOutcome faster = add(3, 50);  // window full, faster than both kept
  EXPECT_EQ(faster.stored, 0u);
  EXPECT_EQ(faster.not_slowest, 1u);
  const AddOutcome slower = add(4, 200);  // evicts trace 1 (100 ms)
  EXPECT_EQ(slower.stored, 1u);
  EXPECT_EQ(slower.evicted, 1u);
  EXPECT_EQ(add(5, 10, /*failed=*/true).stored, 1u);  // failed: kept although fastest
  EXPECT_EQ(add(6, 20, /*failed=*/true).stored, 1u);
  auto all = store->list({});
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(ids(*all), (std::vector<std::string>{to_hex(trace_id_of(2)), to_hex(trace_id_of(4)),
                                                 to_hex(trace_id_of(6)), to_hex(trace_id_of(5))}));
  // The dropped traces' spans are gone too, and none is found by id.
  for (int gone : {1, 3}) {
    auto spans = store->spans(trace_id_of(gone));
    ASSERT_TRUE(spans);
    EXPECT_FALSE(*spans) << gone;
  }
  // Another model (or job) is another window.
  ASSERT_TRUE(store->add(request(7, kStoreT0, 1, false, "serve", "other"), kStoreT0));
  ASSERT_TRUE(store->add(request(8, kStoreT0, 1, false, "gateway", "m"), kStoreT0));
  auto other = store->list({.model = "other"});
  ASSERT_TRUE(other);
  EXPECT_EQ(ids(*other), std::vector<std::string>{to_hex(trace_id_of(7))});
  auto gateway = store->list({.job = "gateway"});
  ASSERT_TRUE(gateway);
  EXPECT_EQ(ids(*gateway), std::vector<std::string>{to_hex(trace_id_of(8))});
}

// Tests the summary: job, model, root name, start, duration, status, and the root's children's
// durations by stage; and the filters min_duration, since and limit.
TEST(TraceStoreTest, SummaryFieldsStagesAndFilters) {
  testing::TempDir dir("trace-store");
  auto store = open_store(dir);
  ASSERT_TRUE(store);
  ASSERT_TRUE(store->add(request(1, kStoreT0, 250), kStoreT0));
  ASSERT_TRUE(store->add(request(2, kStoreT0 + 10 * kSecond, 1500, /*failed=*/true), kStoreT0));
  ASSERT_TRUE(store->add(request(3, kStoreT0 + 20 * kSecond, 40, false, "serve", "m", /*stages=*/false), kStoreT0));
  auto all = store->list({});
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), 3u);
  const TraceSummary& slow = (*all)[0];
  EXPECT_EQ(slow.trace_id, to_hex(trace_id_of(2)));
  EXPECT_EQ(slow.job, "serve");
  EXPECT_EQ(slow.model, "m");
  EXPECT_EQ(slow.name, "chat m");
  EXPECT_EQ(slow.start_unix_ns, kStoreT0 + 10 * kSecond);
  EXPECT_EQ(slow.duration_ns, 1500u * 1'000'000);
  EXPECT_TRUE(slow.error);
  EXPECT_EQ(slow.stages, (std::map<std::string, double>{{"decode", 1.499}, {"queue", 0.001}}));
  EXPECT_FALSE((*all)[1].error);
  EXPECT_TRUE((*all)[2].stages.empty());
  auto slow_only = store->list({.min_duration_ns = 300'000'000});
  ASSERT_TRUE(slow_only);
  EXPECT_EQ(ids(*slow_only), std::vector<std::string>{to_hex(trace_id_of(2))});
  auto recent = store->list({.since_unix_ns = kStoreT0 + 5 * kSecond});
  ASSERT_TRUE(recent);
  EXPECT_EQ(ids(*recent), (std::vector<std::string>{to_hex(trace_id_of(2)), to_hex(trace_id_of(3))}));
  auto one = store->list({.limit = 1});
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);
}

// Tests that spans come back as sent (ids, parents, times, kind, status, attributes of each type,
// service), children arriving before their root included.
TEST(TraceStoreTest, SpansComeBackIntactInAnyArrivalOrder) {
  testing::TempDir dir("trace-store");
  auto store = open_store(dir);
  ASSERT_TRUE(store);
  ExportRequest whole = request(1, kStoreT0, 90);
  Span& root = whole.resources[0].scopes[0].spans.back();
  root.attributes.push_back({"ratio", 0.25});
  root.attributes.push_back({"streamed", true});
  root.attributes.push_back({"gen_ai.response.finish_reasons", StringList{"stop", "length"}});
  root.status = {StatusCode::kOk, ""};
  // Children first, as an SDK's batch processor sends them (they end before the root).
  ExportRequest children = whole;
  children.resources[0].scopes[0].spans.pop_back();
  ExportRequest root_only = whole;
  root_only.resources[0].scopes[0].spans = {root};
  ASSERT_TRUE(store->add(children, kStoreT0));
  auto add = store->add(root_only, kStoreT0);
  ASSERT_TRUE(add);
  EXPECT_EQ(add->stored, 1u);
  auto spans = store->spans(trace_id_of(1));
  ASSERT_TRUE(spans);
  ASSERT_TRUE(*spans);
  ASSERT_EQ((*spans)->size(), 3u);
  for (const StoredSpan& s : **spans) {
    EXPECT_EQ(s.service, "serve");
    const auto& sent = whole.resources[0].scopes[0].spans;
    auto it = std::find_if(sent.begin(), sent.end(), [&](const Span& x) { return x.span_id == s.span.span_id; });
    ASSERT_NE(it, sent.end());
    EXPECT_EQ(s.span.trace_id, it->trace_id);
    EXPECT_EQ(s.span.parent_span_id, it->parent_span_id);
    EXPECT_EQ(s.span.start_unix_ns, it->start_unix_ns);
    EXPECT_EQ(s.span.end_unix_ns, it->end_unix_ns);
    EXPECT_EQ(s.span.kind, it->kind);
    EXPECT_EQ(s.span.status, it->status);
    // The store keeps attributes as a JSON object: keys sorted, values of every kind intact.
    auto sorted = it->attributes;
    std::sort(sorted.begin(), sorted.end(), [](const Attribute& a, const Attribute& b) { return a.key.view() < b.key.view(); });
    EXPECT_EQ(s.span.attributes, sorted) << s.span.name;
  }
  // A remote-parent root (a service continuing an outside caller) makes a trace too.
  ExportRequest continued = request(2, kStoreT0, 30, false, "serve", "m", false);
  Span& remote = continued.resources[0].scopes[0].spans.back();
  remote.parent_span_id = span_id_of(99);
  remote.flags = 0x301;
  ASSERT_TRUE(store->add(continued, kStoreT0));
  auto listed = store->list({});
  ASSERT_TRUE(listed);
  EXPECT_EQ(listed->size(), 2u);
}

// Tests retention: traces started before now - retention go, with their spans; spans still
// waiting for a root go after the grace.
TEST(TraceStoreTest, PrunesByRetention) {
  testing::TempDir dir("trace-store");
  auto store = open_store(dir, {.retention = std::chrono::hours(1), .orphan_grace = std::chrono::minutes(2)});
  ASSERT_TRUE(store);
  const std::uint64_t hour = 3600 * kSecond;
  ASSERT_TRUE(store->add(request(1, kStoreT0, 100), kStoreT0));
  ASSERT_TRUE(store->add(request(2, kStoreT0 + hour, 100), kStoreT0 + hour));
  ExportRequest orphan = request(3, kStoreT0 + hour, 100);
  orphan.resources[0].scopes[0].spans.pop_back();  // no root
  ASSERT_TRUE(store->add(orphan, kStoreT0 + hour));
  auto pruned = store->prune(kStoreT0 + hour + 60 * kSecond);
  ASSERT_TRUE(pruned) << pruned.error().message;
  EXPECT_EQ(pruned->retention, 1u);
  auto left = store->list({});
  ASSERT_TRUE(left);
  EXPECT_EQ(ids(*left), std::vector<std::string>{to_hex(trace_id_of(2))});
  auto gone = store->spans(trace_id_of(1));
  ASSERT_TRUE(gone);
  EXPECT_FALSE(*gone);
  auto waiting = store->spans(trace_id_of(3));
  ASSERT_TRUE(waiting);
  EXPECT_TRUE(*waiting);  // within its grace
  ASSERT_TRUE(store->prune(kStoreT0 + hour + 3 * 60 * kSecond));
  waiting = store->spans(trace_id_of(3));
  ASSERT_TRUE(waiting);
  EXPECT_FALSE(*waiting);
}

// Tests max_mb: past it, whole windows go oldest first until the used size fits, and the file
// gives the pages back.
TEST(TraceStoreTest, PrunesOldestWindowsBeyondMaxMb) {
  testing::TempDir dir("trace-store");
  auto store = open_store(dir, {.slowest_per_window = 1000, .max_mb = 1});
  ASSERT_TRUE(store);
  const std::string padding(2000, 'x');
  // 6 windows x 150 traces x ~2 KB: about 2 MB, twice the bound.
  for (int window = 0; window < 6; ++window) {
    for (int i = 0; i < 150; ++i) {
      const int n = window * 150 + i;
      ExportRequest r = request(n, kStoreT0 + static_cast<std::uint64_t>(window) * kTraceWindowNs, 10 + i);
      r.resources[0].scopes[0].spans.back().attributes.push_back({"padding", padding});
      ASSERT_TRUE(store->add(r, kStoreT0));
    }
  }
  auto before = store->used_bytes();
  ASSERT_TRUE(before);
  EXPECT_GT(*before, 1u << 20);
  auto pruned = store->prune(kStoreT0 + 6 * kTraceWindowNs);
  ASSERT_TRUE(pruned) << pruned.error().message;
  EXPECT_GT(pruned->max_mb, 0u);
  EXPECT_EQ(pruned->max_mb % 150, 0u);  // whole windows
  auto after = store->used_bytes();
  ASSERT_TRUE(after);
  EXPECT_LE(*after, 1u << 20);
  EXPECT_LE(std::filesystem::file_size(dir.path() / "traces.db"), *before);
  // The newest window is kept whole; the oldest is gone.
  auto newest = store->list({.since_unix_ns = kStoreT0 + 5 * kTraceWindowNs, .limit = 1000});
  ASSERT_TRUE(newest);
  EXPECT_EQ(newest->size(), 150u);
  auto oldest = store->spans(trace_id_of(0));
  ASSERT_TRUE(oldest);
  EXPECT_FALSE(*oldest);
}

// Tests that an unusable path fails naming the file.
TEST(TraceStoreTest, OpenErrorNamesThePath) {
  auto store = TraceStore::open({.path = "/nonexistent-dir/traces.db"});
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().message.find("cannot open trace store /nonexistent-dir/traces.db"), std::string::npos)
      << store.error().message;
}

}  // namespace
}  // namespace inferscope::trace
