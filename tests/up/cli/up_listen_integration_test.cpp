// Tests of `inferscope up --listen`: up's routes on a second, public server over real TLS (a CA
// made in the test by the openssl CLI; curl as the client) behind the web: section's users,
// tokens and roles. Anonymous requests get 401 on every route, a viewer 403 on operator and
// ingest routes, each role reaches its routes; wrong passwords are slowed down (429) and logged
// without the password; bad token files, plain-text passwords and a non-loopback address without
// TLS and auth are one-line errors at start; Debian's real Alertmanager delivers to the public
// webhook with a bearer token (http_config.authorization) and its CA (tls_config); the
// OpenTelemetry JS SDK delivers spans in protobuf and JSON with OTEL_EXPORTER_OTLP_HEADERS, and
// gets 401 without it.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include "serve/server.h"
#include "sim_serve.h"
#include "support/peers.h"
#include "support/test_ca.h"
#include "support/test_process.h"
#include "up/stack_test_support.h"
#include "up/up_access.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using testing::TempDir;
using testing::start_sim_serve;
using testing::UpProcess;
using testing::wait_until;

constexpr const char* kAlicePassword = "alice-Correct-Horse";
constexpr const char* kBobPassword = "bob-Battery-Staple";
constexpr const char* kIngestToken = "ingest-0123456789abcdef0123456789abcdef";

std::string listen_test_write(const std::filesystem::path& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
  return path.string();
}

// ListenStack: up with web: {tls, users alice (operator) and bob (viewer), token am (ingest)}
// and --listen 127.0.0.1:0, its public URL parsed from the "listening on" line.
struct ListenStack {
  TempDir dir{"up-listen"};
  inferscope::testing::TestCa ca{dir.path()};
  std::unique_ptr<serve::Server> serve = start_sim_serve();
  std::string config_file;
  std::string public_url;
  std::unique_ptr<UpProcess> up;

  bool start() {
    if (!ca.ok() || !serve) return false;
    const std::string token_file = listen_test_write(dir.path() / "am.token", std::string(kIngestToken) + "\n", 0600);
    std::ostringstream yaml;
    yaml << "targets:\n  - name: sim\n    url: http://127.0.0.1:" << serve->port() << "/metrics\n"
         << "web:\n  tls:\n    cert_file: " << ca.cert_file() << "\n    key_file: " << ca.key_file() << "\n"
         << "  users:\n    alice: {password_hash: \"" << *bcrypt_hash(kAlicePassword, 4) << "\", role: operator}\n"
         << "    bob: {password_hash: \"" << *bcrypt_hash(kBobPassword, 4) << "\", role: viewer}\n"
         << "  tokens:\n    - {name: am, file: " << token_file << ", role: ingest}\n";
    config_file = listen_test_write(dir.path() / "up.yaml", yaml.str(), 0600);
    up = std::make_unique<UpProcess>(std::vector<std::string>{
        "up", "--config", config_file, "--port", "0", "--prometheus-port", "0", "--alertmanager-port", "0",
        "--scrape-interval", "1s", "--state-dir", (dir.path() / "state").string(), "--listen", "127.0.0.1:0"});
    if (!up->started()) return false;
    const auto line = up->wait_line("inferscope up: listening on ", 60s);
    if (!line) return false;
    static const std::regex kListening(R"(listening on (https://127\.0\.0\.1:[0-9]+) \(TLS, 2 users, 1 tokens\))");
    std::smatch m;
    if (!std::regex_search(*line, m, kListening)) return false;
    public_url = m[1];
    return up->wait_ready(60s).has_value();
  }

  inferscope::testing::CurlReply request(const std::string& method, const std::string& path,
                                         std::vector<std::string> auth) {
    std::vector<std::string> args = {"--cacert", ca.ca_file(), "-X", method};
    if (method == "POST") args.insert(args.end(), {"-H", "Content-Type: application/json", "--data-binary", "{}"});
    args.insert(args.end(), auth.begin(), auth.end());
    return inferscope::testing::curl_https(public_url + path, args);
  }
};

// reached: an answer of the route's own handler (a client error of its own included), not a
// refusal of the access check and not a failed connection.
bool reached(int status) { return status >= 200 && status != 401 && status != 403 && status != 429; }

