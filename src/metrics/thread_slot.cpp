// Dense thread ids for the sharded hot path (see include/inferscope/metrics/detail/thread_slot.h).
#include <inferscope/metrics/detail/thread_slot.h>

#include <algorithm>
#include <bit>
#include <mutex>
#include <thread>
#include <vector>

namespace inferscope::metrics::detail {

thread_local constinit std::uint32_t t_slot_plus_one = 0;

// SlotTable hands out the smallest free id so that live threads keep ids below the shard count
// whenever there are fewer live writer threads than shards.
struct SlotTable {
  std::mutex mutex;
  std::vector<bool> used;
  std::uint32_t live = 0;
};

// NeverDestroyed keeps the table alive past static destruction (threads may exit after it) while
// staying constant-initialised: no init-order question, no guard on access.
template <class T>
union NeverDestroyed {
  constexpr NeverDestroyed() : value() {}
  ~NeverDestroyed() {}
  T value;
};

// g_slot_table is a data symbol with default visibility, exactly like t_slot_plus_one: wherever
// several copies of the library are loaded (static copies in several shared objects, RTLD_LOCAL
// or global, -Bsymbolic or not) the dynamic linker resolves the two the same way, so a thread's
// id always indexes the table that handed it out.
[[gnu::visibility("default")]] constinit NeverDestroyed<SlotTable> g_slot_table;

namespace {

// SlotReleaser gives the id back when its thread exits.
struct SlotReleaser {
  std::uint32_t slot = kReleasedSlot;
  ~SlotReleaser() {
    if (slot == kReleasedSlot) return;
    SlotTable& table = g_slot_table.value;
    std::lock_guard lock(table.mutex);
    table.used[slot] = false;
    --table.live;
    // Later writes from this thread (other thread_local destructors) use the shared shard.
    t_slot_plus_one = kReleasedSlot + 1;
  }
};

}  // namespace

std::uint32_t assign_thread_slot() noexcept {
  thread_local SlotReleaser releaser;
  SlotTable& table = g_slot_table.value;
  std::uint32_t slot = 0;
  {
    std::lock_guard lock(table.mutex);
    auto free = std::find(table.used.begin(), table.used.end(), false);
    slot = static_cast<std::uint32_t>(free - table.used.begin());
    if (free == table.used.end()) {
      table.used.push_back(true);
    } else {
      *free = true;
    }
    ++table.live;
  }
  releaser.slot = slot;
  t_slot_plus_one = slot + 1;
  return slot;
}

std::uint32_t shard_count() noexcept {
  static const std::uint32_t count = [] {
    const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
    return std::bit_ceil(std::clamp(2 * cpus, 8u, 64u));
  }();
  return count;
}

std::uint32_t live_thread_slots_for_test() noexcept {
  SlotTable& table = g_slot_table.value;
  std::lock_guard lock(table.mutex);
  return table.live;
}

}  // namespace inferscope::metrics::detail
