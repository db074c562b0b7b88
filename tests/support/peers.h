// File: support/peers.h
// The real programs the integration tests run against, and the check that fails a test (never skips
// it) when one is missing: scripts/install-deps.sh installs every peer, so a missing one is a broken
// machine, and a skip would let ctest count the untested feature as passing.
// Example: ASSERT_TRUE(testing::peers_installed({testing::kPromtool, testing::kPrometheus}));
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <initializer_list>

namespace inferscope::testing {

// Peer is a program a test runs and the Debian package that installs it.
struct Peer {
  const char* path;
  const char* package;
};

inline constexpr Peer kPrometheus{"/usr/bin/prometheus", "prometheus"};
inline constexpr Peer kPromtool{"/usr/bin/promtool", "prometheus"};
inline constexpr Peer kAlertmanager{"/usr/bin/prometheus-alertmanager", "prometheus-alertmanager"};
inline constexpr Peer kNodeExporter{"/usr/bin/prometheus-node-exporter", "prometheus-node-exporter"};
inline constexpr Peer kRedisExporter{"/usr/bin/prometheus-redis-exporter", "prometheus-redis-exporter"};
inline constexpr Peer kChromium{"/usr/bin/chromium", "chromium"};
inline constexpr Peer kNginx{"/usr/sbin/nginx", "nginx-light"};
inline constexpr Peer kOpenssl{"/usr/bin/openssl", "openssl"};
inline constexpr Peer kNode{"/usr/bin/node", "nodejs"};

// peers_installed succeeds when every program is executable; otherwise its message names each
// missing program and the package to install.
inline ::testing::AssertionResult peers_installed(std::initializer_list<Peer> peers) {
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  for (const Peer& peer : peers) {
    if (::access(peer.path, X_OK) == 0) continue;
    if (result) result = ::testing::AssertionFailure();
    else result << "; ";
    result << peer.path << " not found: install Debian's " << peer.package << " (scripts/install-deps.sh)";
  }
  return result;
}

}  // namespace inferscope::testing
