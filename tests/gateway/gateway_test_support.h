// File: gateway_test_support.h
// Helpers for the gateway integration tests: an in-process Gateway on 127.0.0.1 port 0 in front
// of given upstream URLs, and its registry scraped through the exposition parser.
// Example: TestGateway g(config_for({serve.url()})); auto r = request(g.port(), http::verb::post, ...);
// Not thread-safe per call.
#pragma once

#include <inferscope/metrics/exposition.h>

#include "gateway/gateway.h"
#include "serve/serve_test_support.h"

namespace inferscope::gateway::testing {

using serve::testing::HttpReply;
using serve::testing::metric;
using serve::testing::request;
namespace http = boost::beast::http;

// config_for returns a gateway config with fast timeouts for tests and the given upstream URLs.
inline GatewayConfig config_for(const std::vector<std::string>& urls) {
  GatewayConfig c;
  c.port = 0;
  c.connect_timeout = std::chrono::milliseconds(2000);
  c.header_timeout = std::chrono::milliseconds(5000);
  c.idle_timeout = std::chrono::milliseconds(5000);
  c.client_header_timeout = std::chrono::milliseconds(2000);
  for (const std::string& url : urls) EXPECT_TRUE(add_upstream_url(c, url)) << url;
  return c;
}

// TestGateway starts a Gateway in-process and stops it when destroyed.
class TestGateway {
 public:
  explicit TestGateway(GatewayConfig config) {
    auto started = Gateway::start(std::move(config));
    if (!started) {
      ADD_FAILURE() << started.error().message;
    } else {
      gateway_ = std::move(*started);
    }
  }
  ~TestGateway() {
    if (gateway_) gateway_->stop();
  }
  bool ok() const { return gateway_ != nullptr; }
  Gateway& gateway() { return *gateway_; }
  std::uint16_t port() const { return gateway_->port(); }
  HttpReply post(const std::string& target, const std::string& body) {
    return request(port(), http::verb::post, target, body);
  }
  // scrape_after waits until `requests` requests are recorded (a request is recorded just after
  // its last byte went to the client, so a client may finish first), then scrapes. A request is
  // counted in inferscope_requests_total after its other observations, so the scrape holds them.
  metrics::ParsedExposition scrape_after(double requests) {
    serve::testing::wait_until([&] { return metric(scrape(), "inferscope_requests_total") >= requests; });
    return scrape();
  }
  // scrape renders and parses the gateway's registry (what /metrics serves).
  metrics::ParsedExposition scrape() {
    auto rendered = metrics::render_scrape(gateway_->registry(), "", "");
    auto parsed = metrics::parse_exposition(rendered.body, metrics::ExpositionTextFormat::kPrometheus004);
    if (!parsed) {
      ADD_FAILURE() << parsed.error().message;
      return {};
    }
    return std::move(*parsed);
  }

 private:
  std::unique_ptr<Gateway> gateway_;
};

// url returns http://127.0.0.1:<port>.
inline std::string url(std::uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); }

}  // namespace inferscope::gateway::testing