// route_path turns a table entry into a path its route answers (a prefix gets a suffix).
std::string route_path(const UpRouteRole& entry) {
  return std::string(entry.path) + (entry.prefix ? "0123456789abcdef0123456789abcdef" : "");
}

TEST(UpListenIntegrationTest, RolesOverTlsAndWrongPasswordsBackOff) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ListenStack stack;
  ASSERT_TRUE(stack.start()) << stack.ca.error() << (stack.up ? stack.up->output() : "");
  const std::vector<std::string> alice = {"-u", std::string("alice:") + kAlicePassword};
  const std::vector<std::string> bob = {"-u", std::string("bob:") + kBobPassword};
  const std::vector<std::string> token = {"-H", std::string("Authorization: Bearer ") + kIngestToken};
  for (const UpRouteRole& entry : kUpRouteRoles) {
    if (entry.path == "/queues/") continue;  // served only with a redis target
    if (entry.sign_in) continue;             // /login and /logout: PageLoginOverTls
    const std::string method(entry.method);
    const std::string path = route_path(entry);
    SCOPED_TRACE(method + " " + path);
    EXPECT_EQ(stack.request(method, path, {}).status, 401);
    const int as_viewer = stack.request(method, path, bob).status;
    const int as_operator = stack.request(method, path, alice).status;
    const int as_ingest = stack.request(method, path, token).status;
    switch (entry.role) {
      case config::WebRole::viewer:
        EXPECT_TRUE(reached(as_viewer)) << as_viewer;
        EXPECT_TRUE(reached(as_operator)) << as_operator;
        EXPECT_EQ(as_ingest, 403);
        break;
      case config::WebRole::operator_:
        EXPECT_EQ(as_viewer, 403);
        EXPECT_TRUE(reached(as_operator)) << as_operator;
        EXPECT_EQ(as_ingest, 403);
        break;
      case config::WebRole::ingest:
        EXPECT_EQ(as_viewer, 403);
        EXPECT_EQ(as_operator, 403);
        EXPECT_TRUE(reached(as_ingest)) << as_ingest;
        break;
    }
  }
  // A viewer sees the page and the status for real.
  auto page = stack.request("GET", "/", bob);
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  EXPECT_EQ(stack.request("GET", "/api/status", bob).status, 200);
  // A client that does not trust the CA gets nothing; the loopback --port server is unchanged.
  EXPECT_EQ(inferscope::testing::curl_https(stack.public_url + "/api/status", {"-u", "bob:x"}).status, 0);

  // Wrong passwords: 401, then 429 with Retry-After for that address, logged without the password.
  const std::string wrong = "Wrong-Guess-42";
  EXPECT_EQ(stack.request("GET", "/api/status", {"-u", "alice:" + wrong}).status, 401);
  auto slowed = stack.request("GET", "/api/status", alice);
  EXPECT_EQ(slowed.status, 429) << slowed.body;
  ASSERT_TRUE(stack.up->wait_line("wrong password for user 'alice' from 127.0.0.1 on GET /api/status", 10s))
      << stack.up->output();
  EXPECT_TRUE(wait_until([&] { return stack.request("GET", "/api/status", alice).status == 200; }, 10s));
  // A wrong token is logged and refused, not slowed.
  EXPECT_EQ(stack.request("POST", "/v1/traces", {"-H", "Authorization: Bearer not-the-token-0123456789"}).status, 401);
  EXPECT_EQ(stack.request("POST", "/v1/traces", {"-H", "Authorization: Bearer not-the-token-0123456789"}).status, 401);
  ASSERT_TRUE(stack.up->wait_line("unknown bearer token from 127.0.0.1 on POST /v1/traces", 10s));
  const std::string output = stack.up->output();
  for (const std::string& secret : {wrong, std::string(kAlicePassword), std::string(kBobPassword),
                                   std::string(kIngestToken), std::string("not-the-token")}) {
    EXPECT_EQ(output.find(secret), std::string::npos) << secret << " leaked into:\n" << output;
  }
}

