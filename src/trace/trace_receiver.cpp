// Receiver: decode on the receive lane, queue, one writer thread into SQLite. The answers follow
// OTLP/HTTP (opentelemetry-proto docs/specification.md): answered in the request's encoding
// (protobuf or JSON, "the same Content-Type in the response as it received"), errors as
// google.rpc.Status, a full queue as a partial success (not retried by exporters).
#include "trace/trace_receiver.h"

#include <spdlog/spdlog.h>
#include <zlib.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

#include "common/prom_duration.h"
#include "net/query_parameter.h"
#include "trace/otlp_json.h"

namespace inferscope::trace {
namespace {

using nlohmann::json;

constexpr std::string_view kProtobuf = "application/x-protobuf";
constexpr std::string_view kJson = "application/json";
// google.rpc.Code values used in error bodies.
constexpr int kInvalidArgument = 3;
constexpr int kResourceExhausted = 8;
constexpr int kUnimplemented = 12;

void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_string_field(std::string& out, std::uint32_t number, std::string_view text) {
  put_varint(out, (number << 3) | 2);
  put_varint(out, text.size());
  out += text;
}

// Encoding is how a request's body and its answer are written.
enum class Encoding { kProtobuf, kJson };

// media_type is a Content-Type without its parameters (`application/json; charset=utf-8`), lowercased.
std::string media_type(std::string_view header) {
  header = header.substr(0, header.find(';'));
  while (!header.empty() && header.back() == ' ') header.remove_suffix(1);
  std::string type(header);
  for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return type;
}

std::string_view content_type_of(Encoding encoding) { return encoding == Encoding::kJson ? kJson : kProtobuf; }

net::Response answer(Encoding encoding, int status, std::string body) {
  net::Response r;
  r.status = status;
  r.content_type = std::string(content_type_of(encoding));
  r.body = std::move(body);
  return r;
}

// success answers an empty ExportTraceServiceResponse (no partial_success: everything accepted).
net::Response success(Encoding encoding) { return answer(encoding, 200, encoding == Encoding::kJson ? "{}" : ""); }

// rpc_status answers with google.rpc.Status{code = 1, message = 2}.
net::Response rpc_status(Encoding encoding, int http_status, int code, std::string_view message) {
  if (encoding == Encoding::kJson) {
    return answer(encoding, http_status,
                  json{{"code", code}, {"message", message}}.dump(-1, ' ', false, json::error_handler_t::replace));
  }
  std::string body;
  put_varint(body, 1 << 3);
  put_varint(body, static_cast<std::uint64_t>(code));
  put_string_field(body, 2, message);
  return answer(encoding, http_status, std::move(body));
}

// partial_success answers ExportTraceServiceResponse{partial_success = 1 {rejected_spans = 1, error_message = 2}}
// (in JSON rejectedSpans is an int64, so a decimal string).
net::Response partial_success(Encoding encoding, std::size_t rejected, std::string_view message) {
  if (encoding == Encoding::kJson) {
    const json body{{"partialSuccess", {{"rejectedSpans", std::to_string(rejected)}, {"errorMessage", message}}}};
    return answer(encoding, 200, body.dump());
  }
  std::string inner;
  put_varint(inner, 1 << 3);
  put_varint(inner, rejected);
  put_string_field(inner, 2, message);
  std::string body;
  put_string_field(body, 1, inner);
  return answer(encoding, 200, std::move(body));
}

enum class Inflate { kOk, kTooLarge, kCorrupt };

// gunzip inflates one gzip body into `out`, stopping once it passes `limit` (a small body may
// inflate to gigabytes).
Inflate gunzip(std::string_view in, std::size_t limit, std::string& out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Inflate::kCorrupt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  char chunk[64 * 1024];
  int rc = Z_OK;
  Inflate result = Inflate::kOk;
  while (rc != Z_STREAM_END) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof(chunk);
    rc = inflate(&z, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      result = Inflate::kCorrupt;
      break;
    }
    out.append(chunk, sizeof(chunk) - z.avail_out);
    if (out.size() > limit) {
      result = Inflate::kTooLarge;
      break;
    }
    if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) {  // input ended inside the stream
      result = Inflate::kCorrupt;
      break;
    }
  }
  inflateEnd(&z);
  return result;
}

