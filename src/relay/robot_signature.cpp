#include "relay/robot_signature.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace inferscope::relay {
namespace {

std::string hmac_sha256(std::string_view key, std::string_view message) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), digest, &length);
  return std::string(reinterpret_cast<const char*>(digest), length);
}

}  // namespace

std::string feishu_signature(std::int64_t timestamp_seconds, std::string_view secret) {
  std::string key = std::to_string(timestamp_seconds);
  key += '\n';
  key += secret;
  return base64_encode(hmac_sha256(key, ""));
}

std::string dingtalk_signature(std::int64_t timestamp_ms, std::string_view secret) {
  std::string message = std::to_string(timestamp_ms);
  message += '\n';
  message += secret;
  return base64_encode(hmac_sha256(secret, message));
}

std::string base64_encode(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                      reinterpret_cast<const unsigned char*>(bytes.data()),
                                      static_cast<int>(bytes.size()));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size() * 3);
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') || (u >= '0' && u <= '9') ||
                            u == '-' || u == '_' || u == '.' || u == '~';
    if (unreserved) {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

}  // namespace inferscope::relay