// listen_test_read returns a file's text ("" when missing).
std::string listen_test_read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// listen_test_jar_value returns cookie `name`'s value from a curl cookie jar (Netscape format: the
// value is the last tab-separated field), or "".
std::string listen_test_jar_value(const std::filesystem::path& jar, const std::string& name) {
  std::istringstream lines(listen_test_read(jar));
  std::string line;
  while (std::getline(lines, line)) {
    const std::size_t tab = line.rfind('\t');
    if (tab == std::string::npos || tab < name.size() + 1) continue;
    if (line.compare(tab - name.size() - 1, name.size() + 1, "\t" + name) == 0) return line.substr(tab + 1);
  }
  return "";
}

// listen_test_header returns the value of the first header `name` (lower case) in a curl -D dump.
std::string listen_test_header(const std::string& dump, const std::string& name, int nth = 0) {
  std::istringstream lines(dump);
  std::string line;
  while (std::getline(lines, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string lower = line.substr(0, name.size() + 1);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == name + ":" && nth-- == 0) return line.substr(name.size() + 2);
  }
  return "";
}

TEST(UpListenIntegrationTest, PageLoginOverTls) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ListenStack stack;
  ASSERT_TRUE(stack.start()) << stack.ca.error() << (stack.up ? stack.up->output() : "");
  const std::string ca = stack.ca.ca_file();
  const std::string origin = "Origin: " + stack.public_url;
  const auto headers_file = stack.dir.path() / "headers.txt";
  auto curl = [&](const std::string& path, std::vector<std::string> args) {
    args.insert(args.begin(), {"--cacert", ca, "-D", headers_file.string()});
    return inferscope::testing::curl_https(stack.public_url + path, args);
  };

  // The form, under the page's own CSP; an anonymous page load is sent to it.
  auto form = curl("/login", {});
  EXPECT_EQ(form.status, 200);
  EXPECT_NE(form.body.find("action=\"/login\""), std::string::npos) << form.body;
  EXPECT_EQ(form.body.find("<script"), std::string::npos);
  const std::string login_csp = listen_test_header(listen_test_read(headers_file), "content-security-policy");
  ASSERT_EQ(curl("/", {"-u", std::string("bob:") + kBobPassword}).status, 200);
  EXPECT_EQ(listen_test_header(listen_test_read(headers_file), "content-security-policy"), login_csp);
  EXPECT_EQ(login_csp, kUpPageCsp);
  EXPECT_EQ(curl("/", {"-H", "Accept: text/html"}).status, 303);
  EXPECT_EQ(listen_test_header(listen_test_read(headers_file), "location"), "/login");

  // bob (viewer) signs in: the session cookie has its attributes and reaches viewer routes only.
  const auto bob_jar = (stack.dir.path() / "bob.jar").string();
  auto signed_in = curl("/login", {"-c", bob_jar, "-H", origin, "--data-urlencode", std::string("user=bob"),
                                   "--data-urlencode", std::string("password=") + kBobPassword});
  ASSERT_EQ(signed_in.status, 303) << signed_in.body;
  const std::string dump = listen_test_read(headers_file);
  const std::string set_session = listen_test_header(dump, "set-cookie", 0);
  EXPECT_TRUE(std::regex_match(set_session, std::regex("inferscope_session=[0-9a-f]{64}; Secure; SameSite=Strict; "
                                                       "Path=/; Max-Age=[0-9]+; HttpOnly")))
      << set_session;
  EXPECT_TRUE(listen_test_header(dump, "set-cookie", 1).starts_with("inferscope_csrf=")) << dump;
  const std::string bob_id = listen_test_jar_value(bob_jar, "inferscope_session");
  ASSERT_EQ(bob_id.size(), 64u) << listen_test_read(bob_jar);
  EXPECT_EQ(curl("/api/status", {"-b", bob_jar}).status, 200);
  auto page = curl("/", {"-b", bob_jar, "-H", "Accept: text/html"});
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<html"), std::string::npos);
  const std::string bob_csrf = listen_test_jar_value(bob_jar, "inferscope_csrf");
  EXPECT_EQ(curl("/api/drill", {"-b", bob_jar, "-X", "POST", "-H", origin, "-H", "X-CSRF-Token: " + bob_csrf}).status,
            403);

  // alice (operator): a cross-site form post with her cookie (another Origin, no token) is refused;
  // the same post from the page's origin with the token is not.
  const auto alice_jar = (stack.dir.path() / "alice.jar").string();
  ASSERT_EQ(curl("/login", {"-c", alice_jar, "-H", origin, "--data-urlencode", std::string("user=alice"),
                            "--data-urlencode", std::string("password=") + kAlicePassword})
                .status,
            303);
  const std::string alice_csrf = listen_test_jar_value(alice_jar, "inferscope_csrf");
  ASSERT_EQ(alice_csrf.size(), 64u);
  auto cross = curl("/api/drill", {"-b", alice_jar, "-X", "POST", "-H", "Origin: https://evil.example",
                                   "-H", "Content-Type: application/x-www-form-urlencoded", "--data", "x=1"});
  EXPECT_EQ(cross.status, 403) << cross.body;
  EXPECT_TRUE(stack.up->wait_line("without the session's X-CSRF-Token header", 10s)) << stack.up->output();
  EXPECT_EQ(curl("/api/drill", {"-b", alice_jar, "-X", "POST", "-H", "Origin: https://evil.example", "-H",
                                "X-CSRF-Token: " + alice_csrf})
                .status,
            403);
  const int same_site = curl("/api/drill", {"-b", alice_jar, "-X", "POST", "-H", origin, "-H",
                                            "X-CSRF-Token: " + alice_csrf, "-H", "Content-Type: application/json",
                                            "--data-binary", "{}"}).status;
  EXPECT_TRUE(reached(same_site)) << same_site;
  // A wrong password at the form: 401, then the address backs off (429).
  EXPECT_EQ(curl("/login", {"-H", origin, "--data", "user=alice&password=Wrong-Form-Guess"}).status, 401);
  EXPECT_EQ(curl("/login", {"-H", origin, "--data-urlencode", std::string("user=alice"), "--data-urlencode",
                            std::string("password=") + kAlicePassword}).status,
            429);

  // bob signs out: his cookie no longer reaches anything, even sent by hand.
  auto out = curl("/logout", {"-b", bob_jar, "-c", bob_jar, "-X", "POST", "-H", origin});
  EXPECT_EQ(out.status, 303);
  EXPECT_EQ(listen_test_header(listen_test_read(headers_file), "location"), "/login");
  EXPECT_EQ(curl("/api/status", {"-H", "Cookie: inferscope_session=" + bob_id}).status, 401);
  EXPECT_EQ(curl("/api/status", {"-b", alice_jar}).status, 200);
  ASSERT_TRUE(stack.up->wait_line("user 'bob' signed out from 127.0.0.1", 10s)) << stack.up->output();
  const std::string output = stack.up->output();
  for (const std::string& secret : {std::string(kAlicePassword), std::string(kBobPassword), bob_id, alice_csrf,
                                   std::string("Wrong-Form-Guess")}) {
    EXPECT_EQ(output.find(secret), std::string::npos) << secret << " leaked into:\n" << output;
  }
}

