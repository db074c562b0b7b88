// Tests of up's OTLP receiver and trace routes (src/trace/trace_receiver.h) on a real HttpServer
// over a real SQLite store: protobuf, JSON and gzip accepted, 400/413/415 with google.rpc.Status
// bodies in the request's encoding,
// a full queue answered as a partial success and counted, and the query routes' JSON and errors.
#include "trace/trace_receiver.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>

#include <inferscope/metrics/exposition.h>
#include <nlohmann/json.hpp>

#include "net/blocking_client.h"
#include "net/http_server.h"
#include "support/peers.h"
#include "support/registry_scrape.h"
#include "support/temp_dir.h"
#include "support/test_process.h"
#include "support/wait_until.h"

namespace inferscope::trace {
namespace {

using nlohmann::json;

struct RawReply {
  int status = 0;
  std::string content_type;
  std::string body;
};

// raw_post sends one request with exactly `headers` (net's client sets no Content-Encoding).
RawReply raw_post(std::uint16_t port, std::string_view path, const std::vector<std::string>& headers,
                  std::string_view body) {
  RawReply reply;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return reply;
  }
  std::string request = "POST " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const std::string& h : headers) request += h + "\r\n";
  request += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
  request += body;
  for (std::size_t sent = 0; sent < request.size();) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<std::size_t>(n);
  }
  std::string raw;
  char buffer[4096];
  for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) raw.append(buffer, static_cast<std::size_t>(n));
  ::close(fd);
  const auto head_end = raw.find("\r\n\r\n");
  if (raw.size() < 12 || head_end == std::string::npos) return reply;
  reply.status = std::stoi(raw.substr(9, 3));
  const std::string head = raw.substr(0, head_end);
  if (auto at = head.find("Content-Type: "); at != std::string::npos) {
    reply.content_type = head.substr(at + 14, head.find("\r\n", at) - at - 14);
  }
  reply.body = raw.substr(head_end + 4);
  return reply;
}

// rpc_message reads google.rpc.Status{code = 1, message = 2} as written by the receiver (short
// messages: one-byte lengths).
std::pair<int, std::string> rpc_status(const std::string& body) {
  if (body.size() < 4 || body[0] != 0x08 || body[2] != 0x12) return {-1, body};
  return {body[1], body.substr(4, static_cast<unsigned char>(body[3]))};
}

ExportRequest sample_request(std::uint8_t n, std::uint64_t start_ns) {
  Span root;
  root.trace_id[0] = n;
  root.trace_id[15] = 1;
  root.span_id[0] = 1;
  root.name = "chat sim";
  root.kind = SpanKind::kServer;
  root.start_unix_ns = start_ns;
  root.end_unix_ns = start_ns + 400'000'000;
  root.attributes = {{"gen_ai.request.model", std::string("sim")}, {"gen_ai.usage.output_tokens", std::int64_t{12}},
                     {"gen_ai.latency.e2e", 0.4}, {"inferscope.streamed", true},
                     {"gen_ai.response.finish_reasons", StringList{"stop"}}};
  root.status = {StatusCode::kError, "engine failed"};
  Span decode;
  decode.trace_id = root.trace_id;
  decode.span_id[0] = 2;
  decode.parent_span_id = root.span_id;
  decode.name = "decode";
  decode.start_unix_ns = start_ns + 100'000'000;
  decode.end_unix_ns = root.end_unix_ns;
  decode.attributes = {{"inferscope.stage", std::string("decode")}};
  ExportRequest r;
  r.resources.push_back({.resource_attributes = {{"service.name", std::string("inferscope-serve")}},
                         .scopes = {{.scope_name = "inferscope", .scope_version = "", .spans = {decode, root}}}});
  return r;
}

