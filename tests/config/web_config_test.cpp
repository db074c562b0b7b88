// Tests of the `web:` section (config/web_config.h): TLS files, users with bcrypt hashes only,
// tokens from files only their owner may read, roles, and one-line file:line:col errors that
// never hold a password or token.
#include "config/web_config.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <fstream>

#include "config/stack_config.h"
#include "support/temp_dir.h"

namespace inferscope::config {
namespace {

// A bcrypt test vector of the OpenBSD suite (password "U*U", cost 5).
constexpr const char* kHash = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

std::string web_yaml(const std::string& web) { return "targets:\n  - url: http://127.0.0.1:8000\nweb:\n" + web; }

std::string write_token(const testing::TempDir& dir, const std::string& name, const std::string& content, mode_t mode) {
  const std::string path = (dir.path() / name).string();
  std::ofstream(path) << content;
  ::chmod(path.c_str(), mode);
  return path;
}

TEST(WebConfig, ReadsTlsUsersTokensAndRoles) {
  const std::string yaml = web_yaml(std::string("  tls:\n    cert_file: /etc/t.crt\n    key_file: /etc/t.key\n"
                                                "    client_ca_file: /etc/ca.pem\n"
                                                "  users:\n    alice: {password_hash: \"") + kHash +
                                    "\", role: operator}\n    bob:\n      password_hash: '" + kHash +
                                    "'\n      role: viewer\n"
                                    "  tokens:\n    - {name: am, file: /etc/am.token, role: ingest}\n");
  auto config = parse_stack_config(yaml, "up.yaml");
  ASSERT_TRUE(config.ok()) << config.error().message;
  ASSERT_TRUE(config->web.has_value());
  const WebConfig& web = *config->web;
  ASSERT_TRUE(web.tls.has_value());
  EXPECT_EQ(web.tls->cert_file, "/etc/t.crt");
  EXPECT_EQ(web.tls->key_file, "/etc/t.key");
  EXPECT_EQ(web.tls->client_ca_file, "/etc/ca.pem");
  ASSERT_EQ(web.users.size(), 2u);
  EXPECT_EQ(web.users[0].name, "alice");
  EXPECT_EQ(web.users[0].role, WebRole::operator_);
  EXPECT_EQ(web.users[0].password_hash, kHash);
  EXPECT_EQ(web.users[0].where, "up.yaml:9:5");
  EXPECT_EQ(web.users[1].role, WebRole::viewer);
  ASSERT_EQ(web.tokens.size(), 1u);
  EXPECT_EQ(web.tokens[0].name, "am");
  EXPECT_EQ(web.tokens[0].file, "/etc/am.token");
  EXPECT_EQ(web.tokens[0].role, WebRole::ingest);
  EXPECT_TRUE(web.tokens[0].value.empty());  // read later, by load_web_tokens
  EXPECT_TRUE(web.has_auth());
  // No web: section: nothing.
  auto plain = parse_stack_config("targets:\n  - url: http://127.0.0.1:8000\n", "up.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->web.has_value());
}

TEST(WebConfig, RolesIncludeAsDocumented) {
  EXPECT_TRUE(web_role_allows(WebRole::operator_, WebRole::viewer));
  EXPECT_TRUE(web_role_allows(WebRole::operator_, WebRole::operator_));
  EXPECT_FALSE(web_role_allows(WebRole::operator_, WebRole::ingest));
  EXPECT_FALSE(web_role_allows(WebRole::viewer, WebRole::operator_));
  EXPECT_FALSE(web_role_allows(WebRole::viewer, WebRole::ingest));
  EXPECT_TRUE(web_role_allows(WebRole::ingest, WebRole::ingest));
  EXPECT_FALSE(web_role_allows(WebRole::ingest, WebRole::viewer));
  EXPECT_EQ(web_role_name(WebRole::operator_), "operator");
}

TEST(WebConfig, RefusesPlainTextSecretsWithoutRepeatingThem) {
  const std::string secret = "hunter2-very-secret";
  struct Case {
    std::string web;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"  users:\n    alice: {password: " + secret + ", role: viewer}\n",
       "up.yaml:5:23: key 'web.users.alice.password': plain-text passwords are refused"},
      {"  users:\n    alice: {password_hash: " + secret + ", role: viewer}\n",
       "up.yaml:5:28: key 'web.users.alice.password_hash': is not a bcrypt hash"},
      {"  users:\n    alice: {password_hash: \"$2a$03$" + std::string(kHash).substr(7) + "\", role: viewer}\n",
       "key 'web.users.alice.password_hash': is not a bcrypt hash"},
      {"  tokens:\n    - {name: am, token: " + secret + ", role: ingest}\n",
       "up.yaml:5:25: key 'web.tokens[0].token': tokens are never written in the config"},
  };
  for (const Case& c : cases) {
    auto config = parse_stack_config(web_yaml(c.web), "up.yaml");
    ASSERT_FALSE(config.ok()) << c.web;
    EXPECT_NE(config.error().message.find(c.expected), std::string::npos) << config.error().message;
    EXPECT_EQ(config.error().message.find(secret), std::string::npos) << config.error().message;
    EXPECT_EQ(config.error().message.find('\n'), std::string::npos);
  }
}

TEST(WebConfig, RefusesMalformedSections) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  tls: {cert_file: /a}\n", "key 'web.tls.key_file': is required"},
      {"  tls: {cert_file: /a, key_file: /b, ca: /c}\n", "key 'web.tls.ca': unknown key"},
      {std::string("  users:\n    alice: {password_hash: \"") + kHash + "\"}\n", "key 'web.users.alice.role': is required"},
      {std::string("  users:\n    alice: {password_hash: \"") + kHash + "\", role: admin}\n",
       "key 'web.users.alice.role': expected viewer, operator or ingest, got \"admin\""},
      {"  users: [alice]\n", "key 'web.users': expected a mapping"},
      {"  tokens:\n    - {name: am, file: /a, role: ingest}\n    - {name: am, file: /b, role: ingest}\n",
       "up.yaml:6:14: key 'web.tokens[1].name': another token has this name"},
      {"  tokens:\n    - {name: am, role: ingest}\n", "key 'web.tokens[0].file': is required"},
      {"  listen: 0.0.0.0:1\n", "key 'web.listen': unknown key"},
  };
  for (const auto& [web, expected] : cases) {
    auto config = parse_stack_config(web_yaml(web), "up.yaml");
    ASSERT_FALSE(config.ok()) << web;
    EXPECT_NE(config.error().message.find(expected), std::string::npos) << config.error().message;
    EXPECT_EQ(config.error().message.rfind("up.yaml:", 0), 0u) << config.error().message;
  }
}