TEST(UpListenIntegrationTest, RealAlertmanagerDeliversToThePublicWebhookWithAToken) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ListenStack stack;
  ASSERT_TRUE(stack.start()) << stack.ca.error() << (stack.up ? stack.up->output() : "");
  const std::filesystem::path am_dir = stack.dir.path() / "am";
  std::filesystem::create_directories(am_dir);
  const std::string credentials = listen_test_write(am_dir / "token", kIngestToken, 0600);
  const std::string wrong_credentials = listen_test_write(am_dir / "wrong", "wrong-token-0123456789abcdef", 0600);
  // Two receivers: one with the token, one with a wrong one (its deliveries are refused and logged).
  std::ofstream(am_dir / "alertmanager.yml")
      << "route:\n  receiver: relay\n  group_by: ['alertname']\n  group_wait: 1s\n  group_interval: 1s\n"
      << "  repeat_interval: 1h\n  routes:\n    - matchers: ['alertname=\"ListenWrongToken\"']\n      receiver: wrong\n"
      << "receivers:\n"
      << "  - name: relay\n    webhook_configs:\n      - url: '" << stack.public_url << "/api/alertmanager/webhook'\n"
      << "        http_config:\n          authorization: {type: Bearer, credentials_file: " << credentials << "}\n"
      << "          tls_config: {ca_file: " << stack.ca.ca_file() << "}\n"
      << "  - name: wrong\n    webhook_configs:\n      - url: '" << stack.public_url << "/api/alertmanager/webhook'\n"
      << "        http_config:\n          authorization: {type: Bearer, credentials_file: " << wrong_credentials << "}\n"
      << "          tls_config: {ca_file: " << stack.ca.ca_file() << "}\n";
  const std::string log = (am_dir / "alertmanager.log").string();
  inferscope::testing::TestProcess am({.binary = inferscope::testing::kAlertmanager.path,
                                       .args = {"--config.file=" + (am_dir / "alertmanager.yml").string(),
                                                "--storage.path=" + (am_dir / "data").string(),
                                                "--web.listen-address=127.0.0.1:0", "--cluster.listen-address="},
                                       .stdout_file = log,
                                       .stderr_file = log});
  ASSERT_TRUE(am.started()) << am.start_error();
  int port = 0;
  ASSERT_TRUE(wait_until(
      [&] {
        std::ifstream in(log);
        std::stringstream text;
        text << in.rdbuf();
        static const std::regex kListening("Listening on\"? address=127\\.0\\.0\\.1:([0-9]+)");
        std::smatch m;
        const std::string s = text.str();
        if (std::regex_search(s, m, kListening)) port = std::stoi(m[1].str());
        return port != 0;
      },
      10s))
      << "Alertmanager did not log its port; see " << log;
  const std::string api = "http://127.0.0.1:" + std::to_string(port) + "/api/v2/alerts";
  const std::string alerts = R"([{"labels":{"alertname":"ListenTokenDelivery","job":"sim","severity":"critical"}},)"
                             R"({"labels":{"alertname":"ListenWrongToken","job":"sim","severity":"warning"}}])";
  ASSERT_TRUE(wait_until(
      [&] {
        auto posted = net::blocking_http_request("POST", api, alerts, "application/json");
        return posted && posted->status == 200;
      },
      10s));
  EXPECT_TRUE(stack.up->wait_line("inferscope up: alert firing ListenTokenDelivery", 30s)) << stack.up->output();
  EXPECT_TRUE(stack.up->wait_line("unknown bearer token from 127.0.0.1 on POST /api/alertmanager/webhook", 30s))
      << stack.up->output();
  EXPECT_EQ(stack.up->output().find("alert firing ListenWrongToken"), std::string::npos);
}

