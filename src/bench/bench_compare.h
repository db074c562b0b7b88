// File: bench_compare.h
// compare_summaries prints the difference of two --json summaries (`inferscope bench compare
// A.json B.json`): throughput, goodput, errors and the latency statistics, with B - A and the
// relative change, so a regression between two runs is one command away.
// Example: auto text = compare_summary_files("before.json", "after.json"); std::cout << *text;
// Pure; thread-safe. Never modifies the files.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "inferscope/common/result.h"

namespace inferscope::bench {

// compare_summaries renders the comparison table of two parsed summaries. Keys missing from
// either side are skipped.
std::string compare_summaries(const nlohmann::json& a, const nlohmann::json& b);

// compare_summary_files reads and compares two files; fails naming the unreadable or
// non-JSON file.
Result<std::string> compare_summary_files(const std::string& a_path, const std::string& b_path);

}  // namespace inferscope::bench
