// Tests of the OTLP/HTTP exporter (span_exporter.h) against an in-process HTTP endpoint on an
// ephemeral loopback port (net's server): batches decoded back intact, retries only on the
// retryable codes with Retry-After, drops counted by reason and never a blocked submit.
#include "trace/span_exporter.h"

#include <gtest/gtest.h>

#include <deque>
#include <mutex>

#include "net/http_server.h"
#include "net/router.h"
#include "support/wait_until.h"
#include "trace/otlp.h"

namespace inferscope::trace {
namespace {

using namespace std::chrono_literals;

// Endpoint answers POST /v1/traces with the queued statuses (then 200) and keeps what it got.
class Endpoint {
 public:
  struct Answer {
    int status;
    std::string retry_after;
  };
  explicit Endpoint(std::deque<Answer> answers = {}) : answers_(std::move(answers)) {
    router_.post("/v1/traces", [this](const net::Request& r) {
      std::lock_guard lock(mu_);
      bodies_.emplace_back(r.body);
      content_types_.emplace_back(r.header("Content-Type"));
      net::Response response;
      response.content_type = "application/x-protobuf";
      if (!answers_.empty()) {
        response.status = answers_.front().status;
        if (!answers_.front().retry_after.empty()) response.headers.emplace_back("Retry-After", answers_.front().retry_after);
        answers_.pop_front();
      }
      return response;
    });
    auto server = net::HttpServer::start({.port = 0}, router_.handler());
    EXPECT_TRUE(server.ok());
    server_ = std::move(*server);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/v1/traces"; }
  std::vector<std::string> bodies() const {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::vector<std::string> content_types() const {
    std::lock_guard lock(mu_);
    return content_types_;
  }

 private:
  net::Router router_;
  mutable std::mutex mu_;
  std::deque<Answer> answers_;
  std::vector<std::string> bodies_;
  std::vector<std::string> content_types_;
  std::unique_ptr<net::HttpServer> server_;
};

std::vector<Span> request_of(std::size_t n) {
  std::vector<Span> spans(n);
  const TraceId trace = random_trace_id();
  for (Span& s : spans) {
    s.trace_id = trace;
    s.span_id = random_span_id();
    s.name = "stage";
    s.start_unix_ns = 1;
    s.end_unix_ns = 2;
  }
  return spans;
}

SpanExporterOptions options_for(const std::string& url) {
  return {.endpoint = url, .resource_attributes = {{"service.name", std::string("test-serve")}},
          .scope_version = "1", .batch_delay = 50ms};
}

// Tests that queued spans arrive as protobuf that decodes to the same spans under the resource.
TEST(SpanExporterTest, ExportsBatchesThatDecodeToTheSameSpans) {
  Endpoint endpoint;
  metrics::Registry registry;
  auto exporter = SpanExporter::start(options_for(endpoint.url()), &registry);
  ASSERT_TRUE(exporter.ok()) << exporter.error().message;
  std::vector<Span> sent;
  for (int i = 0; i < 3; ++i) {
    auto spans = request_of(4);
    sent.insert(sent.end(), spans.begin(), spans.end());
    EXPECT_TRUE((*exporter)->submit(std::move(spans)));
  }
  (*exporter)->stop(10s);
  std::vector<Span> got;
  for (const std::string& body : endpoint.bodies()) {
    auto request = decode_export_request(body);
    ASSERT_TRUE(request.ok()) << request.error().message;
    ASSERT_EQ(request->resources.size(), 1U);
    EXPECT_EQ(request->resources[0].service_name(), "test-serve");
    EXPECT_EQ(request->resources[0].scopes[0].scope_name, "inferscope");
    for (const Span& s : request->resources[0].scopes[0].spans) got.push_back(s);
  }
  EXPECT_EQ(got, sent);
  for (const std::string& type : endpoint.content_types()) EXPECT_EQ(type, "application/x-protobuf");
  EXPECT_EQ((*exporter)->stats().exported, 12U);
}

// Tests that 503 with Retry-After is retried with the same body, then counted as exported.
TEST(SpanExporterTest, RetriesRetryableAnswersHonouringRetryAfter) {
  Endpoint endpoint({{503, "1"}, {429, "0"}});
  auto exporter = SpanExporter::start(options_for(endpoint.url()), nullptr);
  ASSERT_TRUE(exporter.ok());
  EXPECT_TRUE((*exporter)->submit(request_of(2)));
  EXPECT_TRUE(testing::wait_until([&] { return (*exporter)->stats().exported == 2; }, 20s));
  const auto bodies = endpoint.bodies();
  ASSERT_EQ(bodies.size(), 3U);
  EXPECT_EQ(bodies[0], bodies[1]);
  EXPECT_EQ(bodies[1], bodies[2]);
  EXPECT_EQ((*exporter)->stats().retries, 2U);
}

// Tests that 400 is not retried: the batch is dropped as rejected, in the metric too.
TEST(SpanExporterTest, DoesNotRetryABadRequest) {
  Endpoint endpoint({{400, ""}});
  metrics::Registry registry;
  auto exporter = SpanExporter::start(options_for(endpoint.url()), &registry);
  ASSERT_TRUE(exporter.ok());
  EXPECT_TRUE((*exporter)->submit(request_of(3)));
  EXPECT_TRUE(testing::wait_until([&] { return (*exporter)->stats().dropped_rejected == 3; }, 10s));
  (*exporter)->stop(1s);
  EXPECT_EQ(endpoint.bodies().size(), 1U);
  EXPECT_EQ((*exporter)->stats().exported, 0U);
}

// Tests that the last attempt of a retryable answer drops the batch as unavailable.
TEST(SpanExporterTest, GivesUpAfterTheLastAttempt) {
  Endpoint endpoint({{502, "0"}, {502, "0"}});
  SpanExporterOptions options = options_for(endpoint.url());
  options.max_attempts = 2;
  auto exporter = SpanExporter::start(options, nullptr);
  ASSERT_TRUE(exporter.ok());
  EXPECT_TRUE((*exporter)->submit(request_of(1)));
  EXPECT_TRUE(testing::wait_until([&] { return (*exporter)->stats().dropped_unavailable == 1; }, 10s));
  EXPECT_EQ(endpoint.bodies().size(), 2U);
}

// Tests that a full queue refuses a whole request at once (counted), without waiting, and that
// stop() counts what it could not send as shutdown.
TEST(SpanExporterTest, FullQueueDropsAndCounts) {
  SpanExporterOptions options = options_for("http://127.0.0.1:1/v1/traces");
  options.max_queue_spans = 4;
  options.max_batch_spans = 100;
  options.batch_delay = 1h;  // nothing leaves the queue before stop()
  metrics::Registry registry;
  auto exporter = SpanExporter::start(options, &registry);
  ASSERT_TRUE(exporter.ok());
  EXPECT_TRUE((*exporter)->submit(request_of(3)));
  EXPECT_FALSE((*exporter)->submit(request_of(2)));
  EXPECT_TRUE((*exporter)->submit(request_of(1)));
  (*exporter)->stop(0ms);
  EXPECT_FALSE((*exporter)->submit(request_of(1)));
  const ExporterStats stats = (*exporter)->stats();
  EXPECT_EQ(stats.dropped_queue_full, 2U);
  EXPECT_EQ(stats.dropped_shutdown, 5U);
  EXPECT_EQ(stats.exported, 0U);
}

// Tests that an endpoint nobody listens on drops the batch as unavailable.
TEST(SpanExporterTest, UnreachableEndpointIsUnavailable) {
  std::uint16_t port = 0;
  {
    Endpoint closed;  // take a free port, then close it
    port = static_cast<std::uint16_t>(std::stoi(closed.url().substr(17, closed.url().find('/', 17) - 17)));
  }
  auto exporter = SpanExporter::start(options_for("http://127.0.0.1:" + std::to_string(port) + "/v1/traces"), nullptr);
  ASSERT_TRUE(exporter.ok());
  EXPECT_TRUE((*exporter)->submit(request_of(2)));
  EXPECT_TRUE(testing::wait_until([&] { return (*exporter)->stats().dropped_unavailable == 2; }, 10s));
}

// Tests Retry-After parsing: seconds, an IMF-fixdate, and junk.
TEST(SpanExporterTest, ParsesRetryAfter) {
  const auto now = std::chrono::system_clock::from_time_t(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  EXPECT_EQ(parse_retry_after("2", now), 2000ms);
  EXPECT_EQ(parse_retry_after(" 0 ", now), 0ms);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:47 GMT", now), 10000ms);
  EXPECT_EQ(parse_retry_after("Sun, 06 Nov 1994 08:49:27 GMT", now), 0ms);
  EXPECT_FALSE(parse_retry_after("", now).has_value());
  EXPECT_FALSE(parse_retry_after("soon", now).has_value());
  EXPECT_FALSE(parse_retry_after("-1", now).has_value());
  EXPECT_TRUE(is_retryable_status(503));
  EXPECT_FALSE(is_retryable_status(500));
  EXPECT_FALSE(is_retryable_status(400));
}

// Tests that a bad endpoint URL is refused at start, naming the flag.
TEST(SpanExporterTest, RefusesABadEndpoint) {
  auto exporter = SpanExporter::start({.endpoint = "ftp://x"}, nullptr);
  ASSERT_FALSE(exporter.ok());
  EXPECT_NE(exporter.error().message.find("--otlp-endpoint"), std::string::npos) << exporter.error().message;
}

}  // namespace
}  // namespace inferscope::trace