// listen_sdk_send runs tests/trace/otlp_sdk_sender.js (the OpenTelemetry JS SDK) against `url`
// with `headers` as OTEL_EXPORTER_OTLP_HEADERS (none when empty) and the test CA trusted; returns
// its exit code, its output in `out`.
int listen_sdk_send(const ListenStack& stack, const std::string& url, const std::string& protocol,
                    const std::string& service, const std::string& headers, std::string& out) {
  std::vector<std::string> env = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES,
                                  "NODE_EXTRA_CA_CERTS=" + stack.ca.ca_file()};
  if (!headers.empty()) env.push_back("OTEL_EXPORTER_OTLP_HEADERS=" + headers);
  const std::filesystem::path base = stack.dir.path() / (service + "-" + protocol);
  inferscope::testing::TestProcess sender(
      {.binary = "/usr/bin/node",
       .args = {std::string(INFERSCOPE_SOURCE_DIR) + "/tests/trace/otlp_sdk_sender.js", url, protocol, service},
       .env = env,
       .stdout_file = base.string() + ".out",
       .stderr_file = base.string() + ".err"});
  if (!sender.started()) {
    out = sender.start_error();
    return -1;
  }
  const int code = sender.wait_exit(60s).value_or(-2);
  out = sender.stdout_text() + sender.stderr_text();
  return code;
}

