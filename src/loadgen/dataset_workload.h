// File: dataset_workload.h
// DatasetWorkload serves requests read from a file: JSONL lines of {"prompt": ...} or
// {"messages": [...]} with optional "max_tokens", or a local ShareGPT-format JSON array (first
// human turn is the prompt, the first gpt turn's length the output budget, vLLM's filters).
// Example: auto w = load_jsonl_workload("reqs.jsonl", 128); w->next(0);
// next() is const and thread-safe. Never prints a prompt, even in an error message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inferscope/common/result.h"
#include "loadgen/workload.h"

namespace inferscope::loadgen {

// DatasetWorkload cycles through its entries in order (index modulo size).
class DatasetWorkload final : public Workload {
 public:
  explicit DatasetWorkload(std::vector<RequestSpec> entries);
  RequestSpec next(std::uint64_t index) const override { return entries_[index % entries_.size()]; }
  const std::vector<std::string>& class_names() const override { return names_; }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<RequestSpec> entries_;
  std::vector<std::string> names_{"dataset"};
};

// estimate_tokens approximates a text's token count at ~4 bytes a token (no tokenizer here; the
// server's usage.prompt_tokens replaces it when sent).
std::uint32_t estimate_tokens(std::string_view text);

// load_jsonl_workload reads `path`; entries without max_tokens get `default_max_tokens`. Fails on
// an unreadable file, a line that is not a JSON object with a string prompt or a messages array,
// or an empty file; the message names the file and line number.
Result<std::unique_ptr<DatasetWorkload>> load_jsonl_workload(const std::string& path, std::uint32_t default_max_tokens);

// parse_jsonl_workload is load_jsonl_workload over text already read; `path` only names the
// source in error messages.
Result<std::unique_ptr<DatasetWorkload>> parse_jsonl_workload(std::string_view text, std::string_view path,
                                                              std::uint32_t default_max_tokens);

// load_sharegpt_workload reads a ShareGPT JSON array, keeps conversations whose prompt and
// output are >= 4 tokens, prompt <= 1024 and prompt + output <= 2048 (vLLM's filter; an
// `output_len` > 0 replaces the output budget and skips the output check), and shuffles them
// with `seed`.
Result<std::unique_ptr<DatasetWorkload>> load_sharegpt_workload(const std::string& path, std::uint32_t output_len,
                                                                std::uint64_t seed);

// parse_sharegpt_workload is load_sharegpt_workload over text already read (`path` names it).
Result<std::unique_ptr<DatasetWorkload>> parse_sharegpt_workload(std::string_view text, std::string_view path,
                                                                 std::uint32_t output_len, std::uint64_t seed);

}  // namespace inferscope::loadgen