class TraceReceiverTest : public ::testing::Test {
 protected:
  void start(TraceReceiverOptions options = {}, bool writer = true) {
    auto store = TraceStore::open({.path = (dir_.path() / "traces.db").string()});
    ASSERT_TRUE(store) << store.error().message;
    store_ = std::move(*store);
    receiver_ = std::make_unique<TraceReceiver>(*store_, registry_, options);
    add_trace_routes(router_, *receiver_);
    auto server = net::HttpServer::start({.host = "127.0.0.1", .port = 0, .io_threads = 1}, router_.handler());
    ASSERT_TRUE(server) << server.error().message;
    server_ = std::move(*server);
    if (writer) {
      ASSERT_TRUE(receiver_->start());
    }
  }
  void TearDown() override {
    if (server_) server_->stop();
    if (receiver_) receiver_->stop();
  }
  std::uint16_t port() const { return server_->port(); }
  std::string url(std::string_view path) const { return "http://127.0.0.1:" + std::to_string(port()) + std::string(path); }
  // metric reads one series of the registry; `reason` selects the label of that name.
  std::optional<double> metric(std::string_view name, std::string_view reason = {}) {
    const auto exposition = testing::scrape(registry_);
    return reason.empty() ? metrics::value_of(exposition, name, {}) : metrics::value_of(exposition, name, {{"reason", reason}});
  }
  RawReply post(const std::string& body, std::vector<std::string> headers = {"Content-Type: application/x-protobuf"}) {
    return raw_post(port(), "/v1/traces", headers, body);
  }

  testing::TempDir dir_{"trace-receiver"};
  metrics::Registry registry_;
  net::Router router_;
  std::unique_ptr<TraceStore> store_;
  std::unique_ptr<TraceReceiver> receiver_;
  std::unique_ptr<net::HttpServer> server_;
};

// Tests that a protobuf request is answered with an empty ExportTraceServiceResponse and its
// trace comes back from both query routes with every field of the contract.
TEST_F(TraceReceiverTest, StoresAProtobufRequestAndAnswersBothRoutes) {
  start();
  const std::uint64_t start_ns = 1'800'000'000'123'456'789ULL;
  const RawReply reply = post(encode_export_request(sample_request(0xaa, start_ns)));
  EXPECT_EQ(reply.status, 200);
  EXPECT_EQ(reply.content_type, "application/x-protobuf");
  EXPECT_EQ(reply.body, "");
  json listed;
  ASSERT_TRUE(testing::wait_until(
      [&] {
        auto r = net::blocking_http_request("GET", url("/api/traces"));
        if (!r || r->status != 200) return false;
        listed = json::parse(r->body);
        return !listed["traces"].empty();
      },
      std::chrono::seconds(5)));
  ASSERT_EQ(listed["traces"].size(), 1u);
  const json& t = listed["traces"][0];
  const std::string id = "aa00000000000000000000000000000" "1";
  EXPECT_EQ(t["trace_id"], id);
  EXPECT_EQ(t["job"], "inferscope-serve");
  EXPECT_EQ(t["model"], "sim");
  EXPECT_EQ(t["name"], "chat sim");
  EXPECT_DOUBLE_EQ(t["start"].get<double>(), static_cast<double>(start_ns) / 1e9);
  EXPECT_DOUBLE_EQ(t["duration_s"].get<double>(), 0.4);
  EXPECT_EQ(t["status"], "error");
  EXPECT_DOUBLE_EQ(t["stages"]["decode"].get<double>(), 0.3);

  auto one = net::blocking_http_request("GET", url("/api/traces/" + id));
  ASSERT_TRUE(one);
  ASSERT_EQ(one->status, 200) << one->body;
  const json trace = json::parse(one->body);
  EXPECT_EQ(trace["trace_id"], id);
  ASSERT_EQ(trace["spans"].size(), 2u);
  const json& root = trace["spans"][0];  // by start time
  EXPECT_EQ(root["span_id"], "0100000000000000");
  EXPECT_EQ(root["parent_span_id"], "");
  EXPECT_EQ(root["kind"], "server");
  EXPECT_EQ(root["status"], "error");
  EXPECT_EQ(root["service"], "inferscope-serve");
  EXPECT_EQ(root["start_unix_ns"].get<std::uint64_t>(), start_ns);
  EXPECT_EQ(root["end_unix_ns"].get<std::uint64_t>(), start_ns + 400'000'000);
  EXPECT_EQ(root["attributes"]["gen_ai.usage.output_tokens"], 12);
  EXPECT_TRUE(root["attributes"]["gen_ai.usage.output_tokens"].is_number_integer());
  EXPECT_DOUBLE_EQ(root["attributes"]["gen_ai.latency.e2e"].get<double>(), 0.4);
  EXPECT_EQ(root["attributes"]["inferscope.streamed"], true);
  EXPECT_EQ(root["attributes"]["gen_ai.response.finish_reasons"], json::array({"stop"}));
  const json& decode = trace["spans"][1];
  EXPECT_EQ(decode["parent_span_id"], "0100000000000000");
  EXPECT_EQ(decode["kind"], "internal");
  EXPECT_EQ(decode["status"], "unset");
  EXPECT_EQ(metric("inferscope_up_trace_spans_received_total"), 2.0);
  EXPECT_TRUE(testing::wait_until([&] { return metric("inferscope_up_traces_stored_total") == 1.0; },
                                  std::chrono::seconds(2)));
}

