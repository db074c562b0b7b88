#include "loadgen/base_url.h"

namespace inferscope::loadgen {

Result<Target> parse_base_url(std::string_view url) { return net::parse_http_url(url, "--base-url"); }

}  // namespace inferscope::loadgen
