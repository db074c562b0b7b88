// Tests of atomic_file.h: whole-file replacement through a temporary file.
#include "common/atomic_file.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "support/temp_dir.h"

namespace inferscope::common {
namespace {

// AtomicFileTest writes into a fresh folder of its own, removed afterwards.
class AtomicFileTest : public ::testing::Test {
 protected:
  inferscope::testing::TempDir dir_holder_{"atomic_file"};
  const std::filesystem::path& dir_ = dir_holder_.path();
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
