// File: web_sections.cpp
// `web:` (TLS, users, tokens, roles) of up's config, and reading the token files.
#include <sys/stat.h>

#include <fstream>
#include <set>
#include <sstream>

#include "config/detail/section_readers.h"
#include "config/web_config.h"

namespace inferscope::config {

std::string_view web_role_name(WebRole role) {
  switch (role) {
    case WebRole::viewer: return "viewer";
    case WebRole::operator_: return "operator";
    case WebRole::ingest: return "ingest";
  }
  return "viewer";
}

bool web_role_allows(WebRole held, WebRole needed) {
  if (held == needed) return true;
  return held == WebRole::operator_ && needed == WebRole::viewer;
}

bool is_bcrypt_hash(std::string_view text) {
  // $2b$10$ + 22 characters of salt + 31 of hash.
  if (text.size() != 60 || text[0] != '$' || text[1] != '2' || text[3] != '$' || text[6] != '$') return false;
  if (text[2] != 'a' && text[2] != 'b' && text[2] != 'y') return false;
  if (text[4] < '0' || text[4] > '9' || text[5] < '0' || text[5] > '9') return false;
  const int cost = (text[4] - '0') * 10 + (text[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (std::size_t i = 7; i < text.size(); ++i) {
    const char c = text[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '/';
    if (!ok) return false;
  }
  return true;
}

namespace detail {
namespace {

std::string web_mark(std::string_view file, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  return std::string(file) + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

WebRole read_web_role(const Reader& r, const YAML::Node& node, const std::string& key) {
  const std::string text = r.scalar(node, key);
  if (text == "viewer") return WebRole::viewer;
  if (text == "operator") return WebRole::operator_;
  if (text == "ingest") return WebRole::ingest;
  r.fail(node, key, "expected viewer, operator or ingest, got \"" + text + "\"");
}

}  // namespace

void read_web(const Reader& r, const YAML::Node& node, std::string_view file, WebConfig& web) {
  r.expect_keys(node, "web", {"tls", "users", "tokens"});
  if (const YAML::Node tls = node["tls"]) {
    r.expect_keys(tls, "web.tls", {"cert_file", "key_file", "client_ca_file"});
    WebTls files;
    if (!tls["cert_file"]) r.fail(tls, "web.tls.cert_file", "is required (the PEM certificate chain of the server)");
    if (!tls["key_file"]) r.fail(tls, "web.tls.key_file", "is required (the PEM private key of the certificate)");
    files.cert_file = r.non_empty(tls["cert_file"], "web.tls.cert_file");
    files.key_file = r.non_empty(tls["key_file"], "web.tls.key_file");
    if (tls["client_ca_file"]) files.client_ca_file = r.non_empty(tls["client_ca_file"], "web.tls.client_ca_file");
    web.tls = std::move(files);
  }
  if (const YAML::Node users = node["users"]) {
    if (!users.IsMap()) r.fail(users, "web.users", "expected a mapping of user name: {password_hash, role}");
    for (const auto& entry : users) {
      const std::string name = entry.first.Scalar();
      const std::string path = "web.users." + name;
      if (!valid_name(name)) r.fail(entry.first, path, "a user name is letters, digits, '_', '-' and '.'");
      const YAML::Node user = entry.second;
      // Refuse a plain-text password without ever repeating it.
      if (user.IsMap() && user["password"]) {
        r.fail(user["password"], path + ".password",
               "plain-text passwords are refused; give a bcrypt hash as password_hash (htpasswd -nBC 12 " + name + ")");
      }
      r.expect_keys(user, path, {"password_hash", "role"});
      if (!user["password_hash"]) r.fail(user, path + ".password_hash", "is required (a bcrypt hash: htpasswd -nBC 12 " + name + ")");
      if (!user["role"]) r.fail(user, path + ".role", "is required (viewer, operator or ingest)");
      const YAML::Node hash = user["password_hash"];
      if (!hash.IsScalar() || !is_bcrypt_hash(hash.Scalar())) {
        r.fail(hash, path + ".password_hash",
               "is not a bcrypt hash ($2a$, $2b$ or $2y$, cost 04..31, 60 characters; plain text is refused; make one "
               "with htpasswd -nBC 12 " + name + ")");
      }
      web.users.push_back({name, hash.Scalar(), read_web_role(r, user["role"], path + ".role"), web_mark(file, entry.first)});
    }
  }
  if (const YAML::Node tokens = node["tokens"]) {
    if (!tokens.IsSequence()) r.fail(tokens, "web.tokens", "expected a list of tokens (- {name, file, role})");
    std::set<std::string> names;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const std::string path = "web.tokens[" + std::to_string(i) + "]";
      const YAML::Node token = tokens[i];
      if (token.IsMap() && (token["token"] || token["value"])) {
        const YAML::Node given = token["token"] ? token["token"] : token["value"];
        r.fail(given, path + (token["token"] ? ".token" : ".value"),
               "tokens are never written in the config; put the token in a file only its owner can read (chmod 600) "
               "and name it with file");
      }
      r.expect_keys(token, path, {"name", "file", "role"});
      for (const char* key : {"name", "file", "role"}) {
        if (!token[key]) r.fail(token, path + "." + key, "is required");
      }
      WebToken t;
      t.name = r.non_empty(token["name"], path + ".name");
      if (!valid_name(t.name)) r.fail(token["name"], path + ".name", "a token name is letters, digits, '_', '-' and '.'");
      if (!names.insert(t.name).second) r.fail(token["name"], path + ".name", "another token has this name");
      t.file = r.non_empty(token["file"], path + ".file");
      t.role = read_web_role(r, token["role"], path + ".role");
      t.where = web_mark(file, token["file"]);
      web.tokens.push_back(std::move(t));
    }
  }
}

}  // namespace detail

namespace {

bool web_token_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~' || c == '+' || c == '/' || c == '=';
}

Result<std::string> read_web_token_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return make_error("no such file or not accessible");
  if (!S_ISREG(info.st_mode)) return make_error("not a regular file");
  if ((info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return make_error(std::string("its mode is ") + mode + ", which lets group or others at it; chmod 600 it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("not readable by this user");
  std::ostringstream text;
  text << in.rdbuf();
  std::string value = text.str();
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ' || value.back() == '\t')) {
    value.pop_back();
  }
  if (value.empty()) return make_error("it is empty");
  for (const char c : value) {
    if (!web_token_char(c)) {
      return make_error("a token is one line of letters, digits and -._~+/= (what a Bearer header carries)");
    }
  }
  if (value.front() == '=') return make_error("a token cannot start with '='");
  if (value.size() < kMinWebTokenBytes) {
    return make_error("the token is shorter than " + std::to_string(kMinWebTokenBytes) +
                      " characters (make one with: openssl rand -hex 32)");
  }
  return value;
}

}  // namespace

Result<void> load_web_tokens(WebConfig& web) {
  for (std::size_t i = 0; i < web.tokens.size(); ++i) {
    WebToken& token = web.tokens[i];
    const std::string prefix = token.where + ": key 'web.tokens[" + std::to_string(i) + "].file': cannot use token file " +
                               token.file + ": ";
    auto value = read_web_token_file(token.file);
    if (!value) return make_error(detail::one_line(prefix + value.error().message));
    for (std::size_t j = 0; j < i; ++j) {
      if (web.tokens[j].value == *value) {
        return make_error(detail::one_line(prefix + "it holds the same token as token '" + web.tokens[j].name +
                                           "'; give each client its own"));
      }
    }
    token.value = std::move(*value);
  }
  return {};
}

}  // namespace inferscope::config
