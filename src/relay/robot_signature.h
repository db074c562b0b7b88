// File: robot_signature.h
// Signatures the chat robots require when "signature verification" is on, and the encoders they
// need. Example: std::string sign = dingtalk_signature(1577262236757, secret);  // base64
// Pure functions, thread-safe. Test vectors: ../shared/reference/prometheus-stack.md §12.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace inferscope::relay {

// feishu_signature returns base64(HMAC-SHA256(key = timestamp + "\n" + secret, message = "")),
// Feishu/Lark's body "sign" field; timestamp in Unix seconds.
std::string feishu_signature(std::int64_t timestamp_seconds, std::string_view secret);

// dingtalk_signature returns base64(HMAC-SHA256(key = secret, message = timestamp + "\n" + secret)),
// DingTalk's "sign" URL parameter before URL encoding; timestamp in Unix milliseconds.
std::string dingtalk_signature(std::int64_t timestamp_ms, std::string_view secret);

// base64_encode encodes bytes with the standard alphabet and padding.
std::string base64_encode(std::string_view bytes);

// url_encode percent-encodes everything but RFC 3986 unreserved characters.
std::string url_encode(std::string_view text);

}  // namespace inferscope::relay
