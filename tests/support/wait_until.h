// File: support/wait_until.h
// The one polling wait of the tests, for state that no event announces (a peer process seen over
// HTTP, a worker's counter updated just after it answers). Waits on events are better where the
// code under test offers one.
// Example: EXPECT_TRUE(testing::wait_until([&] { return busy() == 0; }, std::chrono::seconds(2)));
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace inferscope::testing {

// wait_until checks `condition` every `poll` until it holds or `limit` passes; returns its last answer.
inline bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds limit,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(poll);
  }
  return condition();
}

}  // namespace inferscope::testing