// Tests that a gzip body is inflated, and that one inflating past the limit is refused with 413
// before it is decoded.
TEST_F(TraceReceiverTest, AcceptsGzipAndRefusesABodyInflatingPastTheLimit) {
  start({.max_body_bytes = 1 << 20});
  const RawReply reply = post(metrics::gzip_compress(encode_export_request(sample_request(0xbb, 1'800'000'000'000'000'000ULL))),
                              {"Content-Type: application/x-protobuf", "Content-Encoding: gzip"});
  EXPECT_EQ(reply.status, 200);
  EXPECT_TRUE(testing::wait_until(
      [&] {
        auto r = net::blocking_http_request("GET", url("/api/traces/bb000000000000000000000000000001"));
        return r && r->status == 200;
      },
      std::chrono::seconds(5)));
  const RawReply bomb = post(metrics::gzip_compress(std::string(2 << 20, '\0')),
                             {"Content-Type: application/x-protobuf", "Content-Encoding: gzip"});
  EXPECT_EQ(bomb.status, 413);
  EXPECT_EQ(rpc_status(bomb.body).first, 8);
  const RawReply corrupt = post("not gzip at all", {"Content-Type: application/x-protobuf", "Content-Encoding: gzip"});
  EXPECT_EQ(corrupt.status, 400);
  EXPECT_EQ(metric("inferscope_up_trace_requests_rejected_total", "too_large"), 1.0);
  EXPECT_EQ(metric("inferscope_up_trace_requests_rejected_total", "malformed"), 1.0);
}

// Tests the refusals: malformed protobuf → 400 INVALID_ARGUMENT naming the decoder's error, a
// media type that is neither protobuf nor JSON, or another encoding → 415, each counted by reason.
TEST_F(TraceReceiverTest, RefusesMalformedAndUnsupportedBodies) {
  start();
  const RawReply bad = post("\x0a\x05\x01");  // a length past the end
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.content_type, "application/x-protobuf");
  const auto [code, message] = rpc_status(bad.body);
  EXPECT_EQ(code, 3);
  EXPECT_NE(message.find("cannot decode OTLP traces"), std::string::npos) << message;
  const RawReply text = post("{}", {"Content-Type: text/plain"});
  EXPECT_EQ(text.status, 415);
  EXPECT_EQ(text.content_type, "application/x-protobuf");
  EXPECT_NE(rpc_status(text.body).second.find("application/json"), std::string::npos);
  const RawReply brotli = post("x", {"Content-Type: application/x-protobuf", "Content-Encoding: br"});
  EXPECT_EQ(brotli.status, 415);
  EXPECT_EQ(metric("inferscope_up_trace_requests_rejected_total", "malformed"), 1.0);
  EXPECT_EQ(metric("inferscope_up_trace_requests_rejected_total", "unsupported"), 2.0);
  EXPECT_EQ(metric("inferscope_up_trace_spans_received_total"), 0.0);
}

