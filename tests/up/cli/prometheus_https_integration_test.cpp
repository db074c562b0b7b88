// A real Prometheus behind an nginx TLS front (certificate signed by a CA made with the openssl CLI
// in the test's temp dir, SAN IP:127.0.0.1): `doctor --prometheus https://...`, `report` and up's
// dashboard and doctor endpoints (INFERSCOPE_BINARY) answer through it exactly as they do over
// plain http when the CA is given (--ca-file), and fail with one line naming the certificate
// problem when it is not (verification is on by default).
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <nlohmann/json.hpp>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "net/blocking_client.h"
#include "serve/server.h"
#include "up/child_process.h"
#include "up/stack_test_support.h"
#include "support/peers.h"
#include "support/prometheus_process.h"
#include "support/test_process.h"
#include "sim_serve.h"
#include "up_process.h"

namespace inferscope::up {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using testing::TempDir;
using testing::run_cli;
using testing::UpProcess;
using testing::wait_until;

// free_loopback_port returns a 127.0.0.1 port that was free a moment ago (nginx cannot listen on
// port 0 and report the port it got).
std::uint16_t free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  std::uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

// openssl runs the openssl CLI in `dir`; the output on failure.
std::string openssl(const std::vector<std::string>& args) {
  auto run = run_command(inferscope::testing::kOpenssl.path, args, 60s);
  if (!run) return run.error().message;
  return run->ok() ? std::string() : run->output;
}


// replace_all swaps every `from` in `text` for `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// report_without_timing is a `report --format json` output (JSON, then stderr's lines) without
// the one figure that differs between two runs over the same data: how long the report took.
std::string report_without_timing(const std::string& output) {
  const std::size_t end = output.rfind("\n}\n");
  if (end == std::string::npos) return output;
  json report = json::parse(output.substr(0, end + 2), nullptr, false);
  if (report.is_discarded()) return output;
  report.erase("seconds");
  return report.dump(2) + output.substr(end + 2);
}

json get_json(const std::string& url, int& status) {
  auto reply = net::blocking_http_request("GET", url, {}, {}, 30s);
  status = reply ? reply->status : 0;
  return reply ? json::parse(reply->body, nullptr, false) : json(reply.error().message);
}

// Tests doctor, report and up's dashboard/doctor endpoints against an https:// Prometheus: the
// same answers as over http with --ca-file, a one-line certificate error without it.
TEST(PrometheusHttpsIntegrationTest, DoctorReportAndDashboardThroughTlsFront) {
  using inferscope::testing::kNginx, inferscope::testing::kOpenssl, inferscope::testing::kPrometheus;
  ASSERT_TRUE(inferscope::testing::peers_installed({kPrometheus, kNginx, kOpenssl}));
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string ca = d + "/ca.pem", cert = d + "/server.pem", key = d + "/server.key";
  ASSERT_EQ(openssl({"req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=inferscope test CA",
                     "-keyout", d + "/ca.key", "-out", ca}),
            "");
  ASSERT_EQ(openssl({"req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", key, "-out",
                     d + "/server.csr"}),
            "");
  std::ofstream(d + "/san.cnf") << "subjectAltName=IP:127.0.0.1\n";
  ASSERT_EQ(openssl({"x509", "-req", "-in", d + "/server.csr", "-CA", ca, "-CAkey", d + "/ca.key", "-CAcreateserial",
                     "-days", "1", "-extfile", d + "/san.cnf", "-out", cert}),
            "");

  // Something to diagnose: inferscope serve, scraped every second, with a few answered requests.
  auto serve = testing::start_sim_serve();
  ASSERT_TRUE(serve);
  const std::string serve_address = "127.0.0.1:" + std::to_string(serve->port());
  inferscope::testing::PrometheusProcess prometheus(inferscope::testing::scrape_config_for({serve_address}, "1s"));
  ASSERT_TRUE(prometheus.ok()) << prometheus.error();
  for (int i = 0; i < 8; ++i) {
    auto reply = net::blocking_http_request("POST", "http://" + serve_address + "/v1/chat/completions",
                                            R"({"model":"sim","messages":[{"role":"user","content":"hi"}],"max_tokens":4})",
                                            "application/json", 30s);
    ASSERT_TRUE(reply && reply->status == 200) << (reply ? reply->body : reply.error().message);
  }
  ASSERT_TRUE(wait_until([&] { return testing::query_value(prometheus.url(), "sum(inferscope_requests_total)") >= 8; },
                         30s));

  const std::uint16_t tls_port = free_loopback_port();
  ASSERT_NE(tls_port, 0);
  const std::string https = "https://127.0.0.1:" + std::to_string(tls_port);
  std::ofstream(d + "/nginx.conf")
      << "worker_processes 1;\ndaemon off;\npid " << d << "/nginx.pid;\nerror_log " << d << "/nginx-error.log;\n"
      << "events { worker_connections 64; }\nhttp {\n  access_log off;\n"
      << "  client_body_temp_path " << d << "/body; proxy_temp_path " << d << "/proxy;\n"
      << "  fastcgi_temp_path " << d << "/fcgi; uwsgi_temp_path " << d << "/uwsgi; scgi_temp_path " << d << "/scgi;\n"
      << "  server {\n    listen 127.0.0.1:" << tls_port << " ssl;\n    ssl_certificate " << cert
      << ";\n    ssl_certificate_key " << key << ";\n"
      << "    location / { proxy_pass " << prometheus.url() << "; proxy_http_version 1.1; proxy_set_header Connection \"\"; proxy_buffering off; }\n"
      << "  }\n}\n";
  inferscope::testing::TestProcess nginx({.binary = inferscope::testing::kNginx.path,
                                          .args = {"-c", d + "/nginx.conf", "-p", d, "-e", d + "/nginx-error.log"},
                                          .stdout_file = d + "/nginx.out",
                                          .stderr_file = d + "/nginx.out"});
  ASSERT_TRUE(nginx.started()) << nginx.start_error();
  const net::TlsOptions trusted{.ca_file = ca};
  ASSERT_TRUE(wait_until(
      [&] {
        auto r = net::blocking_http_request("GET", https + "/-/ready", {}, {}, 2s, trusted);
        return r && r->status == 200;
      },
      20s))
      << "nginx did not answer on " << https;
  // Verification is on by default: the same URL without the CA fails on the certificate.
  auto untrusted = net::blocking_http_request("GET", https + "/-/ready");
  ASSERT_FALSE(untrusted);
  EXPECT_NE(untrusted.error().message.find("certificate verify failed"), std::string::npos)
      << untrusted.error().message;

  // A fixed end a little in the past: every sample before it has been ingested, so both paths read the same data.
  const std::string at = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count() - 3);
  const std::vector<std::string> doctor = {"doctor", "--at", at, "--window", "20s", "--baseline", "20s", "--format", "json"};
  auto with = [](std::vector<std::string> args, const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  };

