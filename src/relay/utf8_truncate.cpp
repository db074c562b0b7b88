#include "relay/utf8_truncate.h"

namespace inferscope::relay {

std::size_t utf8_prefix_length(std::string_view text, std::size_t max_bytes) noexcept {
  if (text.size() <= max_bytes) return text.size();
  std::size_t n = max_bytes;
  // Step back over continuation bytes (10xxxxxx): text[n] must start a character.
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  return n;
}

std::string truncate_utf8(std::string_view text, std::size_t max_bytes, std::string_view marker) {
  if (text.size() <= max_bytes) return std::string(text);
  if (marker.size() >= max_bytes) return std::string(marker.substr(0, utf8_prefix_length(marker, max_bytes)));
  std::string out(text.substr(0, utf8_prefix_length(text, max_bytes - marker.size())));
  out += marker;
  return out;
}

}  // namespace inferscope::relay