// sample_json writes sample_request's spans as the OTLP JSON encoding: hex ids (the trace id in
// upper case), times as decimal strings, enums as integers.
std::string sample_json(std::uint8_t n, std::uint64_t start_ns) {
  const ExportRequest r = sample_request(n, start_ns);
  const Span& decode = r.resources[0].scopes[0].spans[0];
  const Span& root = r.resources[0].scopes[0].spans[1];
  std::string trace_id = to_hex(root.trace_id);
  for (char& c : trace_id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto attribute = [](std::string_view key, const json& value) { return json{{"key", key}, {"value", value}}; };
  json root_json{{"traceId", trace_id}, {"spanId", to_hex(root.span_id)}, {"name", root.name}, {"kind", 2},
                 {"startTimeUnixNano", std::to_string(root.start_unix_ns)},
                 {"endTimeUnixNano", std::to_string(root.end_unix_ns)},
                 {"attributes", json::array({attribute("gen_ai.request.model", {{"stringValue", "sim"}}),
                                             attribute("gen_ai.usage.output_tokens", {{"intValue", "12"}}),
                                             attribute("gen_ai.latency.e2e", {{"doubleValue", 0.4}}),
                                             attribute("inferscope.streamed", {{"boolValue", true}}),
                                             attribute("gen_ai.response.finish_reasons",
                                                       {{"arrayValue", {{"values", {{{"stringValue", "stop"}}}}}}})})},
                 {"status", {{"code", 2}, {"message", "engine failed"}}}};
  json decode_json{{"traceId", trace_id}, {"spanId", to_hex(decode.span_id)}, {"parentSpanId", to_hex(root.span_id)},
                   {"name", decode.name}, {"kind", 1}, {"startTimeUnixNano", std::to_string(decode.start_unix_ns)},
                   {"endTimeUnixNano", decode.end_unix_ns},
                   {"attributes", json::array({attribute("inferscope.stage", {{"stringValue", "decode"}})})}};
  json resource{{"attributes", json::array({attribute("service.name", {{"stringValue", "inferscope-serve"}})})}};
  json scope{{"scope", {{"name", "inferscope"}}}, {"spans", json::array({decode_json, root_json})}};
  return json{{"resourceSpans", json::array({{{"resource", resource}, {"scopeSpans", json::array({scope})}}})}}.dump();
}

// Tests OTLP JSON beside protobuf: answered {} in application/json, and the trace stored is the
// one the protobuf request of the same spans stores (same ids, times, kinds, status, attributes).
TEST_F(TraceReceiverTest, StoresAJsonRequestAsItStoresTheProtobufOne) {
  start();
  const std::uint64_t start_ns = 1'800'000'000'123'456'789ULL;
  const RawReply reply = post(sample_json(0xa1, start_ns), {"Content-Type: application/json; charset=utf-8"});
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.content_type, "application/json");
  EXPECT_EQ(json::parse(reply.body, nullptr, false), json::object());
  ASSERT_EQ(post(encode_export_request(sample_request(0xa2, start_ns))).status, 200);
  const auto stored = [&](const std::string& id) {
    json trace;
    EXPECT_TRUE(testing::wait_until(
        [&] {
          auto r = net::blocking_http_request("GET", url("/api/traces/" + id));
          if (!r || r->status != 200) return false;
          trace = json::parse(r->body);
          return true;
        },
        std::chrono::seconds(5)));
    return trace;
  };
  json from_json = stored("a1000000000000000000000000000001");
  json from_protobuf = stored("a2000000000000000000000000000001");
  ASSERT_EQ(from_json["spans"].size(), 2u) << from_json.dump();
  from_json.erase("trace_id");
  from_protobuf.erase("trace_id");
  EXPECT_EQ(from_json, from_protobuf);
  EXPECT_EQ(from_json["spans"][0]["start_unix_ns"].get<std::uint64_t>(), start_ns);
  EXPECT_EQ(from_json["spans"][0]["attributes"]["gen_ai.usage.output_tokens"], 12);
  EXPECT_EQ(metric("inferscope_up_trace_spans_received_total"), 4.0);
}

// Tests JSON refusals: answered in JSON (google.rpc.Status as {"code", "message"}), 400 for text
// that is not JSON or the wrong shape, 413 past the limit, a gzip JSON body accepted; the
// receiver keeps serving after each.
TEST_F(TraceReceiverTest, AnswersJsonErrorsInJson) {
  start({.max_body_bytes = 1 << 16});
  const std::vector<std::string> json_type = {"Content-Type: application/json"};
  const auto check = [&](const std::string& body, int status, std::string_view want) {
    const RawReply r = post(body, json_type);
    EXPECT_EQ(r.status, status) << body;
    EXPECT_EQ(r.content_type, "application/json");
    const json answer = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(answer.is_object()) << r.body;
    EXPECT_EQ(answer["code"], status == 413 ? 8 : 3) << r.body;
    EXPECT_NE(answer["message"].get<std::string>().find(want), std::string::npos) << r.body;
  };
  check("{\"resourceSpans\": [", 400, "not valid JSON");
  check(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"AAECAwQFBgcICQoLDA0ODw==","spanId":"0000000000000002"}]}]}]})",
        400, "traceId has 24 characters");
  check(R"({"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"00000000000000000000000000000001","spanId":"0000000000000002","kind":"SPAN_KIND_SERVER"}]}]}]})",
        400, "kind is given by name");
  check(std::string(1 << 17, ' '), 413, "body larger than");
  const RawReply gzipped = post(metrics::gzip_compress(sample_json(0xa3, 1'800'000'000'000'000'000ULL)),
                                {"Content-Type: application/json", "Content-Encoding: gzip"});
  EXPECT_EQ(gzipped.status, 200) << gzipped.body;
  EXPECT_EQ(metric("inferscope_up_trace_requests_rejected_total", "malformed"), 3.0);
  EXPECT_EQ(metric("inferscope_up_trace_requests_rejected_total", "too_large"), 1.0);
  EXPECT_EQ(metric("inferscope_up_trace_spans_received_total"), 2.0);
}

