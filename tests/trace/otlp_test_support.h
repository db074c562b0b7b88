// File: otlp_test_support.h
// The trace tests' harness: tests/trace/otlp_receiver.js (a Node OTLP/HTTP receiver decoding with
// the OpenTelemetry protobuf definitions from npm) run as a child process and its spans read back
// as JSON; an in-process `serve` with tracing options; requests carrying a `traceparent`; and
// helpers to read span attributes and the trace ids of a /metrics' exemplars. Used by
// serve_otlp_integration_test and gateway_otlp_integration_test. Example:
//   Receiver receiver; Serve serve(receiver.url(), 1.0); serve.post("/v1/completions", body, kIncoming);
//   receiver.wait_spans(7); for (const json& s : of_trace(receiver.spans(), id)) ...
// Not thread-safe.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "serve/serve_test_support.h"
#include "support/peers.h"
#include "support/temp_dir.h"
#include "support/test_process.h"
#include "serve/serve_metrics.h"
#include "support/wait_until.h"

namespace inferscope::trace {

using namespace std::chrono_literals;
using nlohmann::json;
using serve::testing::HttpReply;
namespace http = boost::beast::http;

inline std::vector<json> json_lines(const std::string& text) {
  std::vector<json> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string::npos) break;  // a line still being written
    auto line = json::parse(text.substr(start, end - start), nullptr, false);
    if (!line.is_discarded()) out.push_back(std::move(line));
    start = end + 1;
  }
  return out;
}

// post_traced POSTs `body` to 127.0.0.1:`port` with a `traceparent` header (none when empty).
inline HttpReply post_traced(std::uint16_t port, const std::string& target, const std::string& body,
                             const std::string& traceparent) {
  HttpReply reply;
  if (traceparent.empty()) return serve::testing::request(port, http::verb::post, target, body);
  // Beast has no field enum for traceparent: send the request by hand.
  boost::asio::io_context io;
  serve::testing::tcp::socket socket(io);
  serve::testing::connect_with_timeouts(socket, port);
  http::request<http::string_body> req{http::verb::post, target, 11};
  req.set(http::field::host, "127.0.0.1");
  req.set(http::field::content_type, "application/json");
  req.set("traceparent", traceparent);
  req.body() = body;
  req.prepare_payload();
  http::write(socket, req);
  boost::beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(socket, buffer, res);
  reply.status = static_cast<int>(res.result_int());
  reply.body = res.body();
  return reply;
}

// Receiver runs otlp_receiver.js and reads what it printed.
class Receiver {
 public:
  Receiver()
      : dir_("otlp"),
        process_({.binary = "/usr/bin/env",
                  .args = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES, "node",
                           std::string(INFERSCOPE_SOURCE_DIR) + "/tests/trace/otlp_receiver.js"},
                  .stdout_file = dir_.path() / "out",
                  .stderr_file = dir_.path() / "err"}) {}

  // url waits for the receiver's port line; empty on failure.
  std::string url() {
    int port = 0;
    testing::wait_until([&] {
      for (const json& line : json_lines(process_.stdout_text())) {
        if (line.contains("port")) port = line["port"].get<int>();
      }
      return port != 0;
    }, 30s);
    return port == 0 ? "" : "http://127.0.0.1:" + std::to_string(port) + "/v1/traces";
  }
  std::vector<json> spans() const {
    std::vector<json> out;
    for (json& line : json_lines(process_.stdout_text())) {
      if (line.contains("span")) out.push_back(std::move(line["span"]));
      if (line.contains("error")) ADD_FAILURE() << "the receiver could not decode a POST: " << line.dump();
    }
    return out;
  }
  // wait_spans waits until `count` spans arrived (true) or 20 s passed.
  bool wait_spans(std::size_t count) const {
    return testing::wait_until([&] { return spans().size() >= count; }, 20s);
  }
  // wait_roots waits until `count` root (SERVER) spans arrived (true) or 20 s passed.
  bool wait_roots(std::size_t count) const {
    return testing::wait_until([&] {
      std::size_t roots = 0;
      for (const json& s : spans()) roots += s["kind"] == 2 ? 1 : 0;
      return roots >= count;
    }, 20s);
  }
  std::string log() const { return process_.stdout_text() + process_.stderr_text(); }

 private:
  testing::TempDir dir_;
  testing::TestProcess process_;
};

