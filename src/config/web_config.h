// File: web_config.h
// WebConfig is the `web:` section of up's config, in the style of Prometheus' web config file:
// TLS for up's public server (`up --listen`), the users who may sign in (bcrypt password hashes
// only, never plain text) and the bearer tokens machines present (each read from its own file,
// which only its owner may read), each with one role. Example:
//   web:
//     tls: {cert_file: /etc/inferscope/tls.crt, key_file: /etc/inferscope/tls.key}
//     users:
//       alice: {password_hash: "$2y$10$...", role: operator}
//     tokens:
//       - {name: alertmanager, file: /etc/inferscope/alertmanager.token, role: ingest}
// Roles: viewer reads (the page, status, doctor, traces); operator is a viewer who may also act
// (drill, report sending, anything that sends a message or changes state); ingest may only post
// data in (OTLP spans, Alertmanager's webhook). Plain value types; load_web_tokens reads files.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::config {

enum class WebRole { viewer, operator_, ingest };

// web_role_name is "viewer", "operator" or "ingest".
std::string_view web_role_name(WebRole role);

// web_role_allows reports whether a holder of `held` may use a route that needs `needed`:
// operator includes viewer; ingest reaches ingest routes only; viewer only viewer routes.
bool web_role_allows(WebRole held, WebRole needed);

// WebTls names the PEM files of up's public server; client_ca_file set = client certificates
// required (mutual TLS).
struct WebTls {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
};

// WebUser is one person who signs in with Basic authentication.
struct WebUser {
  std::string name;
  std::string password_hash;  // bcrypt ($2a$, $2b$ or $2y$), checked by crypt(3)
  WebRole role = WebRole::viewer;
  std::string where;  // "file:line:col" of the entry, for later errors
};

// WebToken is one bearer token, read from `file` by load_web_tokens (never from the config).
struct WebToken {
  std::string name;
  std::string file;
  WebRole role = WebRole::ingest;
  std::string where;  // "file:line:col" of the entry's `file`
  std::string value;  // filled by load_web_tokens; never logged
};

struct WebConfig {
  std::optional<WebTls> tls;
  std::vector<WebUser> users;
  std::vector<WebToken> tokens;

  // has_auth reports whether anyone at all can be authenticated.
  bool has_auth() const { return !users.empty() || !tokens.empty(); }
};

// is_bcrypt_hash reports whether `text` has the shape of a bcrypt hash: $2a$, $2b$ or $2y$, a cost
// of 04..31, then 53 characters of bcrypt's base64 alphabet.
bool is_bcrypt_hash(std::string_view text);

// kMinWebTokenBytes is the shortest token load_web_tokens accepts.
inline constexpr std::size_t kMinWebTokenBytes = 16;

// load_web_tokens reads every token's file into its `value`: the file's content without trailing
// whitespace, at least kMinWebTokenBytes of token68 characters (what a Bearer header can carry).
// A file that group or others may read or write, a symlink's target likewise, an unreadable or
// empty file, and two tokens with one value fail with "<where>: key 'web.tokens[i].file': cannot
// use token file <path>: <why>", one line that never holds a token.
Result<void> load_web_tokens(WebConfig& web);

}  // namespace inferscope::config