std::uint64_t unix_ns_now() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

std::string_view kind_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::kInternal: return "internal";
    case SpanKind::kServer: return "server";
    case SpanKind::kClient: return "client";
    case SpanKind::kProducer: return "producer";
    case SpanKind::kConsumer: return "consumer";
    case SpanKind::kUnspecified: break;
  }
  return "unspecified";
}

std::string_view status_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk: return "ok";
    case StatusCode::kError: return "error";
    case StatusCode::kUnset: break;
  }
  return "unset";
}

bool is_trace_id_hex(std::string_view text) {
  if (text.size() != 32) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// seconds_parameter reads a duration as Prometheus writes it ("2s", "1m30s") or plain seconds ("0.5").
std::optional<double> seconds_parameter(const std::string& text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (!std::isfinite(value) || value < 0) return std::nullopt;
    return value;
  }
  auto d = common::parse_prom_duration(text);
  if (!d) return std::nullopt;
  return std::chrono::duration<double>(*d).count();
}

}  // namespace

TraceReceiver::TraceReceiver(TraceStore& store, metrics::Registry& registry, TraceReceiverOptions options)
    : store_(store), options_(std::move(options)) {
  spans_received_ = registry
                        .counter({.name = "inferscope_up_trace_spans_received_total",
                                  .help = "Spans in OTLP requests up's receiver accepted (POST /v1/traces)."})
                        .with({});
  auto& dropped = registry.counter(
      {.name = "inferscope_up_trace_spans_dropped_total",
       .help = "Accepted spans never stored: queue_full (the writer's queue had no room), store_error (SQLite failed).",
       .label_names = {"reason"}});
  spans_dropped_queue_full_ = dropped.with({"queue_full"});
  spans_dropped_store_error_ = dropped.with({"store_error"});
  auto& rejected = registry.counter(
      {.name = "inferscope_up_trace_requests_rejected_total",
       .help = "OTLP requests refused: malformed (400), too_large (413, decompressed), unsupported (415: neither "
               "application/x-protobuf nor application/json, or an encoding other than gzip).",
       .label_names = {"reason"}});
  rejected_malformed_ = rejected.with({"malformed"});
  rejected_too_large_ = rejected.with({"too_large"});
  rejected_unsupported_ = rejected.with({"unsupported"});
  traces_stored_ = registry
                       .counter({.name = "inferscope_up_traces_stored_total",
                                 .help = "Traces whose root arrived and that the store kept (slowest of their window, "
                                         "or failed)."})
                       .with({});
  auto& traces_dropped = registry.counter(
      {.name = "inferscope_up_traces_dropped_total",
       .help = "Traces not kept or removed: not_slowest (faster than every kept one of a full window), evicted "
               "(replaced by a slower one), retention (older than traces.retention), max_mb (oldest windows past "
               "traces.max_mb).",
       .label_names = {"reason"}});
  traces_not_slowest_ = traces_dropped.with({"not_slowest"});
  traces_evicted_ = traces_dropped.with({"evicted"});
  traces_retention_ = traces_dropped.with({"retention"});
  traces_max_mb_ = traces_dropped.with({"max_mb"});
  if (!options_.forward_url.empty()) {
    forwarded_ = registry
                     .counter({.name = "inferscope_up_trace_forwarded_spans_total",
                               .help = "Spans up forwarded to --otlp-forward (answered 2xx)."})
                     .with({});
    auto& forward_dropped = registry.counter(
        {.name = "inferscope_up_trace_forward_dropped_spans_total",
         .help = "Spans not forwarded to --otlp-forward: queue_full (no room in its queue), rejected (a non-2xx "
                 "answer), unavailable (no answer), shutdown (still queued when up stopped).",
         .label_names = {"reason"}});
    forward_dropped_queue_full_ = forward_dropped.with({"queue_full"});
    forward_dropped_rejected_ = forward_dropped.with({"rejected"});
    forward_dropped_unavailable_ = forward_dropped.with({"unavailable"});
    forward_dropped_shutdown_ = forward_dropped.with({"shutdown"});
  }
  store_bytes_ = registry
                     .gauge({.name = "inferscope_up_trace_store_bytes",
                             .help = "Bytes of the trace store's pages in use (bounded by traces.max_mb)."})
                     .with({});
}

