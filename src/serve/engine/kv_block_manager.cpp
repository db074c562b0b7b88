// Block accounting. Invariant: used_ + evictable_ <= limit_ whenever used_ <= limit_, so a free
// cached block is only ever evicted to make room for a fresh one or after the limit shrinks.
#include "serve/engine/kv_block_manager.h"

#include <cstdio>
#include <cstdlib>

#include "inferscope/common/bug.h"

namespace inferscope::serve {

KvBlockManager::KvBlockManager(std::uint64_t limit, bool prefix_caching)
    : limit_(limit), prefix_caching_(prefix_caching) {}

void KvBlockManager::set_limit(std::uint64_t limit) {
  limit_ = limit;
  trim();
}

PrefixMatch KvBlockManager::match(std::span<const std::uint64_t> hashes) const {
  PrefixMatch m;
  if (!prefix_caching_) return m;
  for (std::uint64_t h : hashes) {
    auto it = cached_.find(h);
    if (it == cached_.end()) break;
    ++m.blocks;
    if (blocks_[it->second].refs == 0) ++m.revive;
  }
  return m;
}

void KvBlockManager::acquire(std::span<const std::uint64_t> hashes, std::size_t n,
                             std::vector<BlockId>& table) {
  for (std::size_t i = 0; i < n; ++i) {
    auto it = cached_.find(hashes[i]);
    if (it == cached_.end()) INFERSCOPE_BUG("KvBlockManager: acquire of a hash that is not cached");
    Block& b = blocks_[it->second];
    if (b.refs++ == 0) {
      lru_unlink(it->second);
      --evictable_;
      ++used_;
    }
    table.push_back(it->second);
  }
}

bool KvBlockManager::allocate(std::size_t n, std::vector<BlockId>& table) {
  if (!can_take(n)) return false;
  for (std::size_t i = 0; i < n; ++i) {
    ++used_;
    trim();  // make room by evicting the least recently used free cached block
    BlockId id = new_block();
    blocks_[id].refs = 1;
    table.push_back(id);
  }
  return true;
}

void KvBlockManager::commit(BlockId block, std::uint64_t hash) {
  if (!prefix_caching_) return;
  Block& b = blocks_[block];
  if (b.hashed) return;
  if (!cached_.emplace(hash, block).second) return;
  b.hashed = true;
  b.hash = hash;
}

void KvBlockManager::release(std::vector<BlockId>& table) {
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    Block& b = blocks_[*it];
    if (b.refs == 0) INFERSCOPE_BUG("KvBlockManager: release of a free block");
    if (--b.refs > 0) continue;
    --used_;
    if (b.hashed) {
      lru_push_back(*it);
      ++evictable_;
    } else {
      free_ids_.push_back(*it);
    }
  }
  table.clear();
  trim();
}

void KvBlockManager::trim() {
  while (evictable_ > 0 && used_ + evictable_ > limit_) evict_front();
}

void KvBlockManager::evict_front() {
  BlockId id = lru_head_;
  lru_unlink(id);
  --evictable_;
  Block& b = blocks_[id];
  cached_.erase(b.hash);
  b.hashed = false;
  free_ids_.push_back(id);
}

BlockId KvBlockManager::new_block() {
  if (!free_ids_.empty()) {
    BlockId id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  blocks_.emplace_back();
  return static_cast<BlockId>(blocks_.size() - 1);
}

void KvBlockManager::lru_push_back(BlockId id) {
  Block& b = blocks_[id];
  b.prev = lru_tail_;
  b.next = kNil;
  if (lru_tail_ != kNil) blocks_[lru_tail_].next = id;
  else lru_head_ = id;
  lru_tail_ = id;
}

void KvBlockManager::lru_unlink(BlockId id) {
  Block& b = blocks_[id];
  if (b.prev != kNil) blocks_[b.prev].next = b.next;
  else lru_head_ = b.next;
  if (b.next != kNil) blocks_[b.next].prev = b.prev;
  else lru_tail_ = b.prev;
  b.prev = b.next = kNil;
}

}  // namespace inferscope::serve
