// Negotiation, Content-Type, gzip and the render entry points (see exposition.h).
#include <inferscope/metrics/exposition.h>

#include <zlib.h>

#include <charconv>
#include <new>
#include <stdexcept>

#include "detail/registry_access.h"
#include "detail/text_format.h"

namespace inferscope::metrics {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// HeaderPart is one comma-separated element of Accept / Accept-Encoding: "token;k=v;q=0.5".
struct HeaderPart {
  std::string_view token;
  std::string_view version;  // empty when absent
  double q = 1.0;
  bool valid = true;
};

HeaderPart parse_part(std::string_view part) {
  HeaderPart result;
  std::size_t semi = part.find(';');
  result.token = detail::trim_header_blanks(part.substr(0, semi));
  while (semi != std::string_view::npos) {
    part.remove_prefix(semi + 1);
    semi = part.find(';');
    const std::string_view param = detail::trim_header_blanks(part.substr(0, semi));
    const std::size_t eq = param.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = detail::trim_header_blanks(param.substr(0, eq));
    std::string_view value = detail::trim_header_blanks(param.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    if (iequals(key, "q")) {
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), result.q);
      if (ec != std::errc() || ptr != value.data() + value.size() || !(result.q >= 0 && result.q <= 1)) {
        result.valid = false;
      }
    } else if (iequals(key, "version")) {
      result.version = value;
    }
  }
  return result;
}

template <class Fn>
void for_each_part(std::string_view header, Fn&& fn) {
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    const HeaderPart part = parse_part(header.substr(0, comma));
    if (part.valid && !part.token.empty()) fn(part);
    if (comma == std::string_view::npos) break;
    header.remove_prefix(comma + 1);
  }
}

}  // namespace

ExpositionFormat negotiate_format(std::string_view accept_header) {
  ExpositionFormat best = ExpositionFormat::kPrometheusText004;
  double best_q = 0.0;
  for_each_part(accept_header, [&](const HeaderPart& part) {
    ExpositionFormat format;
    const std::string_view type = part.token;
    if (iequals(type, "application/openmetrics-text") &&
        (part.version.empty() || part.version == "1.0.0")) {
      format = ExpositionFormat::kOpenMetrics100;
    } else if (iequals(type, "application/*")) {
      format = ExpositionFormat::kOpenMetrics100;
    } else if (iequals(type, "text/plain") &&
               (part.version.empty() || part.version == "0.0.4" || part.version == "1.0.0")) {
      format = ExpositionFormat::kPrometheusText004;  // text 1.0.0 differs only for UTF-8 names
    } else if (iequals(type, "text/*") || iequals(type, "*/*")) {
      format = ExpositionFormat::kPrometheusText004;
    } else {
      return;
    }
    if (part.q > best_q) {  // strictly greater: the first listed wins a tie
      best_q = part.q;
      best = format;
    }
  });
  return best;
}

bool accepts_gzip(std::string_view accept_encoding_header) {
  double gzip_q = -1;
  double star_q = -1;
  for_each_part(accept_encoding_header, [&](const HeaderPart& part) {
    if (iequals(part.token, "gzip") || iequals(part.token, "x-gzip")) {
      gzip_q = part.q;
    } else if (part.token == "*") {
      star_q = part.q;
    }
  });
  return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}

std::string_view content_type(ExpositionFormat format) {
  return format == ExpositionFormat::kOpenMetrics100
             ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
             : "text/plain; version=0.0.4; charset=utf-8";
}

void render(const Registry& registry, ExpositionFormat format, std::string& out) {
  detail::RegistryAccess::run_hooks(registry);
  detail::RegistryAccess::write_families(registry, format, out);
}

std::string gzip_compress(std::string_view data) {
  z_stream stream{};
  // 15 + 16: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::bad_alloc();
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(data.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);  // deflateBound guarantees one call suffices
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::bad_alloc();
  return out;
}

ScrapeResponse render_scrape(const Registry& registry, std::string_view accept,
                             std::string_view accept_encoding) {
  const ExpositionFormat format = negotiate_format(accept);
  ScrapeResponse response;
  response.content_type = content_type(format);
  render(registry, format, response.body);
  if (accepts_gzip(accept_encoding)) {
    response.body = gzip_compress(response.body);
    response.gzipped = true;
  }
  return response;
}

}  // namespace inferscope::metrics
