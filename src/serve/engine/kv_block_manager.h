// File: kv_block_manager.h
// KvBlockManager: the paged KV cache - fixed-size blocks under a (fault-shrinkable) limit, with
// vLLM-style prefix caching: full blocks kept by chain hash, revived on a match, evicted LRU.
// Example: KvBlockManager kv(27648, true); std::vector<BlockId> t; kv.allocate(3, t); kv.release(t);
// Thread safety: none (owned by EngineCore on one thread). Never throws; no per-block allocation
// beyond vector growth.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace inferscope::serve {

// BlockId indexes a physical KV block.
using BlockId = std::uint32_t;

// PrefixMatch is the result of looking up a chain of block hashes.
struct PrefixMatch {
  std::size_t blocks = 0;   // leading hashes found in the cache
  std::size_t revive = 0;   // of those, blocks nobody references now (they count against capacity)
};

// KvBlockManager counts blocks in use against a limit and keeps cached blocks for reuse.
class KvBlockManager {
 public:
  // KvBlockManager with `limit` usable blocks; prefix_caching=false never caches a block.
  KvBlockManager(std::uint64_t limit, bool prefix_caching);

  // set_limit changes the usable block count (kv_capacity fault). Cached free blocks beyond the
  // new limit are evicted at once; blocks in use above it stay until released (used() may
  // exceed limit() until the scheduler preempts).
  void set_limit(std::uint64_t limit);
  std::uint64_t limit() const { return limit_; }
  // used counts blocks referenced by at least one sequence.
  std::uint64_t used() const { return used_; }
  // can_take reports whether n more blocks can become referenced.
  bool can_take(std::uint64_t n) const { return used_ + n <= limit_; }

  // match looks up the leading run of `hashes` in the cache. No side effects.
  PrefixMatch match(std::span<const std::uint64_t> hashes) const;
  // acquire references the first `n` matched blocks of `hashes` and appends them to `table`.
  // Precondition: match(hashes).blocks >= n and can_take(match revive count) (BUG otherwise).
  void acquire(std::span<const std::uint64_t> hashes, std::size_t n, std::vector<BlockId>& table);
  // allocate appends n fresh blocks to `table`; returns false (nothing changed) if they don't fit.
  bool allocate(std::size_t n, std::vector<BlockId>& table);
  // commit records that `block` now holds the full token chain `hash` (cacheable). A hash
  // already cached by another block leaves this block uncached.
  void commit(BlockId block, std::uint64_t hash);
  // release drops one reference to each block of `table` (tail first, so tails are evicted
  // first) and clears it.
  void release(std::vector<BlockId>& table);
  // cached_blocks counts blocks that hold a cached hash (in use or free).
  std::size_t cached_blocks() const { return cached_.size(); }

 private:
  static constexpr BlockId kNil = 0xFFFFFFFF;
  struct Block {
    std::uint64_t hash = 0;
    std::uint32_t refs = 0;
    bool hashed = false;
    BlockId prev = kNil, next = kNil;  // LRU links while free and hashed
  };
  void lru_push_back(BlockId id);
  void lru_unlink(BlockId id);
  void evict_front();
  void trim();
  BlockId new_block();

  std::uint64_t limit_;
  bool prefix_caching_;
  std::uint64_t used_ = 0;
  std::uint64_t evictable_ = 0;
  std::vector<Block> blocks_;
  std::vector<BlockId> free_ids_;
  std::unordered_map<std::uint64_t, BlockId> cached_;
  BlockId lru_head_ = kNil, lru_tail_ = kNil;
};

}  // namespace inferscope::serve
