#include "report/report_flags.h"

#include <cmath>

#include "doctor/doctor_api.h"

namespace inferscope::report {

Result<ReportRequest> request_from_flags(const ReportFlags& f, double now) {
  ReportRequest r;
  r.prometheus_url = f.prometheus;
  r.selector = f.selector;
  r.model = f.model;
  r.state_dir = f.state_dir;
  r.slo_p95_e2e_s = f.slo_p95;
  r.tls = f.tls;
  if (f.slo_p95 < 0) return make_error("cannot use --slo-p95: must be >= 0 seconds");
  r.until = std::floor(now);
  if (!f.until.empty()) {
    auto t = doctor::parse_time(f.until, "--until");
    if (!t) return t.error();
    r.until = *t;
  }
  r.since = r.until - 86400;
  if (!f.since.empty()) {
    auto t = doctor::parse_time(f.since, "--since");
    if (t) {
      r.since = *t;
    } else {
      auto d = doctor::parse_duration(f.since, "--since");
      if (!d) return make_error("cannot use --since '" + f.since +
                                "': expected RFC 3339, Unix seconds or a duration before --until (24h, 7d)");
      r.since = r.until - *d;
    }
  }
  if (r.since >= r.until) return make_error("cannot use --since " + f.since + ": not before --until");
  return r;
}

}  // namespace inferscope::report
