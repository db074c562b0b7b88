// File: authorization.cpp
#include "net/authorization.h"

#include <array>
#include <optional>

namespace inferscope::net {
namespace {

constexpr std::string_view kBase64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int authorization_base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// authorization_base64_decode decodes strict, padded base64; nullopt for anything else
// (characters outside the alphabet, a bad length, misplaced padding, non-zero spare bits).
std::optional<std::string> authorization_base64_decode(std::string_view text) {
  if (text.empty() || text.size() % 4 != 0) return std::nullopt;
  std::size_t padding = 0;
  if (text.back() == '=') padding = text[text.size() - 2] == '=' ? 2 : 1;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (std::size_t i = 0; i < text.size(); i += 4) {
    const bool last = i + 4 == text.size();
    std::array<int, 4> v{};
    for (std::size_t k = 0; k < 4; ++k) {
      const bool pad = last && k >= 4 - padding;
      v[k] = pad ? (text[i + k] == '=' ? 0 : -1) : authorization_base64_value(text[i + k]);
      if (v[k] < 0) return std::nullopt;
    }
    const unsigned triple = (unsigned(v[0]) << 18) | (unsigned(v[1]) << 12) | (unsigned(v[2]) << 6) | unsigned(v[3]);
    out.push_back(static_cast<char>((triple >> 16) & 0xff));
    if (!(last && padding == 2)) out.push_back(static_cast<char>((triple >> 8) & 0xff));
    if (!(last && padding >= 1)) out.push_back(static_cast<char>(triple & 0xff));
    if (last && padding == 2 && (triple & 0xffff) != 0) return std::nullopt;  // spare bits must be zero
    if (last && padding == 1 && (triple & 0xff) != 0) return std::nullopt;
  }
  return out;
}

bool authorization_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool authorization_token68_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '+' || c == '/';
}

// authorization_is_token68 checks RFC 7235's token68: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
// "+" / "/" ) *"=".
bool authorization_is_token68(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && authorization_token68_char(text[i])) ++i;
  if (i == 0) return false;
  while (i < text.size() && text[i] == '=') ++i;
  return i == text.size();
}

Error authorization_error(std::string_view why) {
  return Error{"cannot parse Authorization header: " + std::string(why)};
}

}  // namespace

Result<Credentials> parse_authorization(std::string_view value) {
  while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
  while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
  if (value.empty()) return authorization_error("it is empty");
  if (value.size() > kMaxAuthorizationBytes) {
    return authorization_error("it is over " + std::to_string(kMaxAuthorizationBytes) + " bytes");
  }
  const std::size_t space = value.find(' ');
  if (space == std::string_view::npos) return authorization_error("it has a scheme but no credentials");
  const std::string_view scheme = value.substr(0, space);
  std::string_view rest = value.substr(space);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.empty()) return authorization_error("it has a scheme but no credentials");
  Credentials credentials;
  if (authorization_iequals(scheme, "Basic")) {
    credentials.scheme = AuthScheme::basic;
    auto decoded = authorization_base64_decode(rest);
    if (!decoded) return authorization_error("its Basic credentials are not valid base64");
    const std::size_t colon = decoded->find(':');
    if (colon == std::string::npos) return authorization_error("its Basic credentials have no ':' between user and password");
    if (colon == 0) return authorization_error("its Basic credentials have an empty user");
    for (const char c : *decoded) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return authorization_error("its Basic credentials hold a control character");
      }
    }
    credentials.user = decoded->substr(0, colon);
    credentials.password = decoded->substr(colon + 1);
    return credentials;
  }
  if (authorization_iequals(scheme, "Bearer")) {
    if (!authorization_is_token68(rest)) return authorization_error("its Bearer token holds characters a token cannot have");
    credentials.scheme = AuthScheme::bearer;
    credentials.token = std::string(rest);
    return credentials;
  }
  // The scheme is not echoed either: a client that sent a bare secret would see it in our logs.
  return authorization_error("its scheme is not Basic or Bearer");
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const unsigned triple = (unsigned(static_cast<unsigned char>(bytes[i])) << 16) |
                            (unsigned(static_cast<unsigned char>(bytes[i + 1])) << 8) |
                            unsigned(static_cast<unsigned char>(bytes[i + 2]));
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kBase64Alphabet[(triple >> shift) & 63]);
  }
  const std::size_t left = bytes.size() - i;
  if (left > 0) {
    unsigned triple = unsigned(static_cast<unsigned char>(bytes[i])) << 16;
    if (left == 2) triple |= unsigned(static_cast<unsigned char>(bytes[i + 1])) << 8;
    out.push_back(kBase64Alphabet[(triple >> 18) & 63]);
    out.push_back(kBase64Alphabet[(triple >> 12) & 63]);
    out.push_back(left == 2 ? kBase64Alphabet[(triple >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::string basic_authorization(std::string_view user, std::string_view password) {
  std::string plain(user);
  plain += ':';
  plain += password;
  return "Basic " + base64_encode(plain);
}

}  // namespace inferscope::net