TraceReceiver::~TraceReceiver() { stop(); }

Result<void> TraceReceiver::start() {
  if (!options_.forward_url.empty()) {
    auto client = net::BlockingClient::create(options_.forward_url, {.timeout = options_.forward_timeout},
                                              "--otlp-forward");
    if (!client) return client.error();
    forwarder_ = std::thread([this, c = std::move(*client)]() mutable { forward_loop(std::move(c)); });
  }
  if (auto bytes = store_.used_bytes()) store_bytes_.set(static_cast<double>(*bytes));
  writer_ = std::thread([this] { write_loop(); });
  return {};
}

void TraceReceiver::queue_forward(std::string_view body, std::string_view content_type, std::size_t spans) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || forward_queued_bytes_ + body.size() > options_.forward_queue_bytes) {
      forward_dropped_queue_full_.add(static_cast<double>(spans));
      return;
    }
    forward_queued_bytes_ += body.size();
    forward_queue_.push_back({std::string(body), content_type, spans});
  }
  forward_wake_.notify_one();
}

void TraceReceiver::forward_loop(net::BlockingClient client) {
  std::unique_lock lock(mutex_);
  for (;;) {
    forward_wake_.wait(lock, [this] { return stopping_ || !forward_queue_.empty(); });
    if (stopping_) {  // a backend that hangs must not hold up's stop: what is left is counted
      for (const Forward& left : forward_queue_) forward_dropped_shutdown_.add(static_cast<double>(left.spans));
      forward_queue_.clear();
      forward_queued_bytes_ = 0;
      return;
    }
    Forward next = std::move(forward_queue_.front());
    forward_queue_.pop_front();
    forward_queued_bytes_ -= next.body.size();
    lock.unlock();
    auto reply = client.request("POST", "", next.body, next.content_type);
    if (!reply) {
      forward_dropped_unavailable_.add(static_cast<double>(next.spans));
    } else if (reply->status / 100 == 2) {
      forwarded_.add(static_cast<double>(next.spans));
    } else {
      forward_dropped_rejected_.add(static_cast<double>(next.spans));
    }
    lock.lock();
  }
}

void TraceReceiver::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  forward_wake_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (forwarder_.joinable()) forwarder_.join();
}

void TraceReceiver::prune(std::uint64_t now_ns) {
  auto pruned = store_.prune(now_ns);
  if (!pruned) {
    spdlog::warn("trace store: {}", pruned.error().message);
    return;
  }
  traces_retention_.add(static_cast<double>(pruned->retention));
  traces_max_mb_.add(static_cast<double>(pruned->max_mb));
  if (auto bytes = store_.used_bytes()) store_bytes_.set(static_cast<double>(*bytes));
}

void TraceReceiver::write_loop() {
  auto next_prune = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait_until(lock, next_prune, [this] { return stopping_ || !queue_.empty(); });
    std::deque<Queued> batch;
    batch.swap(queue_);
    queued_spans_ = 0;
    const bool stopping = stopping_;
    lock.unlock();
    for (const Queued& q : batch) {
      auto added = store_.add(q.request, unix_ns_now());
      if (!added) {
        spans_dropped_store_error_.add(static_cast<double>(q.spans));
        spdlog::warn("trace store: {}", added.error().message);
        continue;
      }
      traces_stored_.add(static_cast<double>(added->stored));
      traces_not_slowest_.add(static_cast<double>(added->not_slowest));
      traces_evicted_.add(static_cast<double>(added->evicted));
    }
    if (std::chrono::steady_clock::now() >= next_prune) {
      prune(unix_ns_now());
      next_prune = std::chrono::steady_clock::now() + options_.prune_interval;
    }
    lock.lock();
    if (stopping && queue_.empty()) return;
  }
}

