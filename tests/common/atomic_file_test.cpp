// Tests of atomic_file.h: whole-file replacement through a temporary file.
#include "common/atomic_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <unistd.h>

namespace inferscope::common {
namespace {

// AtomicFileTest writes into a folder of its own under gtest's temp dir, removed afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("inferscope_atomic_file_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Tests that a write replaces the whole file and leaves no temporary file behind.
TEST_F(AtomicFileTest, ReplacesTheWholeFile) {
  const auto path = dir_ / "prometheus.yml";
  ASSERT_TRUE(write_file_atomically(path, "a much longer first version\n"));
  ASSERT_TRUE(write_file_atomically(path, "second\n"));
  EXPECT_EQ(read_all(path), "second\n");
  int entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir_)) ++entries;
  EXPECT_EQ(entries, 1);
}

// Tests that a write into a missing folder fails naming the path and leaves nothing behind.
TEST_F(AtomicFileTest, FailsNamingThePath) {
  const auto path = dir_ / "missing" / "file.txt";
  auto w = write_file_atomically(path, "x");
  ASSERT_FALSE(w);
  EXPECT_NE(w.error().message.find(path.string()), std::string::npos) << w.error().message;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "missing"));
}

}  // namespace
}  // namespace inferscope::common
