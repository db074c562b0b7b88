#include "relay/utf8_truncate.h"

#include <gtest/gtest.h>

namespace inferscope::relay {
namespace {

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

// Tests that text that fits is returned unchanged, without a marker.
TEST(Utf8TruncateTest, FittingTextUnchanged) {
  EXPECT_EQ(truncate_utf8("hello", 5), "hello");
  EXPECT_EQ(truncate_utf8("", 0), "");
}

// Tests every cut position through 2-, 3- and 4-byte characters: the result is valid UTF-8,
// within the limit, and ends with the marker.
TEST(Utf8TruncateTest, NeverSplitsACharacter) {
  const std::string text = "延迟 p99 高 🚨 é ü 模型 m1 的告警 " + std::string(40, 'x');
  for (std::size_t limit = kTruncatedMarker.size(); limit < text.size(); ++limit) {
    const std::string out = truncate_utf8(text, limit);
    EXPECT_LE(out.size(), limit);
    EXPECT_TRUE(valid_utf8(out)) << "limit " << limit;
    EXPECT_EQ(out.substr(out.size() - kTruncatedMarker.size()), kTruncatedMarker) << "limit " << limit;
    EXPECT_EQ(text.compare(0, out.size() - kTruncatedMarker.size(), out, 0, out.size() - kTruncatedMarker.size()), 0);
  }
}

// Tests that a limit below the marker's size still yields valid UTF-8 within the limit.
TEST(Utf8TruncateTest, TinyLimit) {
  for (std::size_t limit = 0; limit < kTruncatedMarker.size(); ++limit) {
    const std::string out = truncate_utf8(std::string(100, 'y'), limit);
    EXPECT_LE(out.size(), limit);
    EXPECT_TRUE(valid_utf8(out));
  }
}

}  // namespace
}  // namespace inferscope::relay