// The OpenTelemetry JS SDK's exporters (protobuf and JSON) deliver spans to the public server with
// an ingest token in OTEL_EXPORTER_OTLP_HEADERS, and fail with 401 without it.
TEST(UpListenIntegrationTest, OpenTelemetryJsSdkDeliversWithItsTokenHeader) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kNode}));
  ListenStack stack;
  ASSERT_TRUE(stack.start()) << stack.ca.error() << (stack.up ? stack.up->output() : "");
  const std::string url = stack.public_url + "/v1/traces";
  const std::string headers = std::string("Authorization=Bearer%20") + kIngestToken;
  for (const std::string protocol : {"protobuf", "json"}) {
    SCOPED_TRACE(protocol);
    std::string out;
    EXPECT_NE(listen_sdk_send(stack, url, protocol, "no-token", "", out), 0) << out;
    EXPECT_NE(out.find("OTLPExporterError: Unauthorized"), std::string::npos) << out;  // the 401 status text
    const std::string service = "sdk-" + protocol;
    ASSERT_EQ(listen_sdk_send(stack, url, protocol, service, headers, out), 0) << out;
    const auto sent = nlohmann::json::parse(out.substr(0, out.find('\n')), nullptr, false);
    ASSERT_TRUE(sent.is_object() && sent.contains("trace_id")) << out;
    // The spans are in up's store: a viewer reads them back through the public server.
    const std::string trace_id = sent["trace_id"];
    nlohmann::json stored;
    EXPECT_TRUE(wait_until(
        [&] {
          auto reply = stack.request("GET", "/api/traces/" + trace_id, {"-u", std::string("bob:") + kBobPassword});
          stored = nlohmann::json::parse(reply.body, nullptr, false);
          return reply.status == 200 && stored.is_object() && stored["spans"].size() == sent["spans"].size();
        },
        20s))
        << stored.dump();
    // None stored from the refused sender.
    auto listed = stack.request("GET", "/api/traces?job=no-token", {"-u", std::string("bob:") + kBobPassword});
    EXPECT_EQ(listed.status, 200);
    EXPECT_EQ(nlohmann::json::parse(listed.body, nullptr, false)["traces"].size(), 0u) << listed.body;
  }
}

// A real browser (Debian's Chromium through playwright-core, web/test/login_check.js) is sent to
// /login, signs in through the form, sees the page draw, has a cross-site form POST to /api/drill
// refused, signs out with the page's own control, and lands on /login again when it opens the page;
// signed in again, its session ends under the open page and the page goes to /login by itself (its
// request's 401 carries no Basic challenge, which would make the browser ask for a password).
TEST(UpListenIntegrationTest, ChromiumSignsInSeesThePageAndSignsOut) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  ASSERT_TRUE(inferscope::testing::peers_installed({inferscope::testing::kNode, inferscope::testing::kChromium}));
  ListenStack stack;
  ASSERT_TRUE(stack.start()) << stack.ca.error() << (stack.up ? stack.up->output() : "");
  const std::filesystem::path base = stack.dir.path() / "login_check";
  inferscope::testing::TestProcess browser(
      {.binary = "/usr/bin/node",
       .args = {std::string(INFERSCOPE_SOURCE_DIR) + "/web/test/login_check.js", "--url", stack.public_url, "--user",
                "alice", "--password", kAlicePassword, "--timeout", "45"},
       .env = {std::string("NODE_PATH=") + INFERSCOPE_WEB_NODE_MODULES},
       .stdout_file = base.string() + ".out",
       .stderr_file = base.string() + ".err"});
  ASSERT_TRUE(browser.started()) << browser.start_error();
  const int code = browser.wait_exit(120s).value_or(-2);
  const std::string out = browser.stdout_text();
  const std::string verdict_line = out.substr(0, out.find('\n'));
  const auto verdict = nlohmann::json::parse(verdict_line, nullptr, false);
  ASSERT_TRUE(verdict.is_object()) << out << browser.stderr_text();
  EXPECT_EQ(code, 0) << verdict.dump(2);
  EXPECT_TRUE(verdict.value("ok", false)) << verdict.dump(2);
  EXPECT_EQ(verdict["steps"].value("before_login", ""), "/login") << verdict.dump(2);
  EXPECT_EQ(verdict["steps"].value("sign_out_control", ""), "Sign out") << verdict.dump(2);
  EXPECT_EQ(verdict["steps"].value("after_sign_out", ""), "/login") << verdict.dump(2);
  EXPECT_EQ(verdict["steps"].value("after_logout", ""), "/login") << verdict.dump(2);
  EXPECT_GT(verdict["steps"].value("panels_drawn", 0), 0) << verdict.dump(2);
  const auto expired = verdict["steps"].value("expired", nlohmann::json::object());
  EXPECT_EQ(expired.value("at", ""), "/login") << verdict.dump(2);
  EXPECT_FALSE(expired.value("refusals", nlohmann::json::array()).empty()) << verdict.dump(2);
  EXPECT_TRUE(stack.up->wait_line("user 'alice' signed out from 127.0.0.1", 10s)) << stack.up->output();
  EXPECT_EQ(stack.up->output().find(kAlicePassword), std::string::npos);
}

