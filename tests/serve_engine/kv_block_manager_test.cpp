// Tests of KvBlockManager: limits, prefix-cache revival and LRU eviction.
#include "serve/engine/kv_block_manager.h"

#include <gtest/gtest.h>

namespace inferscope::serve {
namespace {

// Tests that allocation respects the limit and release returns every block.
TEST(KvBlockManagerTest, AllocatesWithinLimit) {
  KvBlockManager kv(4, false);
  std::vector<BlockId> a, b;
  EXPECT_TRUE(kv.allocate(3, a));
  EXPECT_FALSE(kv.allocate(2, b));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(kv.used(), 3u);
  kv.release(a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(kv.used(), 0u);
  EXPECT_TRUE(kv.allocate(4, b));
}

// Tests that a committed block stays matchable after release, is revived by a match, and is
// shared (one physical block) by two holders.
TEST(KvBlockManagerTest, RevivesAndSharesCachedBlocks) {
  KvBlockManager kv(4, true);
  std::vector<BlockId> a, b;
  ASSERT_TRUE(kv.allocate(2, a));
  kv.commit(a[0], 11);
  kv.commit(a[1], 22);
  const std::uint64_t chain[] = {11, 22, 33};
  EXPECT_EQ(kv.match(chain).blocks, 2u);
  EXPECT_EQ(kv.match(chain).revive, 0u);  // still held by a
  kv.acquire(chain, 2, b);
  EXPECT_EQ(b, a);
  EXPECT_EQ(kv.used(), 2u);
  kv.release(a);
  EXPECT_EQ(kv.used(), 2u);  // b still holds them
  kv.release(b);
  EXPECT_EQ(kv.used(), 0u);
  EXPECT_EQ(kv.match(chain).revive, 2u);
  EXPECT_EQ(kv.cached_blocks(), 2u);
}

// Tests that fresh allocations evict free cached blocks LRU-first, tail blocks before heads.
TEST(KvBlockManagerTest, EvictsLeastRecentlyUsedTailFirst) {
  KvBlockManager kv(3, true);
  std::vector<BlockId> a, b;
  ASSERT_TRUE(kv.allocate(2, a));
  kv.commit(a[0], 1);
  kv.commit(a[1], 2);
  kv.release(a);
  ASSERT_TRUE(kv.allocate(2, b));  // needs one eviction: the tail (hash 2) goes
  const std::uint64_t head[] = {1}, tail[] = {2};
  EXPECT_EQ(kv.match(head).blocks, 1u);
  EXPECT_EQ(kv.match(tail).blocks, 0u);
}

// Tests that shrinking the limit evicts free cached blocks and blocks new allocations while
// blocks in use exceed it.
TEST(KvBlockManagerTest, ShrinkingLimitEvictsAndBlocks) {
  KvBlockManager kv(8, true);
  std::vector<BlockId> a, b;
  ASSERT_TRUE(kv.allocate(4, a));
  ASSERT_TRUE(kv.allocate(2, b));
  kv.commit(b[0], 5);
  kv.commit(b[1], 6);
  kv.release(b);
  kv.set_limit(3);
  EXPECT_EQ(kv.cached_blocks(), 0u);
  EXPECT_EQ(kv.used(), 4u);
  EXPECT_FALSE(kv.can_take(1));
  kv.release(a);
  EXPECT_TRUE(kv.can_take(3));
}

// Tests that an already cached hash does not cache a second block (duplicates stay uncached).
TEST(KvBlockManagerTest, DuplicateHashStaysUncached) {
  KvBlockManager kv(4, true);
  std::vector<BlockId> a, b;
  ASSERT_TRUE(kv.allocate(1, a));
  ASSERT_TRUE(kv.allocate(1, b));
  kv.commit(a[0], 9);
  kv.commit(b[0], 9);
  EXPECT_EQ(kv.cached_blocks(), 1u);
  kv.release(b);
  kv.release(a);
  EXPECT_EQ(kv.used(), 0u);
}

}  // namespace
}  // namespace inferscope::serve