TEST(WebConfig, BcryptShape) {
  EXPECT_TRUE(is_bcrypt_hash(kHash));
  std::string y = kHash;
  y[2] = 'y';
  EXPECT_TRUE(is_bcrypt_hash(y));
  y[2] = 'x';
  EXPECT_FALSE(is_bcrypt_hash(y));
  EXPECT_FALSE(is_bcrypt_hash(std::string(kHash).substr(0, 59)));
  EXPECT_FALSE(is_bcrypt_hash("{SHA}" + std::string(55, 'a')));
  std::string bad_char = kHash;
  bad_char[30] = '$';
  EXPECT_FALSE(is_bcrypt_hash(bad_char));
}

TEST(WebConfig, LoadsTokensFromPrivateFiles) {
  testing::TempDir dir("web-tokens");
  const std::string token_a(32, 'a');
  const std::string token_b = "b1234567890abcdef-_.~+/==";
  WebConfig web;
  web.tokens.push_back({"am", write_token(dir, "am.token", token_a + "\n", 0600), WebRole::ingest, "up.yaml:3:4", ""});
  web.tokens.push_back({"otel", write_token(dir, "otel.token", token_b, 0400), WebRole::ingest, "up.yaml:4:4", ""});
  auto loaded = load_web_tokens(web);
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(web.tokens[0].value, token_a);
  EXPECT_EQ(web.tokens[1].value, token_b);
}

TEST(WebConfig, RefusesTokenFilesOthersCanReadAndBadTokens) {
  testing::TempDir dir("web-tokens-bad");
  const std::string secret = "s3cr3t-token-value-0123456789";
  struct Case {
    std::string file;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {write_token(dir, "group.token", secret, 0640), "its mode is 0640, which lets group or others at it; chmod 600 it"},
      {write_token(dir, "world.token", secret, 0604), "its mode is 0604"},
      {write_token(dir, "empty.token", "\n", 0600), "it is empty"},
      {write_token(dir, "short.token", "abc", 0600), "shorter than 16 characters"},
      {write_token(dir, "space.token", secret + " " + secret, 0600), "a token is one line"},
      {(dir.path() / "missing.token").string(), "no such file"},
      {dir.path().string(), "not a regular file"},
  };
  for (const Case& c : cases) {
    WebConfig web;
    web.tokens.push_back({"am", c.file, WebRole::ingest, "up.yaml:9:11", ""});
    auto loaded = load_web_tokens(web);
    ASSERT_FALSE(loaded.ok()) << c.file;
    const std::string& message = loaded.error().message;
    EXPECT_EQ(message.rfind("up.yaml:9:11: key 'web.tokens[0].file': cannot use token file " + c.file + ": ", 0), 0u)
        << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    EXPECT_EQ(message.find(secret), std::string::npos) << message;
  }
  // Two clients sharing one token could not be told apart (nor one revoked).
  WebConfig shared;
  shared.tokens.push_back({"am", write_token(dir, "a.token", secret, 0600), WebRole::ingest, "up.yaml:3:4", ""});
  shared.tokens.push_back({"otel", write_token(dir, "b.token", secret, 0600), WebRole::ingest, "up.yaml:4:4", ""});
  auto loaded = load_web_tokens(shared);
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.error().message.find("up.yaml:4:4: key 'web.tokens[1].file'"), std::string::npos);
  EXPECT_NE(loaded.error().message.find("same token as token 'am'"), std::string::npos);
  EXPECT_EQ(loaded.error().message.find(secret), std::string::npos);
}

}  // namespace
}  // namespace inferscope::config
