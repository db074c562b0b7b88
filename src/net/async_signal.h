// File: async_signal.h
// AsyncSignal lets one coroutine sleep until another handler on the same executor says "look
// again" (a steady_timer used as an event). Example:
//   while (!ready()) co_await signal.wait();   // elsewhere: signal.notify();
// Not thread-safe: wait() and notify() must run on the same single-threaded executor. notify()
// with no waiter is lost, so callers always re-check their condition in a loop.
#pragma once

#include <utility>  // before Asio: boost 1.74 awaitable.hpp uses std::exchange without it

#include <boost/asio/awaitable.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace inferscope::net {

class AsyncSignal {
 public:
  // AsyncSignal binds its timer to `executor`.
  template <class Executor>
  explicit AsyncSignal(const Executor& executor) : timer_(executor) {}

  // wait suspends until notify() or until `deadline` passes. Never throws.
  boost::asio::awaitable<void> wait(
      std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
    boost::system::error_code ec;
    timer_.expires_at(deadline);
    co_await timer_.async_wait(boost::asio::redirect_error(boost::asio::use_awaitable, ec));
  }

  // notify wakes the current waiter, if any.
  void notify() { timer_.cancel(); }

 private:
  boost::asio::steady_timer timer_;
};

}  // namespace inferscope::net
