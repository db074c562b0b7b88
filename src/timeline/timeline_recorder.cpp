// TimelineRecorder: registration of the inferscope_* request families and the mapping from one
// TimelineSummary to observations. Label sets are documented in docs/metrics-reference.md.
#include <inferscope/timeline/timeline_recorder.h>

#include <array>

#include <inferscope/metrics/buckets.h>
#include <inferscope/metrics/lazy_series.h>

namespace inferscope::timeline {
namespace {

using metrics::LazySeries;
using Values = std::vector<std::string>;

constexpr std::array<std::string_view, 6> kStatusClasses = {"1xx", "2xx", "3xx", "4xx", "5xx", "none"};

std::size_t status_index(int http_status) noexcept {
  if (http_status >= 100 && http_status < 600) return static_cast<std::size_t>(http_status / 100 - 1);
  return kStatusClasses.size() - 1;
}

// with_other returns `names` plus the catch-all "other" value.
Values with_other(const std::vector<std::string>& names) {
  Values values = names;
  values.emplace_back(kOtherLabel);
  return values;
}

std::size_t index_of(const Values& values, std::string_view name) noexcept {
  // The last entry is "other": a request naming "other" literally lands there too.
  for (std::size_t i = 0; i + 1 < values.size(); ++i) {
    if (values[i] == name) return i;
  }
  return values.size() - 1;
}

Values stage_values() {
  Values values;
  for (Stage stage : kAllStages) values.emplace_back(to_string(stage));
  return values;
}

Values reason_values() {
  Values values;
  for (FinishReason reason : kAllFinishReasons) values.emplace_back(to_string(reason));
  return values;
}

Values status_values() { return Values(kStatusClasses.begin(), kStatusClasses.end()); }


metrics::HistogramFamily& histogram(metrics::Registry& registry, std::string name, std::string help,
                                    std::vector<std::string> labels, std::vector<double> buckets,
                                    std::string unit = "seconds") {
  metrics::HistogramOptions options;
  options.name = std::move(name);
  options.help = std::move(help);
  options.label_names = std::move(labels);
  options.buckets = std::move(buckets);
  options.unit = std::move(unit);  // OpenMetrics UNIT line
  return registry.histogram(options);
}

metrics::CounterFamily& counter(metrics::Registry& registry, std::string name, std::string help,
                                std::vector<std::string> labels) {
  metrics::MetricOptions options;
  options.name = std::move(name);
  options.help = std::move(help);
  options.label_names = std::move(labels);
  return registry.counter(options);
}

metrics::Gauge gauge(metrics::Registry& registry, std::string name, std::string help) {
  metrics::MetricOptions options;
  options.name = std::move(name);
  options.help = std::move(help);
  return registry.gauge(options).with(std::initializer_list<std::string_view>{});
}

}  // namespace

std::string_view status_class(int http_status) noexcept { return kStatusClasses[status_index(http_status)]; }

struct TimelineRecorder::State {
  State(metrics::Registry& r, TimelineRecorderOptions o);

