// image_classifier: a (simulated) C++ image-classification service instrumented with libinferscope
// and exposing /metrics through MetricsServer. Walk-through: docs/instrumenting-a-cpp-service.md.
//   example_image_classifier --port 9464 --requests 1000 --rate 50   # serve, then exit
//   example_image_classifier --self-check   # run 60 requests, scrape own /metrics, verify, exit 0/1
// Stages are fake work (sleeps); the metrics, handles and server are exactly what a real one uses.
#include <utility>  // first: Boost 1.74's asio headers use std::exchange without including it

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/metrics_server.h>
#include <inferscope/metrics/registry.h>

namespace metrics = inferscope::metrics;
using Clock = std::chrono::steady_clock;

namespace {

// ---- 1. Registration at startup: every family once, every handle cached. -----------------------

// ClassifierMetrics owns the service's handles. Request code only calls inc/set/observe on them:
// no string lookups, locks or allocation per request. The constructor is long but straight-line:
// one block per family, which is how registration reads best.
struct ClassifierMetrics {
  explicit ClassifierMetrics(metrics::Registry& registry) {
    metrics::MetricOptions requests_opts;
    requests_opts.name = "classifier_requests_total";
    requests_opts.help = "Classification requests finished, successful or not.";
    requests = registry.counter(requests_opts).with({});

    metrics::MetricOptions errors_opts;
    errors_opts.name = "classifier_request_errors_total";
    errors_opts.help = "Requests that failed, by bounded reason.";
    errors_opts.label_names = {"reason"};
    auto& errors = registry.counter(errors_opts);
    bad_image = errors.with({"bad_image"});  // both series exist from startup: rate() sees 0, not "no data"
    model_error = errors.with({"model_error"});

    metrics::MetricOptions queue_opts;
    queue_opts.name = "classifier_queue_length";
    queue_opts.help = "Requests waiting for a worker.";
    queue_length = registry.gauge(queue_opts).with({});

    metrics::MetricOptions in_flight_opts;
    in_flight_opts.name = "classifier_in_flight_requests";
    in_flight_opts.help = "Requests admitted and not yet finished (queued or running).";
    in_flight = registry.gauge(in_flight_opts).with({});

    metrics::HistogramOptions stage_opts;
    stage_opts.name = "classifier_stage_duration_seconds";
    stage_opts.help = "Time spent in each stage of a request.";
    stage_opts.unit = "seconds";  // OpenMetrics UNIT line; must be the name's suffix
    stage_opts.label_names = {"stage"};  // bounded: the four values below, fixed in code
    stage_opts.buckets = metrics::default_latency_buckets();
    auto& stages = registry.histogram(stage_opts);
    queue_seconds = stages.with({"queue"});
    preprocess_seconds = stages.with({"preprocess"});
    infer_seconds = stages.with({"infer"});
    postprocess_seconds = stages.with({"postprocess"});

    metrics::HistogramOptions e2e_opts;
    e2e_opts.name = "classifier_request_duration_seconds";
    e2e_opts.help = "End-to-end request latency, admission to response.";
    e2e_opts.unit = "seconds";
    e2e_opts.buckets = metrics::default_latency_buckets();
    e2e_seconds = registry.histogram(e2e_opts).with({});
  }

  metrics::Counter requests, bad_image, model_error;
  metrics::Gauge queue_length, in_flight;
  metrics::Histogram queue_seconds, preprocess_seconds, infer_seconds, postprocess_seconds, e2e_seconds;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- 2. The service: a queue and worker threads running three timed stages. --------------------

struct Job {
  int id;
  Clock::time_point admitted;
};

// Classifier simulates a model server: submit() admits a request, workers take it through
// preprocess (decode + resize), infer (the model) and postprocess (top-k labels).
class Classifier {
 public:
  Classifier(ClassifierMetrics& m, int workers) : m_(m) {
    for (int w = 0; w < workers; ++w) workers_.emplace_back([this, w] { work(static_cast<unsigned>(w)); });
  }
  ~Classifier() {
    {
      std::lock_guard lock(mu_);
      closing_ = true;
    }
    ready_.notify_all();
    for (auto& t : workers_) t.join();
  }

