#pragma once
// A simulated model server on an ephemeral loopback port, twenty times faster than real time, for
// the up tests that only need something to scrape.
#include <gtest/gtest.h>

#include <memory>

#include "serve/server.h"

namespace inferscope::up::testing {

inline std::unique_ptr<serve::Server> start_sim_serve() {
  serve::ServerOptions o;
  o.port = 0;
  o.engine.time_scale = 20;
  o.model_names = {"sim"};
  auto s = serve::Server::start(o);
  EXPECT_TRUE(s) << s.error().message;
  return s ? std::move(*s) : nullptr;
}

}  // namespace inferscope::up::testing
