#include "bench/request_log.h"

#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/slo.h"

namespace inferscope::bench {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

std::string ms_or_empty(std::int64_t ns) {
  return ns == loadgen::kNoTime ? std::string() : fmt::format("{:.3f}", static_cast<double>(ns) / 1e6);
}
std::string diff_or_empty(std::int64_t a, std::int64_t b) {
  return a == loadgen::kNoTime || b == loadgen::kNoTime ? std::string() : ms_or_empty(a - b);
}

// Field is one derived column, shared by the CSV and JSONL writers so they never disagree.
struct Fields {
  std::string values[29];
};

Fields fields(const loadgen::RequestRecord& r, const std::vector<std::string>& classes) {
  bool ok = r.ok();
  std::int64_t ttft = ok ? r.ttft_anchor_ns() : loadgen::kNoTime;
  std::int64_t e2e = ok ? r.e2e_anchor_ns() : loadgen::kNoTime;
  double tpot = ok ? tpot_ns(r) : 0;
  return Fields{{std::to_string(r.index), r.class_id < classes.size() ? classes[r.class_id] : std::to_string(r.class_id),
                 r.warmup ? "1" : "0", std::to_string(r.http_status), std::string(to_string(r.error)),
                 ms_or_empty(r.intended_ns), ms_or_empty(r.dispatched_ns), ms_or_empty(r.started_ns),
                 ms_or_empty(r.sent_ns), ms_or_empty(r.headers_ns), ms_or_empty(r.first_event_ns),
                 ms_or_empty(r.first_content_ns), ms_or_empty(r.last_token_ns), ms_or_empty(r.end_ns),
                 ms_or_empty(r.dns_ns), ms_or_empty(r.connect_ns), ms_or_empty(r.tls_ns),
                 diff_or_empty(ttft, r.started_ns), diff_or_empty(ttft, r.intended_ns), diff_or_empty(e2e, r.started_ns),
                 diff_or_empty(e2e, r.intended_ns), tpot > 0 ? fmt::format("{:.3f}", tpot / 1e6) : std::string(),
                 std::to_string(r.input_tokens), std::to_string(r.output_tokens), std::string(to_string(r.token_source)),
                 std::to_string(r.events), std::to_string(r.token_events), r.reused_connection ? "1" : "0",
                 std::string(to_string(r.input_token_source))}};
}

Result<File> open_for_write(const std::string& path) {
  File f(std::fopen(path.c_str(), "w"));
  if (!f) return make_error(fmt::format("cannot write per-request log to {}: cannot create file", path));
  return f;
}

Result<void> finish(File f, const std::string& path) {
  bool bad = std::ferror(f.get()) != 0;
  if (std::fclose(f.release()) != 0 || bad) return make_error(fmt::format("cannot write per-request log to {}: write failed", path));
  return {};
}

}  // namespace

Result<void> write_request_csv(const std::string& path, const loadgen::RunResult& run, const std::vector<std::string>& classes) {
  auto f = open_for_write(path);
  if (!f) return f.error();
  std::fprintf(f->get(), "%s\n", kCsvColumns);
  for (const loadgen::RequestRecord& r : run.records) {
    Fields fl = fields(r, classes);
    std::string row;
    for (std::size_t i = 0; i < std::size(fl.values); ++i) {
      if (i > 0) row.push_back(',');
      // Class names come from --mix and could hold a comma or quote: quote that field.
      if (i == 1 && fl.values[i].find_first_of(",\"") != std::string::npos) {
        row += '"';
        for (char c : fl.values[i]) row += c == '"' ? std::string("\"\"") : std::string(1, c);
        row += '"';
      } else {
        row += fl.values[i];
      }
    }
    std::fprintf(f->get(), "%s\n", row.c_str());
  }
  return finish(std::move(*f), path);
}

Result<void> write_request_jsonl(const std::string& path, const loadgen::RunResult& run, const std::vector<std::string>& classes) {
  auto f = open_for_write(path);
  if (!f) return f.error();
  std::vector<std::string> names;
  std::string_view cols = kCsvColumns;
  while (!cols.empty()) {
    std::size_t comma = cols.find(',');
    names.emplace_back(cols.substr(0, comma));
    cols = comma == std::string_view::npos ? std::string_view() : cols.substr(comma + 1);
  }
  for (const loadgen::RequestRecord& r : run.records) {
    Fields fl = fields(r, classes);
    nlohmann::json j;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string& v = fl.values[i];
      bool text = names[i] == "class" || names[i] == "error" || names[i] == "token_source" || names[i] == "input_token_source";
      if (text) {
        j[names[i]] = v;
      } else if (v.empty()) {
        j[names[i]] = nullptr;
      } else if (v.find('.') == std::string::npos) {
        j[names[i]] = std::stoll(v);
      } else {
        j[names[i]] = std::stod(v);
      }
    }
    nlohmann::json events = nlohmann::json::array();
    for (std::uint32_t us : r.token_event_us) events.push_back(static_cast<double>(us) / 1e3);
    j["token_event_ms"] = std::move(events);
    std::fprintf(f->get(), "%s\n", j.dump().c_str());
  }
  return finish(std::move(*f), path);
}

}  // namespace inferscope::bench
