// File: detail/thread_slot.h  -- DO NOT INCLUDE DIRECTLY (internal to inferscope/metrics).
// Dense per-thread ids for the sharded hot path: each thread gets the smallest free id on its first
// metric write and gives it back when it exits, so shard arrays stay small and shards get reused.
// Design and measurements: docs/design/metrics-hot-path.md.
// Thread-safe. The fast path is one thread-local load; it never locks or allocates.
#pragma once

#include <cstdint>

namespace inferscope::metrics::detail {

// kReleasedSlot marks a thread whose id was already given back (writes from late thread_local
// destructors): any slot at or above a series' shard count uses the shared, multi-writer shard.
inline constexpr std::uint32_t kReleasedSlot = 0xFFFFFFFEu;

// t_slot_plus_one holds this thread's id + 1; 0 means "not assigned yet". Defined, not inline, in
// thread_slot.cpp beside the slot table that hands the ids out: the two live in one object file
// with default visibility, so in any process the dynamic linker binds both from the same copy of
// the library, and a thread's id always indexes the table that gave it. (An inline variable here
// was merged across shared objects while each kept its own internal table: two live threads could
// hold the same id and race on one single-writer shard; tests/metrics/two_shared_objects.)
// constinit (constant-initialised, trivially destructible): reading it needs no TLS wrapper call,
// one %fs-relative load in an executable (bench/metrics/metrics_core_bench.cpp).
extern thread_local constinit std::uint32_t t_slot_plus_one;

// assign_thread_slot gives this thread the smallest free id (takes a mutex once per thread) and
// arranges to release it at thread exit. Returns the id.
std::uint32_t assign_thread_slot() noexcept;

// shard_count returns how many per-thread shards each series holds: clamp(2 * CPUs, 8, 64) rounded
// to a power of two, fixed at first call. Threads whose id is >= this share one atomic shard.
std::uint32_t shard_count() noexcept;

// this_thread_slot returns this thread's dense id (assigning one on first use).
inline std::uint32_t this_thread_slot() noexcept {
  const std::uint32_t s = t_slot_plus_one;
  if (s != 0) [[likely]] return s - 1;
  return assign_thread_slot();
}

// live_thread_slots_for_test returns how many ids are currently handed out.
std::uint32_t live_thread_slots_for_test() noexcept;

}  // namespace inferscope::metrics::detail
