// File: exposition.h
// Text exposition of a Registry: Prometheus text 0.0.4 and OpenMetrics 1.0.0, Accept /
// Accept-Encoding negotiation, exact Content-Type, gzip.
// Example: ScrapeResponse r = render_scrape(registry, req["Accept"], req["Accept-Encoding"]);
// Thread-safe: any number of concurrent renders; rendering never blocks metric writers (it holds a
// family's mutex only while printing that family, which delays with()/remove() on it).
#pragma once

#include <string>
#include <string_view>

#include <inferscope/metrics/registry.h>

namespace inferscope::metrics {

// ExpositionFormat is a text format inferscope can write.
enum class ExpositionFormat { kPrometheusText004, kOpenMetrics100 };

// negotiate_format picks the format for an Accept header: the highest-q acceptable media range
// wins (ties: first listed); application/openmetrics-text (version absent or 1.0.0) and
// application/* give OpenMetrics; text/plain, text/* and */* give 0.0.4; unparsable parts are
// skipped; nothing acceptable (or an empty header) gives 0.0.4.
ExpositionFormat negotiate_format(std::string_view accept_header);

// accepts_gzip reports whether Accept-Encoding allows gzip: "gzip"/"x-gzip" with q > 0, or "*" with
// q > 0 when gzip is not listed. "gzip;q=0" means no.
bool accepts_gzip(std::string_view accept_encoding_header);

// content_type returns the exact Content-Type for format:
// "text/plain; version=0.0.4; charset=utf-8" | "application/openmetrics-text; version=1.0.0; charset=utf-8".
std::string_view content_type(ExpositionFormat format);

// render runs the collect hooks, then appends every family in registration order (series in
// creation order, overflow last) to out. Families without series print HELP/TYPE only.
// OpenMetrics output ends with "# EOF\n". Cost: ~50-150 ns per series, no allocation beyond out's
// growth. Exceptions from hooks propagate.
void render(const Registry& registry, ExpositionFormat format, std::string& out);

// gzip_compress returns data as a gzip member (zlib, default level). Throws std::bad_alloc only.
std::string gzip_compress(std::string_view data);

// ScrapeResponse is what an HTTP handler sends back for one scrape.
struct ScrapeResponse {
  std::string body;          // gzip bytes when gzipped
  std::string content_type;  // exact, see content_type()
  bool gzipped = false;      // set Content-Encoding: gzip when true
};

// render_scrape negotiates, renders and compresses in one call.
ScrapeResponse render_scrape(const Registry& registry, std::string_view accept,
                             std::string_view accept_encoding);

}  // namespace inferscope::metrics