TEST(UpListenIntegrationTest, StartRefusesBadTokenFilesPlainPasswordsAndOpenAddresses) {
  TempDir dir("up-listen-bad");
  const std::string token = listen_test_write(dir.path() / "am.token", kIngestToken, 0644);
  const std::string base = "targets:\n  - url: http://127.0.0.1:1/metrics\n";
  const std::string open_token =
      listen_test_write(dir.path() / "open.yaml", base + "web:\n  tokens:\n    - {name: am, file: " + token + ", role: ingest}\n", 0600);
  const std::string plain = listen_test_write(
      dir.path() / "plain.yaml", base + "web:\n  users:\n    alice: {password: " + kAlicePassword + ", role: viewer}\n", 0600);
  const std::string no_web = listen_test_write(dir.path() / "noweb.yaml", base, 0600);
  const std::string state = (dir.path() / "state").string();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"--config", open_token, "--listen", "127.0.0.1:0"},
       "inferscope up: " + open_token + ":5:24: key 'web.tokens[0].file': cannot use token file " + token +
           ": its mode is 0644, which lets group or others at it; chmod 600 it\n"},
      {{"--config", plain, "--listen", "127.0.0.1:0"},
       "inferscope up: " + plain + ":5:23: key 'web.users.alice.password': plain-text passwords are refused"},
      {{"--config", no_web, "--listen", "0.0.0.0:0"},
       "inferscope up: --listen 0.0.0.0:0: a non-loopback address needs TLS and authentication: set web.tls and "
       "web.users or web.tokens in --config"},
      {{"--config", no_web, "--listen", "[::]:0"}, "inferscope up: --listen [::]:0: a non-loopback address needs"},
      {{"--config", no_web, "--listen", "example.com:80"}, "inferscope up: --listen example.com:80: 'example.com' is not"},
      {{"--config", no_web, "--insecure-listen"}, "inferscope up: --insecure-listen applies to --listen"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"up", "--port", "0", "--state-dir", state};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const auto result = testing::run_cli(args);
    EXPECT_EQ(result.exit.exit_code, 1) << result.output;
    EXPECT_NE(result.output.find(c.expected), std::string::npos) << result.output;
    EXPECT_EQ(std::count(result.output.begin(), result.output.end(), '\n'), 1) << result.output;
    EXPECT_EQ(result.output.find(kIngestToken), std::string::npos);
    EXPECT_EQ(result.output.find(kAlicePassword), std::string::npos);
  }
}

TEST(UpListenIntegrationTest, InsecureListenWarnsAndServesWithoutAuth) {
  ASSERT_TRUE(testing::stack_binaries_installed());
  TempDir dir("up-listen-insecure");
  auto serve = start_sim_serve();
  ASSERT_TRUE(serve);
  UpProcess up({"up", "--target", "sim=http://127.0.0.1:" + std::to_string(serve->port()), "--port", "0",
                "--prometheus-port", "0", "--alertmanager-port", "0", "--state-dir", (dir.path() / "state").string(),
                "--listen", "0.0.0.0:0", "--insecure-listen"});
  ASSERT_TRUE(up.started()) << up.start_error();
  const auto warning = up.wait_line("inferscope up: warning: --insecure-listen: 0.0.0.0:", 60s);
  ASSERT_TRUE(warning) << up.output();
  EXPECT_NE(warning->find("serves with no TLS, no authentication to anyone who can reach it"), std::string::npos) << *warning;
  const auto line = up.wait_line("inferscope up: listening on http://0.0.0.0:", 60s);
  ASSERT_TRUE(line) << up.output();
  const std::string port = line->substr(line->rfind(':') + 1, line->find(' ', line->rfind(':')) - line->rfind(':') - 1);
  ASSERT_TRUE(up.wait_ready(60s)) << up.output();
  auto reply = net::blocking_http_request("GET", "http://127.0.0.1:" + port + "/api/status", {}, {}, 20s);
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->status, 200);
}

}  // namespace
}  // namespace inferscope::up
