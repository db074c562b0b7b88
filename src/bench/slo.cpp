#include "bench/slo.h"

#include <string>

#include <fmt/format.h>

#include "common/duration_text.h"

namespace inferscope::bench {

double tpot_ns(const loadgen::RequestRecord& r) {
  if (r.output_tokens < 2 || r.first_content_ns == loadgen::kNoTime) return 0;
  return static_cast<double>(r.e2e_anchor_ns() - r.first_content_ns) / static_cast<double>(r.output_tokens - 1);
}

bool SloSpec::met(const loadgen::RequestRecord& r) const {
  if (!r.ok()) return false;
  if (ttft && r.ttft_anchor_ns() - r.intended_ns > ttft->count()) return false;
  if (e2e && r.e2e_anchor_ns() - r.intended_ns > e2e->count()) return false;
  if (tpot && tpot_ns(r) > static_cast<double>(tpot->count())) return false;
  return true;
}

Result<SloSpec> parse_slo(std::string_view text) {
  SloSpec slo;
  while (!text.empty()) {
    std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return make_error(fmt::format("cannot parse objective from --slo: '{}' is not key=duration", item));
    }
    std::string_view key = item.substr(0, eq);
    auto d = common::parse_duration(item.substr(eq + 1), "--slo");
    if (!d) return d.error();
    if (key == "ttft") {
      slo.ttft = *d;
    } else if (key == "tpot") {
      slo.tpot = *d;
    } else if (key == "e2e" || key == "e2el") {
      slo.e2e = *d;
    } else {
      return make_error(fmt::format("cannot parse objective from --slo: unknown key '{}' (ttft, tpot, e2e)", key));
    }
  }
  if (slo.empty()) return make_error("cannot parse objectives from --slo: empty list");
  return slo;
}

}  // namespace inferscope::bench
