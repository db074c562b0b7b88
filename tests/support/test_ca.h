// File: support/test_ca.h
// TestCa: a certificate authority made for one test with the openssl CLI (P-256 keys, valid one
// day): a CA, a server certificate for IP 127.0.0.1 signed by it, and a client certificate signed
// by it (for mutual TLS). And curl_https: one request with the curl CLI, a real TLS client. No
// gtest dependency. Example:
//   testing::TestCa ca(dir.path()); ASSERT_TRUE(ca.ok()) << ca.error();
//   auto reply = testing::curl_https("https://127.0.0.1:" + port + "/x", {"--cacert", ca.ca_file()});
// Not thread-safe; one owner.
#pragma once

#include <stdio.h>
#include <sys/wait.h>

#include <array>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace inferscope::testing {

class TestCa {
 public:
  // TestCa writes ca.pem/ca.key, server.pem/server.key and client.pem/client.key into `dir`.
  explicit TestCa(const std::filesystem::path& dir) : dir_(dir) {
    const std::string log = path("openssl.log");
    std::ofstream(path("server.ext")) << "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n";
    std::ofstream(path("client.ext")) << "extendedKeyUsage=clientAuth\n";
    const std::string key = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes ";
    const std::vector<std::string> commands = {
        "openssl req -x509" + key + "-days 1 -subj /CN=inferscope-test-ca -keyout " + path("ca.key") + " -out " +
            path("ca.pem"),
        "openssl req" + key + "-subj /CN=127.0.0.1 -keyout " + path("server.key") + " -out " + path("server.csr"),
        "openssl x509 -req -days 1 -in " + path("server.csr") + " -CA " + path("ca.pem") + " -CAkey " + path("ca.key") +
            " -CAcreateserial -extfile " + path("server.ext") + " -out " + path("server.pem"),
        "openssl req" + key + "-subj /CN=test-client -keyout " + path("client.key") + " -out " + path("client.csr"),
        "openssl x509 -req -days 1 -in " + path("client.csr") + " -CA " + path("ca.pem") + " -CAkey " + path("ca.key") +
            " -CAcreateserial -extfile " + path("client.ext") + " -out " + path("client.pem"),
    };
    for (const std::string& command : commands) {
      const std::string full = command + " >> " + log + " 2>&1";
      if (std::system(full.c_str()) != 0) {
        error_ = "openssl CLI failed: " + command + " (see " + log + ")";
        return;
      }
    }
  }

  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }
  std::string ca_file() const { return path("ca.pem"); }
  std::string cert_file() const { return path("server.pem"); }
  std::string key_file() const { return path("server.key"); }
  std::string client_cert_file() const { return path("client.pem"); }
  std::string client_key_file() const { return path("client.key"); }

 private:
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::filesystem::path dir_;
  std::string error_;
};

// CurlReply is what curl_https saw: the status (0 when no HTTP answer came, e.g. a refused TLS
// handshake) and the body.
struct CurlReply {
  int status = 0;
  std::string body;
};

// curl_https runs `curl -sS --max-time 20 <args> -w '\n%{http_code}' <url>` and splits status and body.
// Arguments must not hold single quotes.
inline CurlReply curl_https(const std::string& url, const std::vector<std::string>& args) {
  std::string command = "curl -sS --max-time 20";
  for (const std::string& a : args) command += " '" + a + "'";
  command += " -w '\\n%{http_code}' '" + url + "' 2>/dev/null";
  CurlReply reply;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return reply;
  std::string out;
  std::array<char, 4096> buffer;
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  ::pclose(pipe);
  const std::size_t newline = out.rfind('\n');
  if (newline == std::string::npos) return reply;
  reply.status = std::atoi(out.c_str() + newline + 1);
  reply.body = out.substr(0, newline);
  return reply;
}

}  // namespace inferscope::testing