net::Response TraceReceiver::receive(const net::Request& request) {
  // Protobuf and JSON share the port and the path; Content-Type picks the decoder (OTLP/HTTP
  // "Connection"). Anything else is answered in protobuf, the encoding every OTLP client reads.
  const std::string type = media_type(request.header("content-type"));
  Encoding format = Encoding::kProtobuf;
  if (type == kJson) {
    format = Encoding::kJson;
  } else if (type != kProtobuf) {
    rejected_unsupported_.inc();
    return rpc_status(Encoding::kProtobuf, 415, kUnimplemented,
                      "unsupported Content-Type: send OTLP as application/x-protobuf or application/json");
  }
  const std::string_view encoding = request.header("content-encoding");
  std::string inflated;
  std::string_view body = request.body;
  if (encoding == "gzip") {
    switch (gunzip(request.body, options_.max_body_bytes, inflated)) {
      case Inflate::kTooLarge:
        rejected_too_large_.inc();
        return rpc_status(format, 413, kResourceExhausted,
                          "body larger than " + std::to_string(options_.max_body_bytes) + " bytes once decompressed");
      case Inflate::kCorrupt:
        rejected_malformed_.inc();
        return rpc_status(format, 400, kInvalidArgument, "cannot decompress the gzip body");
      case Inflate::kOk:
        break;
    }
    body = inflated;
  } else if (!encoding.empty() && encoding != "identity") {
    rejected_unsupported_.inc();
    return rpc_status(format, 415, kUnimplemented, "unsupported Content-Encoding: send gzip or none");
  } else if (body.size() > options_.max_body_bytes) {
    rejected_too_large_.inc();
    return rpc_status(format, 413, kResourceExhausted,
                      "body larger than " + std::to_string(options_.max_body_bytes) + " bytes");
  }
  auto decoded = format == Encoding::kJson ? decode_export_request_json(body) : decode_export_request(body);
  if (!decoded) {
    rejected_malformed_.inc();
    return rpc_status(format, 400, kInvalidArgument, decoded.error().message);
  }
  const std::size_t spans = decoded->span_count();
  spans_received_.add(static_cast<double>(spans));
  if (spans == 0) return success(format);
  if (!options_.forward_url.empty()) queue_forward(body, content_type_of(format), spans);
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queued_spans_ + spans > options_.queue_spans) {
      spans_dropped_queue_full_.add(static_cast<double>(spans));
      return partial_success(format, spans, "up's trace queue is full: spans dropped");
    }
    queued_spans_ += spans;
    queue_.push_back({std::move(*decoded), spans});
  }
  wake_.notify_one();
  return success(format);
}

