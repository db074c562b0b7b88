// File: authorization.h
// The `Authorization` request header of HTTP authentication: Basic (RFC 7617, user and password
// in base64) and Bearer (RFC 6750, an opaque token68). A server reads it with
// parse_authorization and then checks the credentials against its own users and tokens; clients
// and tests build a Basic header with basic_authorization. Example:
//   auto credentials = net::parse_authorization(request.header("Authorization"));
//   if (!credentials) return 401;  // credentials.error().message never holds the secret
//   if (credentials->scheme == net::AuthScheme::bearer) check_token(credentials->token);
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include <inferscope/common/result.h>

namespace inferscope::net {

enum class AuthScheme { basic, bearer };

// Credentials are what an Authorization header carries: user and password for Basic, the token
// for Bearer (the other fields stay empty).
struct Credentials {
  AuthScheme scheme = AuthScheme::basic;
  std::string user;
  std::string password;
  std::string token;
};

// kMaxAuthorizationBytes bounds the header value parse_authorization accepts.
inline constexpr std::size_t kMaxAuthorizationBytes = 4096;

// parse_authorization parses one Authorization header value: a scheme (case-insensitive) and,
// after one or more spaces, its credentials. Basic needs strict, padded base64 of "user:password"
// with a non-empty user and no control characters; Bearer needs a token68. Fails with one line
// "cannot parse Authorization header: <why>" that never repeats any part of the credentials.
Result<Credentials> parse_authorization(std::string_view value);

// basic_authorization returns the header value "Basic base64(user:password)".
std::string basic_authorization(std::string_view user, std::string_view password);

// base64_encode is standard, padded base64 (RFC 4648 section 4).
std::string base64_encode(std::string_view bytes);

}  // namespace inferscope::net