// Tests a full queue answered to a JSON request: partialSuccess with rejectedSpans (an int64, so
// a decimal string) and an errorMessage.
TEST_F(TraceReceiverTest, AFullQueueAnswersAJsonPartialSuccess) {
  start({.queue_spans = 3}, /*writer=*/false);
  const std::string body = sample_json(0xa4, 1'800'000'000'000'000'000ULL);  // 2 spans
  ASSERT_EQ(post(body, {"Content-Type: application/json"}).body, "{}");
  const RawReply full = post(body, {"Content-Type: application/json"});
  EXPECT_EQ(full.status, 200);
  const json answer = json::parse(full.body, nullptr, false);
  EXPECT_EQ(answer["partialSuccess"]["rejectedSpans"], "2") << full.body;
  EXPECT_NE(answer["partialSuccess"]["errorMessage"].get<std::string>().find("queue is full"), std::string::npos);
}

// Tests that with the writer stalled a full queue answers 200 with partial_success (rejected
// spans) at once and counts the spans as dropped, never waiting.
TEST_F(TraceReceiverTest, AFullQueueDropsAndCountsInsteadOfWaiting) {
  start({.queue_spans = 3}, /*writer=*/false);
  const std::string body = encode_export_request(sample_request(0xcc, 1'800'000'000'000'000'000ULL));  // 2 spans
  EXPECT_EQ(post(body).body, "");
  const RawReply full = post(body);
  EXPECT_EQ(full.status, 200);
  // ExportTraceServiceResponse{partial_success{rejected_spans: 2, error_message}}
  ASSERT_GE(full.body.size(), 4u);
  EXPECT_EQ(full.body[0], 0x0a);
  EXPECT_EQ(full.body[2], 0x08);
  EXPECT_EQ(full.body[3], 2);
  EXPECT_EQ(metric("inferscope_up_trace_spans_dropped_total", "queue_full"), 2.0);
  EXPECT_EQ(metric("inferscope_up_trace_spans_received_total"), 4.0);
  ASSERT_TRUE(receiver_->start());  // the queued request is written once the writer runs
  EXPECT_TRUE(testing::wait_until([&] { return metric("inferscope_up_traces_stored_total") == 1.0; },
                                  std::chrono::seconds(5)));
}

// Tests the query routes' errors (OpenAI error JSON) and filters.
TEST_F(TraceReceiverTest, QueryErrorsAndFilters) {
  start();
  ASSERT_EQ(post(encode_export_request(sample_request(0xdd, 1'800'000'000'000'000'000ULL))).status, 200);
  ASSERT_TRUE(testing::wait_until([&] { return metric("inferscope_up_traces_stored_total") == 1.0; },
                                  std::chrono::seconds(5)));
  auto get = [&](const std::string& path) {
    auto r = net::blocking_http_request("GET", url(path));
    EXPECT_TRUE(r);
    return r ? *r : net::HttpReply{};
  };
  EXPECT_EQ(get("/api/traces/DD000000000000000000000000000001").status, 400);
  EXPECT_EQ(get("/api/traces/dd00").status, 400);
  const net::HttpReply unknown = get("/api/traces/00000000000000000000000000000001");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(json::parse(unknown.body)["error"]["message"].get<std::string>().find("no trace"), std::string::npos);
  EXPECT_EQ(get("/api/traces?limit=0").status, 400);
  EXPECT_EQ(get("/api/traces?limit=1001").status, 400);
  EXPECT_EQ(get("/api/traces?min_duration=soon").status, 400);
  EXPECT_EQ(get("/api/traces?since=yesterday").status, 400);
  auto count = [&](const std::string& query) { return json::parse(get("/api/traces?" + query).body)["traces"].size(); };
  EXPECT_EQ(count("min_duration=300ms"), 1u);
  EXPECT_EQ(count("min_duration=0.5"), 0u);
  EXPECT_EQ(count("job=inferscope-serve&model=sim"), 1u);
  EXPECT_EQ(count("model=other"), 0u);
  EXPECT_EQ(count("since=1800000001"), 0u);
  EXPECT_EQ(count("since=1799999999&limit=1000"), 1u);
}

