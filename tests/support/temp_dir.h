// File: support/temp_dir.h
// TempDir: a fresh private directory under /tmp for one test (or benchmark), removed with its
// content on destruction, also when the test fails. No gtest dependency, so benchmarks use it too.
// Example: testing::TempDir dir("queue"); std::ofstream(dir.path() / "redis.conf") << "port 1\n";
// Not thread-safe; one owner.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace inferscope::testing {

class TempDir {
 public:
  // TempDir creates /tmp/inferscope-<tag>-XXXXXX; path() is empty if that failed.
  explicit TempDir(const std::string& tag = "test") {
    std::string pattern = "/tmp/inferscope-" + tag + "-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace inferscope::testing
