// File: fake_report_robots.h
// Loopback fake robots for the report delivery tests: a DingTalk robot that checks each request's
// signature with the `openssl dgst` command line (independently of the relay's signing code), a
// generic webhook, and a robot that is down (HTTP 500). Example:
//   FakeRobots robots; setenv("URL", robots.url("/dingtalk?access_token=tok").c_str(), 1);
//   wait_until([&] { return robots.body("dingtalk").has_value(); }, 30s);
// Thread-safe: requests are recorded under the mutex.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "net/http_server.h"
#include "net/router.h"

namespace inferscope::up::testing {

using nlohmann::json;

inline constexpr const char* kSecret = "SECinferscope-report-secret";

inline std::string shell(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, p) != nullptr) out += buffer;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

inline std::string query_param(std::string_view query, const std::string& name) {
  for (std::size_t start = 0; start <= query.size();) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos) end = query.size();
    const std::string_view pair = query.substr(start, end - start);
    if (pair.starts_with(name + "=")) {
      std::string out;  // percent-decoded
      for (std::size_t i = name.size() + 1; i < pair.size(); ++i) {
        if (pair[i] == '%' && i + 2 < pair.size()) {
          out.push_back(static_cast<char>(std::stoi(std::string(pair.substr(i + 1, 2)), nullptr, 16)));
          i += 2;
        } else {
          out.push_back(pair[i]);
        }
      }
      return out;
    }
    start = end + 1;
  }
  return {};
}

// openssl_dingtalk_sign: base64(HMAC-SHA256(key = secret, message = timestamp + "\n" + secret)).
inline std::string openssl_dingtalk_sign(const std::string& timestamp) {
  for (char c : timestamp) {
    if (c < '0' || c > '9') return "bad-timestamp";
  }
  return shell("printf '" + timestamp + "\\n" + kSecret + "' | openssl dgst -sha256 -hmac '" + kSecret +
               "' -binary | base64");
}

struct FakeRobots {
  std::mutex mutex;
  std::vector<std::pair<std::string, std::string>> received;  // (robot, body)
  std::atomic<int> bad_signatures{0};
  net::Router router;
  std::unique_ptr<net::HttpServer> server;

  FakeRobots() {
    router.post("/dingtalk", [this](const net::Request& r) {
      const std::string ts = query_param(r.query, "timestamp");
      if (ts.empty() || query_param(r.query, "sign") != openssl_dingtalk_sign(ts)) {
        ++bad_signatures;
        return net::Response::json(R"({"errcode":310000,"errmsg":"sign not match"})");
      }
      record("dingtalk", r.body);
      return net::Response::json(R"({"errcode":0,"errmsg":"ok"})");
    });
    router.post("/webhook", [this](const net::Request& r) {
      record("webhook", r.body);
      return net::Response::json(R"({"ok":true})");
    });
    router.post("/down", [this](const net::Request& r) {  // a robot that is down
      record("down", r.body);
      return net::Response::json(R"({"ok":false})", 500);
    });
    auto s = net::HttpServer::start({.port = 0, .log_name = "fake-robots"}, router.handler());
    if (s) server = std::move(*s);
  }
  void record(const std::string& robot, std::string_view body) {
    std::lock_guard lock(mutex);
    received.emplace_back(robot, std::string(body));
  }
  std::size_t count(const std::string& robot) {
    std::lock_guard lock(mutex);
    return static_cast<std::size_t>(std::count_if(received.begin(), received.end(), [&](const auto& r) { return r.first == robot; }));
  }
  // last_body_size is the size of the last request body the robot received (0: none).
  std::size_t last_body_size(const std::string& robot) {
    std::lock_guard lock(mutex);
    for (auto it = received.rbegin(); it != received.rend(); ++it) {
      if (it->first == robot) return it->second.size();
    }
    return 0;
  }
  std::optional<json> body(const std::string& robot) {
    std::lock_guard lock(mutex);
    for (const auto& [name, text] : received) {
      if (name == robot) return json::parse(text, nullptr, false);
    }
    return std::nullopt;
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(server->port()) + path; }
};

}  // namespace inferscope::up::testing