// Tests --otlp-forward: an accepted body reaches a second, independent OTLP receiver
// (tests/trace/otlp_receiver.js, decoding with the OpenTelemetry protobuf definitions from npm)
// with every span, while up stores it too; a backend that is down costs dropped, counted spans.
TEST_F(TraceReceiverTest, ForwardsWhatItReceivesToASecondReceiver) {
  ASSERT_TRUE(testing::peers_installed({testing::kNode}));
  testing::TestProcess node({.binary = "/usr/bin/node",
                             .args = {std::string(INFERSCOPE_SOURCE_DIR) + "/tests/trace/otlp_receiver.js"},
                             .env = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES},
                             .stdout_file = dir_.path() / "node.out",
                             .stderr_file = dir_.path() / "node.err"});
  ASSERT_TRUE(node.started()) << node.start_error();
  int node_port = 0;
  ASSERT_TRUE(testing::wait_until(
      [&] {
        const std::string out = node.stdout_text();
        const auto at = out.find("{\"port\":");
        if (at != std::string::npos) node_port = std::atoi(out.c_str() + at + 8);
        return node_port != 0;
      },
      std::chrono::seconds(30)))
      << node.stderr_text();
  start({.forward_url = "http://127.0.0.1:" + std::to_string(node_port) + "/v1/traces"});
  const RawReply reply =
      post(metrics::gzip_compress(encode_export_request(sample_request(0xee, 1'800'000'000'000'000'000ULL))),
           {"Content-Type: application/x-protobuf", "Content-Encoding: gzip"});
  ASSERT_EQ(reply.status, 200);
  auto lines_with = [&](std::string_view part) {
    std::size_t n = 0;
    const std::string out = node.stdout_text();
    for (std::size_t at = out.find(part); at != std::string::npos; at = out.find(part, at + 1)) ++n;
    return n;
  };
  EXPECT_TRUE(testing::wait_until([&] { return lines_with("ee000000000000000000000000000001") == 2; },
                                  std::chrono::seconds(10)))
      << node.stdout_text() << node.stderr_text();
  EXPECT_EQ(lines_with("\"error\""), 0u) << node.stdout_text();
  EXPECT_TRUE(testing::wait_until([&] { return metric("inferscope_up_trace_forwarded_spans_total") == 2.0; },
                                  std::chrono::seconds(5)));
  EXPECT_TRUE(testing::wait_until([&] { return metric("inferscope_up_traces_stored_total") == 1.0; },
                                  std::chrono::seconds(5)));
}

// Tests that forwarding to a backend nobody answers drops and counts, and that an unusable URL
// fails start() naming the flag.
TEST_F(TraceReceiverTest, ForwardingFailuresAreCounted) {
  start({.forward_url = "http://127.0.0.1:1/v1/traces"});
  ASSERT_EQ(post(encode_export_request(sample_request(0x11, 1'800'000'000'000'000'000ULL))).status, 200);
  EXPECT_TRUE(testing::wait_until(
      [&] { return metric("inferscope_up_trace_forward_dropped_spans_total", "unavailable") == 2.0; },
      std::chrono::seconds(15)));
  EXPECT_TRUE(testing::wait_until([&] { return metric("inferscope_up_traces_stored_total") == 1.0; },
                                  std::chrono::seconds(5)));
  metrics::Registry other;
  TraceReceiver bad(*store_, other, {.forward_url = "ftp://example"});
  auto started = bad.start();
  ASSERT_FALSE(started);
  EXPECT_NE(started.error().message.find("--otlp-forward"), std::string::npos) << started.error().message;
}

}  // namespace
}  // namespace inferscope::trace
