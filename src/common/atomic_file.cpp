#include "common/atomic_file.h"

#include <unistd.h>

#include <fstream>
#include <system_error>

namespace inferscope::common {

Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& text) {
  const std::filesystem::path temp = path.string() + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(temp, ignored);
      return make_error("cannot write " + path.string() + ": cannot write its temporary file " + temp.string());
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return make_error("cannot write " + path.string() + ": " + ec.message());
  }
  return {};
}

}  // namespace inferscope::common