net::Response TraceReceiver::list(const net::Request& request) {
  TraceQuery query;
  if (std::string job = net::query_parameter(request.query, "job"); !job.empty()) query.job = std::move(job);
  if (std::string model = net::query_parameter(request.query, "model"); !model.empty()) query.model = std::move(model);
  if (std::string text = net::query_parameter(request.query, "min_duration"); !text.empty()) {
    auto seconds = seconds_parameter(text);
    if (!seconds) {
      return net::Response::error(net::ApiError::bad_request(
          "'min_duration' must be a duration such as 2s or 500ms, or seconds", "min_duration"));
    }
    query.min_duration_ns = static_cast<std::uint64_t>(std::llround(*seconds * 1e9));
  }
  if (std::string text = net::query_parameter(request.query, "since"); !text.empty()) {
    double since = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), since);
    if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(since) || since < 0) {
      return net::Response::error(net::ApiError::bad_request("'since' must be unix seconds", "since"));
    }
    query.since_unix_ns = static_cast<std::uint64_t>(since * 1e9);
  }
  if (std::string text = net::query_parameter(request.query, "limit"); !text.empty()) {
    int limit = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), limit);
    if (ec != std::errc() || end != text.data() + text.size() || limit < 1 || limit > 1000) {
      return net::Response::error(net::ApiError::bad_request("'limit' must be an integer from 1 to 1000", "limit"));
    }
    query.limit = limit;
  }
  auto traces = store_.list(query);
  if (!traces) return net::Response::error(net::ApiError::server_error(traces.error().message));
  json out = json::array();
  for (const TraceSummary& t : *traces) {
    json stages = json::object();
    for (const auto& [stage, seconds] : t.stages) stages[stage] = seconds;
    out.push_back({{"trace_id", t.trace_id},
                   {"job", t.job},
                   {"model", t.model},
                   {"name", t.name},
                   {"start", static_cast<double>(t.start_unix_ns) / 1e9},
                   {"duration_s", static_cast<double>(t.duration_ns) / 1e9},
                   {"status", t.error ? "error" : "ok"},
                   {"stages", std::move(stages)}});
  }
  return net::Response::json(json{{"traces", std::move(out)}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

net::Response TraceReceiver::trace(const net::Request& request) {
  constexpr std::string_view kPrefix = "/api/traces/";
  const std::string_view id = request.path.substr(std::min(request.path.size(), kPrefix.size()));
  if (!is_trace_id_hex(id)) {
    return net::Response::error(net::ApiError::bad_request("the trace id must be 32 lowercase hex characters"));
  }
  TraceId trace_id{};
  for (std::size_t i = 0; i < trace_id.size(); ++i) {
    std::from_chars(id.data() + 2 * i, id.data() + 2 * i + 2, trace_id[i], 16);
  }
  auto spans = store_.spans(trace_id);
  if (!spans) return net::Response::error(net::ApiError::server_error(spans.error().message));
  if (!*spans) return net::Response::error(net::ApiError::not_found("no trace " + std::string(id) + " in up's store"));
  json out = json::array();
  for (const StoredSpan& s : **spans) {
    out.push_back({{"span_id", to_hex(s.span.span_id)},
                   {"parent_span_id", s.span.is_root() ? std::string() : to_hex(s.span.parent_span_id)},
                   {"name", s.span.name},
                   {"kind", kind_name(s.span.kind)},
                   {"start_unix_ns", s.span.start_unix_ns},
                   {"end_unix_ns", s.span.end_unix_ns},
                   {"status", status_name(s.span.status.code)},
                   {"attributes", attributes_json(s.span.attributes)},
                   {"service", s.service}});
  }
  return net::Response::json(
      json{{"trace_id", std::string(id)}, {"spans", std::move(out)}}.dump(-1, ' ', false, json::error_handler_t::replace));
}

void add_trace_routes(net::Router& router, TraceReceiver& receiver) {
  const TraceReceiverOptions& o = receiver.options();
  // Decoding is CPU work on a lane of its own: a flood of spans fills this lane (503 + Retry-After
  // beyond it, which exporters retry) and never the io threads that answer /metrics and webhooks.
  router.set_lane(o.receive_lane, {.threads = 1, .max_waiting = 64});
  router.set_lane(o.query_lane, {.threads = 2, .max_waiting = 16});
  router.add_blocking("POST", "/v1/traces", [&receiver](const net::Request& r) { return receiver.receive(r); },
                      o.receive_lane);
  router.get_blocking("/api/traces", [&receiver](const net::Request& r) { return receiver.list(r); }, o.query_lane);
  router.add_prefix_blocking("GET", "/api/traces/", [&receiver](const net::Request& r) { return receiver.trace(r); },
                             o.query_lane);
}

}  // namespace inferscope::trace