// Serve runs serve in-process on an ephemeral port, as `inferscope serve --model sim-a
// --time-scale 20 --seed 7` plus the tracing options.
class Serve {
 public:
  explicit Serve(const std::string& endpoint, double sample, std::optional<double> slow_seconds = std::nullopt,
                 bool admin = false) {
    serve::ServerOptions o;
    o.port = 0;
    o.model_names = {"sim-a"};
    o.engine.time_scale = 20;
    o.seed = 7;
    o.enable_admin = admin;
    o.tracing.otlp_endpoint = endpoint;
    o.tracing.policy.sample_ratio = sample;
    o.tracing.policy.slow_seconds = slow_seconds;
    auto server = serve::Server::start(o);
    if (!server) {
      error_ = server.error().message;
      return;
    }
    server_ = std::move(*server);
  }
  std::uint16_t port() const { return server_ ? server_->port() : 0; }
  const std::string& log() const { return error_; }
  HttpReply post(const std::string& target, const std::string& body, const std::string& traceparent = "") {
    return post_traced(port(), target, body, traceparent);
  }
  // stage_sums returns inferscope_stage_duration_seconds_sum per stage, from /metrics.
  std::map<std::string, double> stage_sums() {
    std::map<std::string, double> out;
    HttpReply r = serve::testing::request(port(), http::verb::get, "/metrics");
    auto parsed = metrics::parse_exposition(r.body, metrics::ExpositionTextFormat::kPrometheus004);
    if (!parsed) {
      ADD_FAILURE() << parsed.error().message;
      return out;
    }
    for (const char* stage : {"preprocess", "dependency", "queue", "prefill", "decode", "postprocess", "send"}) {
      out[stage] = serve::testing::stage_totals(*parsed, stage).sum;
    }
    return out;
  }
  // wait_recorded waits until serve recorded `n` requests (metrics and spans handed over).
  bool wait_recorded(std::uint64_t n) { return server_->serve_metrics().wait_requests_recorded(n, 20s); }

 private:
  std::unique_ptr<serve::Server> server_;
  std::string error_;
};

// exemplar_trace_ids returns, per family, the trace_id of every exemplar in the OpenMetrics
// exposition of the /metrics at 127.0.0.1:`port` (serve's, or the gateway's --metrics-port),
// parsed strictly: a malformed exemplar fails the test.
inline std::map<std::string, std::set<std::string>> exemplar_trace_ids(std::uint16_t port) {
  std::map<std::string, std::set<std::string>> out;
  HttpReply r = serve::testing::request(port, http::verb::get, "/metrics", {}, "application/json",
                                        {{http::field::accept, "application/openmetrics-text; version=1.0.0"}});
  auto parsed = metrics::parse_exposition(r.body, metrics::ExpositionTextFormat::kOpenMetrics100);
  if (!parsed) {
    ADD_FAILURE() << parsed.error().message;
    return out;
  }
  for (const auto& family : parsed->families) {
    for (const auto& sample : family.samples) {
      if (!sample.exemplar) continue;
      EXPECT_EQ(sample.exemplar->labels.size(), 1U) << family.name;
      EXPECT_TRUE(sample.exemplar->timestamp_ms.has_value()) << family.name;  // the observation's time
      for (const auto& label : sample.exemplar->labels) {
        EXPECT_EQ(label.name, "trace_id") << family.name;
        out[family.name].insert(label.value);
      }
    }
  }
  return out;
}

inline std::string attr_string(const json& span, const std::string& key) {
  const json& a = span["attributes"];
  return a.contains(key) && a[key].is_string() ? a[key].get<std::string>() : "<missing>";
}
inline long long attr_int(const json& span, const std::string& key) {
  const json& a = span["attributes"];
  return a.contains(key) && a[key].is_object() && a[key].contains("int") ? std::stoll(a[key]["int"].get<std::string>()) : -1;
}
inline double attr_double(const json& span, const std::string& key) {
  const json& a = span["attributes"];
  return a.contains(key) && a[key].is_object() && a[key].contains("double") ? a[key]["double"].get<double>() : -1;
}
inline std::uint64_t ns(const json& span, const char* field) { return std::stoull(span[field].get<std::string>()); }

inline std::vector<json> of_trace(const std::vector<json>& spans, const std::string& trace_id) {
  std::vector<json> out;
  for (const json& s : spans) {
    if (s["traceId"] == trace_id) out.push_back(s);
  }
  return out;
}

inline const json* root_of(const std::vector<json>& spans) {
  for (const json& s : spans) {
    if (s["kind"] == 2) return &s;
  }
  return nullptr;
}

}  // namespace inferscope::trace
