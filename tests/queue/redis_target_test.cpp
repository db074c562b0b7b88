// Tests parse_redis_url and describe: the `--target NAME=redis://...` form of up.
#include "queue/redis_target.h"

#include <gtest/gtest.h>

namespace inferscope::queue {
namespace {

// Tests accepted URLs, table-driven.
TEST(RedisTargetTest, ParsesHostPortDbAndPassword) {
  const auto check = [](std::string_view url, std::string host, int port, int db, std::string password) {
    auto t = parse_redis_url(url);
    ASSERT_TRUE(t.ok()) << url << ": " << t.error().message;
    EXPECT_EQ(t->host, host) << url;
    EXPECT_EQ(t->port, port) << url;
    EXPECT_EQ(t->db, db) << url;
    EXPECT_EQ(t->password, password) << url;
  };
  check("redis://127.0.0.1:6380/2", "127.0.0.1", 6380, 2, "");
  check("redis://cache", "cache", 6379, 0, "");
  check("redis://cache/", "cache", 6379, 0, "");
  check("redis://:pa:ss@cache:7000/1", "cache", 7000, 1, "pa:ss");
  check("redis://default:pw@cache:7000", "cache", 7000, 0, "pw");
  check("redis://:p@ss@h:1/0", "h", 1, 0, "p@ss");
  check("redis://[::1]:6379/3", "::1", 6379, 3, "");
}

// Tests that bad URLs fail with one line that never shows the password.
TEST(RedisTargetTest, RejectsBadUrlsWithoutShowingThePassword) {
  const auto check = [](std::string_view url, std::string_view why) {
    auto t = parse_redis_url(url);
    ASSERT_FALSE(t.ok()) << url;
    EXPECT_NE(t.error().message.find(why), std::string::npos) << "got " << t.error().message << "; want " << why;
    EXPECT_EQ(t.error().message.find("topsecret"), std::string::npos) << t.error().message;
    EXPECT_EQ(t.error().message.rfind("cannot parse redis URL ", 0), 0u) << t.error().message;
  };
  check("http://h:1/0", "scheme");
  check("rediss://:topsecret@h:1/0", "scheme");
  check("redis://:topsecret@:1/0", "host is empty");
  check("redis://:topsecret@h:0/0", "port");
  check("redis://:topsecret@h:70000/0", "port");
  check("redis://:topsecret@h:x/0", "port");
  check("redis://:topsecret@h:1/zero", "database");
  check("redis://:topsecret@h:1/0/extra", "database");
  check("redis://topsecret@h:1/0", "':'");
  check("redis://:@h:1/0", "password");
  check("redis://h:/0", "port");
}

// Tests that describe() never includes the password and brackets IPv6 hosts.
TEST(RedisTargetTest, DescribeLeavesThePasswordOut) {
  EXPECT_EQ(describe({.host = "h", .port = 1, .db = 2, .password = "pw"}), "redis://h:1/2");
  EXPECT_EQ(describe({.host = "::1", .port = 6379, .db = 0, .password = {}}), "redis://[::1]:6379/0");
}

}  // namespace
}  // namespace inferscope::queue
