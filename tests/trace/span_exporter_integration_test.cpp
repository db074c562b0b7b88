// Tests of the OTLP/HTTP exporter (span_exporter.h) against an in-process HTTP endpoint on an
// ephemeral loopback port (net's server): batches decoded back intact, retries only on the
// retryable codes with Retry-After, drops counted by reason and never a blocked submit.
#include "trace/span_exporter.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <mutex>

#include "net/http_server.h"
#include "net/router.h"
#include "support/registry_scrape.h"
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

// SilentEndpoint listens on a loopback port, takes one connection, reads what is sent on it and
// never answers: an exporter posting to it waits for its request timeout.
class SilentEndpoint {
 public:
  SilentEndpoint() {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(listener_, 4), 0);
    EXPECT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length), 0);
    port_ = ntohs(address.sin_port);
  }
  ~SilentEndpoint() { close(); }
  SilentEndpoint(const SilentEndpoint&) = delete;
  SilentEndpoint& operator=(const SilentEndpoint&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1/traces"; }

  // took_request accepts the first connection and waits (up to 10 s) for its first bytes: the
  // exporter's sending thread is then inside a POST that will not be answered.
  bool took_request() {
    pollfd listening{listener_, POLLIN, 0};
    if (::poll(&listening, 1, 10000) != 1) return false;
    connection_ = ::accept(listener_, nullptr, nullptr);
    if (connection_ < 0) return false;
    pollfd readable{connection_, POLLIN, 0};
    if (::poll(&readable, 1, 10000) != 1) return false;
    char head[64];
    return ::recv(connection_, head, sizeof head, 0) > 0;
  }

  void close() {
    if (connection_ >= 0) ::close(connection_);
    if (listener_ >= 0) ::close(listener_);
    connection_ = listener_ = -1;
  }

 private:
  int listener_ = -1;
  int connection_ = -1;
  int port_ = 0;
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

// Tests that submit_encoded sends, byte for byte, what submit() sends for the same spans, that
// the caller's buffer is copied (reused right after the call without changing what is sent), and
// that a request larger than the whole queue is refused as queue_full.
TEST(SpanExporterTest, SubmitEncodedSendsWhatSubmitSends) {
  std::vector<std::vector<Span>> requests = {request_of(3), request_of(1), request_of(5)};
  Endpoint by_spans;
  Endpoint by_fields;
  metrics::Registry registry;
  SpanExporterOptions options = options_for(by_spans.url());
  options.batch_delay = 1h;  // one batch each, sent by stop()
  auto spans_exporter = SpanExporter::start(options, nullptr);
  options.endpoint = by_fields.url();
  auto fields_exporter = SpanExporter::start(options, &registry);
  ASSERT_TRUE(spans_exporter.ok()) << spans_exporter.error().message;
  ASSERT_TRUE(fields_exporter.ok()) << fields_exporter.error().message;
  std::string buffer;
  for (const auto& spans : requests) {
    buffer = encode_spans_field(spans);
    EXPECT_TRUE((*fields_exporter)->submit_encoded(buffer, spans.size()));
    buffer.assign(buffer.size(), 'x');  // the caller's buffer, reused
    EXPECT_TRUE((*spans_exporter)->submit(spans));
  }
  const std::size_t queue = options.max_queue_spans;
  std::vector<Span> too_many = request_of(queue + 1);
  EXPECT_FALSE((*fields_exporter)->submit_encoded(encode_spans_field(too_many), too_many.size()));
  (*spans_exporter)->stop(10s);
  (*fields_exporter)->stop(10s);

  ASSERT_EQ(by_fields.bodies().size(), 1U);
  EXPECT_EQ(by_fields.bodies(), by_spans.bodies());
  auto request = decode_export_request(by_fields.bodies()[0]);
  ASSERT_TRUE(request.ok()) << request.error().message;
  ASSERT_EQ(request->resources.size(), 1U);
  EXPECT_EQ(request->resources[0].service_name(), "test-serve");
  std::vector<Span> sent;
  for (const auto& spans : requests) sent.insert(sent.end(), spans.begin(), spans.end());
  EXPECT_EQ(request->resources[0].scopes[0].spans, sent);
  const ExporterStats stats = (*fields_exporter)->stats();
  EXPECT_EQ(stats.exported, 9U);
  EXPECT_EQ(stats.dropped_queue_full, queue + 1);
  EXPECT_EQ(metrics::value_of(testing::scrape(registry), "inferscope_traces_dropped_total", {{"reason", "queue_full"}}),
            static_cast<double>(queue + 1));
}

// Tests that batches are made of whole requests up to max_batch_spans, and that a request larger
// than a batch is sent alone rather than split or refused.
TEST(SpanExporterTest, BatchesHoldWholeRequestsAndALargerOneGoesAlone) {
  Endpoint endpoint;
  SpanExporterOptions options = options_for(endpoint.url());
  options.max_batch_spans = 2;
  options.batch_delay = 1h;  // batches leave when full, the last one at stop()
  auto exporter = SpanExporter::start(options, nullptr);
  ASSERT_TRUE(exporter.ok()) << exporter.error().message;
  for (std::size_t n : {1, 3, 1, 1}) EXPECT_TRUE((*exporter)->submit(request_of(n))) << n;
  (*exporter)->stop(10s);
  std::vector<std::size_t> counts;
  for (const std::string& body : endpoint.bodies()) {
    auto request = decode_export_request(body);
    ASSERT_TRUE(request.ok()) << request.error().message;
    counts.push_back(request->span_count());
  }
  EXPECT_EQ(counts, (std::vector<std::size_t>{1, 3, 2}));
  EXPECT_EQ((*exporter)->stats().exported, 6U);
}

// Tests the full queue while the sending thread waits on an endpoint that does not answer:
// requests queue up to max_queue_spans in batches, the next one is refused whole and counted in
// inferscope_traces_dropped_total{reason="queue_full"}, and submit never waits for the network.
TEST(SpanExporterTest, FullQueueBehindAnUnansweredPostDropsAndCounts) {
  SilentEndpoint silent;
  SpanExporterOptions options = options_for(silent.url());
  options.max_queue_spans = 8;
  options.max_batch_spans = 4;
  options.request_timeout = 60s;
  metrics::Registry registry;
  auto exporter = SpanExporter::start(options, &registry);
  ASSERT_TRUE(exporter.ok()) << exporter.error().message;
  EXPECT_TRUE((*exporter)->submit(request_of(4)));  // a full batch: the sender takes it at once
  ASSERT_TRUE(silent.took_request());
  const auto fields = encode_spans_field(request_of(2));
  for (int i = 0; i < 4; ++i) EXPECT_TRUE((*exporter)->submit_encoded(fields, 2)) << i;  // 8 queued
  EXPECT_FALSE((*exporter)->submit_encoded(fields, 2));
  EXPECT_FALSE((*exporter)->submit(request_of(1)));
  const auto exposition = testing::scrape(registry);
  EXPECT_EQ(metrics::value_of(exposition, "inferscope_traces_dropped_total", {{"reason", "queue_full"}}), 3.0);
  EXPECT_EQ(metrics::value_of(exposition, "inferscope_trace_spans_exported_total"), 0.0);
  silent.close();  // the POST fails now; stop() then drops the rest
  (*exporter)->stop(0ms);
  const ExporterStats stats = (*exporter)->stats();
  EXPECT_EQ(stats.dropped_queue_full, 3U);
  EXPECT_EQ(stats.exported, 0U);
  EXPECT_EQ(stats.dropped_unavailable + stats.dropped_shutdown, 12U);
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
