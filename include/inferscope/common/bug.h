// File: bug.h
// INFERSCOPE_BUG is STYLE.md's third error tier: a broken invariant ("should never happen") prints
// "BUG: <file>:<line>: <what>" to stderr and aborts. Never for bad input (that returns Result) or
// setup misuse (that throws at registration). Example: if (used_ > limit_) INFERSCOPE_BUG("over limit");
// Thread-safe; never returns; allocates nothing.
#pragma once

#include <cstdio>
#include <cstdlib>

namespace inferscope::detail {

// report_bug prints the BUG line and aborts (core dump, no unwinding: state is already broken).
[[noreturn]] inline void report_bug(const char* file, int line, const char* what) noexcept {
  std::fprintf(stderr, "BUG: %s:%d: %s\n", file, line, what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace inferscope::detail

// INFERSCOPE_BUG(what) reports a broken invariant; `what` is a C string.
#define INFERSCOPE_BUG(what) ::inferscope::detail::report_bug(__FILE__, __LINE__, (what))
