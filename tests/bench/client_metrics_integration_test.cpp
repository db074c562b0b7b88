#include "bench/client_metrics.h"

#include <string>
#include <utility>

#include <boost/asio.hpp>
#include <gtest/gtest.h>

namespace inferscope::bench {
namespace {

// scrape GETs /metrics from 127.0.0.1:port with a blocking socket (bounded by the server's close).
std::string scrape(std::uint16_t port) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::socket s(io);
  s.connect({asio::ip::make_address("127.0.0.1"), port});
  std::string req = "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  asio::write(s, asio::buffer(req));
  std::string out;
  boost::system::error_code ec;
  char buf[4096];
  for (int i = 0; i < 10000; ++i) {
    std::size_t n = s.read_some(asio::buffer(buf), ec);
    out.append(buf, n);
    if (ec) break;
  }
  return out;
}

// Tests that completions show up as client metrics: outcome counts, tokens, and TTFT histograms
// from both origins (the corrected one larger by the schedule delay).
TEST(ClientMetricsIntegrationTest, ExposesClientView) {
  auto m = ClientMetrics::start(0);
  ASSERT_TRUE(m) << m.error().message;
  loadgen::RequestRecord ok;
  ok.intended_ns = 0;
  ok.dispatched_ns = 0;
  ok.started_ns = 2'000'000'000;
  ok.first_content_ns = ok.last_token_ns = ok.end_ns = 2'100'000'000;
  ok.output_tokens = 3;
  loadgen::RequestRecord bad;
  bad.error = loadgen::ErrorKind::kTimeout;
  bad.intended_ns = bad.dispatched_ns = bad.started_ns = 0;
  bad.end_ns = 1;
  (*m)->on_complete(ok);
  (*m)->on_complete(bad);
  (*m)->on_tick(loadgen::RunStatus{.elapsed_ns = 1, .dispatched = 2, .in_flight = 1});
  std::string body = scrape((*m)->port());
  EXPECT_NE(body.find("inferscope_bench_requests_total{outcome=\"ok\"} 1"), std::string::npos) << body;
  EXPECT_NE(body.find("inferscope_bench_requests_total{outcome=\"timeout\"} 1"), std::string::npos);
  EXPECT_NE(body.find("inferscope_bench_output_tokens_total 3"), std::string::npos);
  EXPECT_NE(body.find("inferscope_bench_in_flight 1"), std::string::npos);
  EXPECT_NE(body.find("inferscope_bench_ttft_seconds_sum{from=\"start\"} 0.1"), std::string::npos);
  EXPECT_NE(body.find("inferscope_bench_ttft_seconds_sum{from=\"intended\"} 2.1"), std::string::npos);
}

}  // namespace
}  // namespace inferscope::bench
