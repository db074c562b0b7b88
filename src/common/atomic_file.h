// File: atomic_file.h
// Writes a whole file so that a reader never sees half of it: Prometheus reloading its config,
// `inferscope drill` reading the robot's URL file. Example:
//   if (auto w = write_file_atomically(dir / "prometheus.yml", text); !w) return w.error();
// Thread-compatible: two writers of the same path in one process race on the temporary file.
#pragma once

#include <filesystem>
#include <string>

#include "inferscope/common/result.h"

namespace inferscope::common {

// write_file_atomically writes `text` to a temporary file beside `path` (same folder, so the
// rename stays on one file system) and renames it over `path`. Fails with "cannot write
// <path>: <cause>"; on failure `path` keeps its old content.
Result<void> write_file_atomically(const std::filesystem::path& path, const std::string& text);

}  // namespace inferscope::common
