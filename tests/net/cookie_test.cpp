// Tests of the Cookie header parser (net/cookie.h): pairs as browsers send them, quotes, and the
// malformed pairs that are skipped without losing the good ones.
#include "net/cookie.h"

#include <gtest/gtest.h>

namespace inferscope::net {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(Cookie, ParsesBrowserPairsInOrder) {
  EXPECT_EQ(parse_cookies("a=1; inferscope_session=abc; b=\"q v\""),
            (Pairs{{"a", "1"}, {"inferscope_session", "abc"}, {"b", "q v"}}));
  EXPECT_EQ(cookie_value("a=1; inferscope_session=abc", "inferscope_session"), "abc");
  EXPECT_EQ(cookie_value("x=1;x=2", "x"), "1");
  EXPECT_EQ(cookie_value("empty=", "empty"), "");
  EXPECT_FALSE(cookie_value("a=1", "inferscope_session").has_value());
  EXPECT_FALSE(cookie_value("", "a").has_value());
}

TEST(Cookie, SkipsMalformedPairsKeepsTheRest) {
  EXPECT_EQ(parse_cookies(";;noequals; =v; b@d=1; c=x\x01y; d=\"half; e=ok ;"), (Pairs{{"e", "ok"}}));
  // A session id is not found under a name that only contains it.
  EXPECT_FALSE(cookie_value("xinferscope_session=abc", "inferscope_session").has_value());
  EXPECT_TRUE(parse_cookies(std::string(kMaxCookieHeaderBytes + 1, 'a') + "=1").empty());
  EXPECT_TRUE(cookie_name_is_token("inferscope_csrf"));
  EXPECT_FALSE(cookie_name_is_token("a b"));
  EXPECT_FALSE(cookie_name_is_token(""));
}

}  // namespace
}  // namespace inferscope::net