  void submit(int id) {
    m_.in_flight.inc();
    std::lock_guard lock(mu_);
    queue_.push_back({id, Clock::now()});
    ready_.notify_one();
  }

  // queue_size is read by the collect hook at scrape time, so the gauge is exact when scraped.
  std::size_t queue_size() {
    std::lock_guard lock(mu_);
    return queue_.size();
  }

  // wait_idle blocks until every submitted request has finished (bounded by the caller's count).
  void wait_idle(int expected) {
    std::unique_lock lock(mu_);
    done_cv_.wait(lock, [&] { return finished_ == expected; });
  }

 private:
  void work(unsigned seed) {
    std::mt19937 rng(seed);
    for (;;) {
      Job job;
      {
        std::unique_lock lock(mu_);
        ready_.wait(lock, [this] { return closing_ || !queue_.empty(); });
        if (queue_.empty()) return;  // closing and drained
        job = queue_.front();
        queue_.pop_front();
      }
      m_.queue_seconds.observe(seconds_since(job.admitted));
      handle(job, rng);
      m_.requests.inc();
      m_.e2e_seconds.observe(seconds_since(job.admitted));
      m_.in_flight.dec();
      std::lock_guard lock(mu_);
      ++finished_;
      done_cv_.notify_all();
    }
  }

  // handle runs the stages; each stage is timed into its own cached histogram handle.
  void handle(const Job& job, std::mt19937& rng) {
    auto fake_work = [&rng](int min_us, int max_us) {
      std::this_thread::sleep_for(std::chrono::microseconds(std::uniform_int_distribution(min_us, max_us)(rng)));
    };
    Clock::time_point start = Clock::now();
    fake_work(500, 2000);  // decode + resize
    m_.preprocess_seconds.observe(seconds_since(start));
    if (job.id % 17 == 5) {  // a corrupt upload: fails in preprocess, never reaches the model
      m_.bad_image.inc();
      return;
    }
    start = Clock::now();
    fake_work(2000, 6000);  // the forward pass
    m_.infer_seconds.observe(seconds_since(start));
    if (job.id % 41 == 7) {
      m_.model_error.inc();
      return;
    }
    start = Clock::now();
    fake_work(100, 400);  // softmax + top-5
    m_.postprocess_seconds.observe(seconds_since(start));
  }