  Values models, routes, dependencies;
  metrics::Gauge in_flight;
  LazySeries<metrics::Counter> requests;
  LazySeries<metrics::Histogram> request_duration;
  LazySeries<metrics::Histogram> stage_duration;
  LazySeries<metrics::Counter> stage_truncated;
  LazySeries<metrics::Histogram> dependency_duration;
  LazySeries<metrics::Histogram> ttft, tpot, itl;
  LazySeries<metrics::Counter> prompt_tokens, generation_tokens;
  LazySeries<metrics::Histogram> request_prompt_tokens, request_generation_tokens;
};

TimelineRecorder::State::State(metrics::Registry& r, TimelineRecorderOptions o)
    : models(with_other(o.model_names)),
      routes(with_other(o.routes)),
      dependencies(with_other(o.dependency_names)),
      in_flight(gauge(r, "inferscope_requests_in_flight",
                      "Requests received and not yet finished (between begin and record).")),
      requests(counter(r, "inferscope_requests_total",
                       "Finished requests by model, route, HTTP status class and finish reason.",
                       {"model", "route", "status_class", "finish_reason"}),
               {models, routes, status_values(), reason_values()}),
      request_duration(histogram(r, "inferscope_request_duration_seconds",
                                 "End-to-end request time: arrival to response fully sent (or abort/error).",
                                 {"model", "route", "status_class"},
                                 o.latency_buckets.empty() ? metrics::default_latency_buckets() : o.latency_buckets),
                       {models, routes, status_values()}),
      stage_duration(histogram(r, "inferscope_stage_duration_seconds",
                               "Time spent in each request stage (bounds: docs/request-timeline.md).",
                               {"model", "stage"},
                               o.latency_buckets.empty() ? metrics::default_latency_buckets() : o.latency_buckets),
                     {models, stage_values()}),
      stage_truncated(counter(r, "inferscope_stage_truncated_total",
                              "Stage observations cut short because the request ended inside the stage.",
                              {"model", "stage"}),
                      {models, stage_values()}),
      dependency_duration(histogram(r, "inferscope_dependency_duration_seconds",
                                    "Duration of each outbound dependency call.", {"model", "dependency"},
                                    o.latency_buckets.empty() ? metrics::default_latency_buckets() : o.latency_buckets),
                          {models, dependencies}),
      ttft(histogram(r, "inferscope_time_to_first_token_seconds",
                     "Arrival to the first content-bearing output (role-only/empty chunks excluded).", {"model"},
                     o.latency_buckets.empty() ? metrics::default_latency_buckets() : o.latency_buckets),
           {models}),
      tpot(histogram(r, "inferscope_time_per_output_token_seconds",
                     "Per request: (last - first content token) / (output tokens - 1); needs >= 2 tokens.",
                     {"model"}, o.latency_buckets.empty() ? metrics::default_latency_buckets() : o.latency_buckets),
           {models}),
      itl(histogram(r, "inferscope_inter_token_latency_seconds",
                    "Gap between output events divided by the tokens of the later event, once per token.",
                    {"model"}, o.latency_buckets.empty() ? metrics::default_latency_buckets() : o.latency_buckets),
          {models}),
      prompt_tokens(counter(r, "inferscope_prompt_tokens_total", "Prompt tokens of finished requests.", {"model"}),
                    {models}),
      generation_tokens(counter(r, "inferscope_generation_tokens_total",
                                "Output tokens of finished requests.", {"model"}),
                        {models}),
      request_prompt_tokens(histogram(r, "inferscope_request_prompt_tokens", "Prompt length per request.",
                                      {"model"}, o.token_buckets.empty() ? metrics::one_two_five_buckets(100000) : o.token_buckets, ""),
                            {models}),
      request_generation_tokens(histogram(r, "inferscope_request_generation_tokens",
                                          "Output length per request.", {"model"},
                                          o.token_buckets.empty() ? metrics::one_two_five_buckets(100000) : o.token_buckets, ""),
                                {models}) {
  // Counters born at their first increment lose it: Prometheus's rate()/increase() start from the
  // first sample they see, so the first failures after a quiet period would go uncounted (with a
  // handful of errors in a short window, most of them). The outcomes every configured model and
  // route can have are exposed at 0 from the start; the rest stay lazy to bound the series count.
  const std::size_t k2xx = status_index(200), k4xx = status_index(400), k5xx = status_index(500);
  const auto reason = [](FinishReason r) { return static_cast<std::size_t>(r); };
  for (std::size_t m = 0; m + 1 < models.size(); ++m) {
    for (std::size_t r = 0; r + 1 < routes.size(); ++r) {
      requests.precreate({m, r, k2xx, reason(FinishReason::kStop)});
      requests.precreate({m, r, k2xx, reason(FinishReason::kLength)});
      requests.precreate({m, r, k4xx, reason(FinishReason::kError)});
      requests.precreate({m, r, k5xx, reason(FinishReason::kError)});
    }
  }
}

TimelineRecorder::TimelineRecorder(metrics::Registry& registry, TimelineRecorderOptions options)
    : state_(std::make_unique<State>(registry, std::move(options))) {}

TimelineRecorder::~TimelineRecorder() = default;

void TimelineRecorder::begin(RequestTimeline& timeline) noexcept {
  if (timeline.in_flight_counted()) return;
  timeline.set_in_flight_counted(true);
  state_->in_flight.inc();
}

// An exported request's latencies carry its trace id, so a point on the e2e, TTFT or stage chart
// leads to its trace; every other request is a plain observation.
LatencyObserver::LatencyObserver(const RequestLabels& labels) noexcept : at_(labels.exemplar_time) {
  if (!labels.trace_id.empty()) exemplar_.emplace(metrics::ExemplarLabels{{"trace_id", labels.trace_id}});
}

void LatencyObserver::observe(metrics::Histogram h, double v) const noexcept {
  if (exemplar_) {
    h.observe_with_exemplar(v, *exemplar_, at_);
  } else {
    h.observe(v);
  }
}

void TimelineRecorder::record(const RequestTimeline& timeline, const RequestLabels& labels) noexcept {
  record(timeline, summarize(timeline), labels);
}

void TimelineRecorder::record(const RequestTimeline& timeline, const TimelineSummary& s,
                              const RequestLabels& labels) noexcept {
  State& st = *state_;
  if (timeline.in_flight_counted()) st.in_flight.dec();
  const std::size_t model = index_of(st.models, labels.model);
  const std::size_t route = index_of(st.routes, labels.route);
  const std::size_t status = status_index(labels.http_status);
  const LatencyObserver latencies(labels);
  const auto observe = [&latencies](metrics::Histogram h, double v) { latencies.observe(h, v); };
  observe(st.request_duration.get({model, route, status}), s.e2e_seconds);

  for (std::size_t i = 0; i < kStageCount; ++i) {
    if (s.stage_seconds[i]) observe(st.stage_duration.get({model, i}), *s.stage_seconds[i]);
  }
  if (s.truncated_stage) st.stage_truncated.get({model, static_cast<std::size_t>(*s.truncated_stage)}).inc();
  for (const auto& call : timeline.dependencies()) {
    observe(st.dependency_duration.get({model, index_of(st.dependencies, call.name)}),
            seconds_between(call.start, call.end));
  }

  if (s.ttft_seconds) observe(st.ttft.get({model}), *s.ttft_seconds);
  if (s.tpot_seconds) st.tpot.get({model}).observe(*s.tpot_seconds);
  metrics::Histogram itl = st.itl.get({model});
  for_each_output_gap(timeline, [&itl](double gap, std::uint32_t tokens) {
    const double per_token = gap / static_cast<double>(tokens);
    for (std::uint32_t k = 0; k < tokens; ++k) itl.observe(per_token);
  });

  if (s.prompt_tokens > 0) {
    st.prompt_tokens.get({model}).add(s.prompt_tokens);
    st.request_prompt_tokens.get({model}).observe(s.prompt_tokens);
  }
  // A request that failed before generating says nothing about output lengths.
  if (s.output_tokens > 0 || s.reason == FinishReason::kStop || s.reason == FinishReason::kLength) {
    st.generation_tokens.get({model}).add(s.output_tokens);
    st.request_generation_tokens.get({model}).observe(s.output_tokens);
  }
  // Counted last: whoever sees the request in inferscope_requests_total sees all of its observations.
  st.requests.get({model, route, status, static_cast<std::size_t>(s.reason)}).inc();
}

std::size_t TimelineRecorder::model_index(std::string_view model) const noexcept {
  return index_of(state_->models, model);
}

std::string_view TimelineRecorder::model_label(std::string_view model) const noexcept {
  return state_->models[model_index(model)];
}

}  // namespace inferscope::timeline
