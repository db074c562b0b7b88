// File: async_signal.h
// serve's name for the shared coroutine wake-up (src/net/async_signal.h).
// Example: while (!ready()) co_await signal.wait();   // elsewhere: signal.notify();
// Not thread-safe: wait() and notify() run on one single-threaded executor.
#pragma once

#include "net/async_signal.h"

namespace inferscope::serve {
using net::AsyncSignal;
}  // namespace inferscope::serve