  // doctor: through the TLS front with the CA, the same diagnosis as straight from Prometheus.
  const CommandResult direct = run_cli(with(doctor, {"--prometheus", prometheus.url()}));
  const CommandResult secure = run_cli(with(doctor, {"--prometheus", https, "--ca-file", ca}));
  ASSERT_NE(direct.output.find("\"verdict\""), std::string::npos) << direct.output;
  EXPECT_EQ(secure.exit.exit_code, direct.exit.exit_code) << secure.output;
  EXPECT_EQ(secure.output, direct.output);
  const CommandResult refused = run_cli(with(doctor, {"--prometheus", https}));
  EXPECT_NE(refused.exit.exit_code, 0);
  EXPECT_TRUE(refused.output.starts_with("inferscope doctor: ")) << refused.output;
  EXPECT_NE(refused.output.find(https + "/api/v1/"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("certificate verify failed"), std::string::npos) << refused.output;
  EXPECT_EQ(refused.output.find('\n'), refused.output.size() - 1) << "not one line: " << refused.output;
  const CommandResult skipped = run_cli(with(doctor, {"--prometheus", https, "--insecure"}));
  EXPECT_EQ(skipped.output, direct.output);

  // report: the same JSON but for the source URL.
  const std::vector<std::string> report = {"report", "--since", "5m", "--until", at, "--format", "json"};
  const CommandResult direct_report = run_cli(with(report, {"--prometheus", prometheus.url()}));
  const CommandResult secure_report = run_cli(with(report, {"--prometheus", https, "--ca-file", ca}));
  ASSERT_NE(direct_report.output.find("\"prometheus\""), std::string::npos) << direct_report.output;
  EXPECT_EQ(secure_report.exit.exit_code, direct_report.exit.exit_code) << secure_report.output;
  EXPECT_EQ(report_without_timing(replace_all(secure_report.output, https, "PROMETHEUS")),
            report_without_timing(replace_all(direct_report.output, prometheus.url(), "PROMETHEUS")));
  const CommandResult refused_report = run_cli(with(report, {"--prometheus", https}));
  EXPECT_NE(refused_report.exit.exit_code, 0);
  EXPECT_TRUE(refused_report.output.starts_with("inferscope report: ")) << refused_report.output;
  EXPECT_NE(refused_report.output.find("certificate verify failed"), std::string::npos) << refused_report.output;
  EXPECT_EQ(refused_report.output.find('\n'), refused_report.output.size() - 1) << "not one line: " << refused_report.output;

  // up --prometheus https://... --ca-file: the dashboard's data and /api/doctor read through it.
  UpProcess up({"up", "--prometheus", https, "--ca-file", ca, "--port", "0", "--state-dir", d + "/state"});
  const auto ready = up.wait_ready(60s);
  ASSERT_TRUE(ready) << up.output();
  EXPECT_EQ(ready->prometheus, https);
  int status = 0;
  const json meta = get_json(ready->api + "/api/dashboard/meta", status);
  ASSERT_EQ(status, 200) << meta;
  EXPECT_EQ(meta["prometheus"]["reachable"], true) << meta;
  const json data = get_json(ready->api + "/api/dashboard/data?range=15m", status);
  ASSERT_EQ(status, 200) << data;
  EXPECT_EQ(data["prometheus"]["reachable"], true) << data;
  const json diagnosis = get_json(ready->api + "/api/doctor?window=20s&baseline=20s&at=" + at, status);
  EXPECT_EQ(status, 200) << diagnosis;
  EXPECT_EQ(diagnosis, json::parse(direct.output, nullptr, false));

  // The same up without the CA: Prometheus shows as unreachable, naming the certificate problem.
  UpProcess blind({"up", "--prometheus", https, "--port", "0", "--state-dir", d + "/state-blind"});
  const auto blind_ready = blind.wait_ready(60s);
  ASSERT_TRUE(blind_ready) << blind.output();
  const json blind_data = get_json(blind_ready->api + "/api/dashboard/data?range=15m", status);
  ASSERT_EQ(status, 200) << blind_data;
  EXPECT_EQ(blind_data["prometheus"]["reachable"], false) << blind_data;
  EXPECT_NE(blind_data["prometheus"]["error"].get<std::string>().find("certificate verify failed"), std::string::npos)
      << blind_data;
  const json blind_doctor = get_json(blind_ready->api + "/api/doctor?window=20s&baseline=20s", status);
  EXPECT_EQ(status, 502) << blind_doctor;
  EXPECT_NE(blind_doctor.dump().find("certificate verify failed"), std::string::npos) << blind_doctor;
}

}  // namespace
}  // namespace inferscope::up