  ClassifierMetrics& m_;
  std::mutex mu_;
  std::condition_variable ready_, done_cv_;
  std::deque<Job> queue_;
  int finished_ = 0;
  bool closing_ = false;
  std::vector<std::thread> workers_;  // last: started after everything they touch exists
};

// ---- 3. Self-check: scrape our own /metrics over HTTP and verify the series. -------------------

std::optional<std::string> scrape(std::uint16_t port) {
  namespace http = boost::beast::http;
  try {
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::socket socket(ioc);
    socket.connect({boost::asio::ip::make_address("127.0.0.1"), port});
    http::request<http::empty_body> request{http::verb::get, "/metrics", 11};
    request.set(http::field::host, "127.0.0.1");
    http::write(socket, request);
    boost::beast::flat_buffer buffer;
    http::response<http::string_body> response;
    http::read(socket, buffer, response);
    if (response.result() != http::status::ok) return std::nullopt;
    return response.body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot scrape metrics from 127.0.0.1:%u: %s\n", port, e.what());
    return std::nullopt;
  }
}

// value_of returns the value of the sample line `series <value>` in a text exposition.
std::optional<double> value_of(const std::string& text, std::string_view series) {
  const std::string needle = "\n" + std::string(series) + " ";
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(text.c_str() + at + needle.size(), nullptr);
}

bool verify(const std::string& text, int requests) {
  struct Want {
    const char* series;
    bool positive;  // false: present is enough (gauges may be 0 once idle)
  };
  const Want wants[] = {
      {"classifier_requests_total", true},
      {"classifier_request_errors_total{reason=\"bad_image\"}", true},
      {"classifier_request_errors_total{reason=\"model_error\"}", true},
      {"classifier_stage_duration_seconds_count{stage=\"queue\"}", true},
      {"classifier_stage_duration_seconds_count{stage=\"preprocess\"}", true},
      {"classifier_stage_duration_seconds_count{stage=\"infer\"}", true},
      {"classifier_stage_duration_seconds_count{stage=\"postprocess\"}", true},
      {"classifier_request_duration_seconds_count", true},
      {"classifier_queue_length", false},
      {"classifier_in_flight_requests", false},
  };
  bool ok = true;
  for (const Want& want : wants) {
    std::optional<double> value = value_of(text, want.series);
    if (!value || (want.positive && !(*value > 0))) {
      std::fprintf(stderr, "self-check: %s is %s\n", want.series, value ? "zero" : "missing");
      ok = false;
    }
  }
  if (value_of(text, "classifier_requests_total") != static_cast<double>(requests)) {
    std::fprintf(stderr, "self-check: classifier_requests_total != %d\n", requests);
    ok = false;
  }
  return ok;
}

// ---- 4. main: options, registry, server, workload. --------------------------------------------

struct Options {
  bool self_check = false;
  std::uint16_t port = 9464;
  int requests = 1000;
  double rate = 50;  // requests per second
};

std::optional<Options> parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--self-check") {
      options.self_check = true;
    } else if (arg == "--port" && has_value) {
      options.port = static_cast<std::uint16_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (arg == "--requests" && has_value) {
      options.requests = std::atoi(argv[++i]);
    } else if (arg == "--rate" && has_value) {
      options.rate = std::strtod(argv[++i], nullptr);
    } else {
      return std::nullopt;
    }
  }
  if (options.requests < 1 || options.requests > 10'000'000 || !(options.rate > 0)) return std::nullopt;
  if (options.self_check) {
    options.port = 0;  // ephemeral: ctest may run several examples at once
    options.requests = 60;
    options.rate = 2000;
  }
  return options;
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Options> options = parse(argc, argv);
  if (!options) {
    std::fprintf(stderr, "usage: %s [--self-check] [--port N] [--requests N (1..1e7)] [--rate PER_SECOND]\n", argv[0]);
    return 2;
  }
  metrics::Registry registry;
  ClassifierMetrics m(registry);
  Classifier classifier(m, 2);
  // Queue length is computed at scrape time rather than tracked on every push and pop.
  registry.add_collect_hook([&] { m.queue_length.set(static_cast<double>(classifier.queue_size())); });
  // Declared after what its scrapes touch (registry, hook, classifier), so it stops first.
  auto server = metrics::MetricsServer::start(registry, {.port = options->port});
  if (!server) {
    std::fprintf(stderr, "%s\n", server.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "serving http://%s:%u/metrics\n", (*server)->local_address().c_str(), (*server)->port());
  const auto gap = std::chrono::duration<double>(1.0 / options->rate);
  const Clock::time_point begin = Clock::now();
  for (int id = 0; id < options->requests; ++id) {
    std::this_thread::sleep_until(begin + std::chrono::duration_cast<Clock::duration>(gap * id));
    classifier.submit(id);
  }
  classifier.wait_idle(options->requests);
  if (!options->self_check) return 0;

  const std::optional<std::string> text = scrape((*server)->port());
  if (!text) return 1;
  std::fwrite(text->data(), 1, text->size(), stdout);
  const bool ok = verify(*text, options->requests);
  std::fprintf(stderr, "self-check %s\n", ok ? "passed" : "FAILED");
  return ok ? 0 : 1;
}
