#include "loadgen/dataset_workload.h"

#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace inferscope::loadgen {
namespace {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(fmt::format("cannot read dataset from {}: cannot open file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::uint32_t estimate_tokens(std::string_view text) {
  return static_cast<std::uint32_t>(std::max<std::size_t>(1, (text.size() + 3) / 4));
}

DatasetWorkload::DatasetWorkload(std::vector<RequestSpec> entries) : entries_(std::move(entries)) {
  if (entries_.empty()) throw std::invalid_argument("DatasetWorkload: no entries");
}

Result<std::unique_ptr<DatasetWorkload>> load_jsonl_workload(const std::string& path, std::uint32_t default_max_tokens) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_jsonl_workload(*text, path, default_max_tokens);
}

Result<std::unique_ptr<DatasetWorkload>> parse_jsonl_workload(std::string_view text, std::string_view path,
                                                              std::uint32_t default_max_tokens) {
  std::vector<RequestSpec> entries;
  std::istringstream lines{std::string(text)};
  std::string line;
  int line_no = 0;
  while (std::getline(lines, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto fail = [&](std::string_view cause) {
      return make_error(fmt::format("cannot read dataset entry from {}:{}: {}", path, line_no, cause));
    };
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail("not a JSON object");
    RequestSpec spec;
    if (auto p = j.find("prompt"); p != j.end() && p->is_string()) {
      spec.prompt = p->get<std::string>();
      spec.input_tokens = estimate_tokens(spec.prompt);
    } else if (auto m = j.find("messages"); m != j.end() && m->is_array() && !m->empty()) {
      spec.messages_json = m->dump();
      std::size_t chars = 0;
      for (const auto& msg : *m) {
        if (!msg.is_object() || !msg.contains("role")) return fail("each message needs a role");
        if (auto c = msg.find("content"); c != msg.end() && c->is_string()) chars += c->get_ref<const std::string&>().size();
      }
      spec.input_tokens = static_cast<std::uint32_t>(std::max<std::size_t>(1, (chars + 3) / 4));
    } else {
      return fail("needs a string \"prompt\" or a non-empty \"messages\" array");
    }
    spec.max_tokens = default_max_tokens;
    if (auto t = j.find("max_tokens"); t != j.end()) {
      if (!t->is_number_unsigned() || t->get<std::uint64_t>() == 0 || t->get<std::uint64_t>() > 10'000'000) {
        return fail("max_tokens must be a positive integer");
      }
      spec.max_tokens = t->get<std::uint32_t>();
    }
    entries.push_back(std::move(spec));
  }
  if (entries.empty()) return make_error(fmt::format("cannot read dataset from {}: no entries", path));
  return std::make_unique<DatasetWorkload>(std::move(entries));
}

Result<std::unique_ptr<DatasetWorkload>> load_sharegpt_workload(const std::string& path, std::uint32_t output_len,
                                                                std::uint64_t seed) {
  auto text = read_file(path);
  if (!text) return text.error();
  return parse_sharegpt_workload(*text, path, output_len, seed);
}

Result<std::unique_ptr<DatasetWorkload>> parse_sharegpt_workload(std::string_view text, std::string_view path,
                                                                 std::uint32_t output_len, std::uint64_t seed) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_array()) {
    return make_error(fmt::format("cannot read ShareGPT dataset from {}: not a JSON array", path));
  }
  std::vector<RequestSpec> entries;
  for (const auto& conv : j) {
    if (!conv.is_object()) continue;
    auto turns = conv.find("conversations");
    if (turns == conv.end() || !turns->is_array() || turns->size() < 2) continue;
    const auto& human = (*turns)[0];
    const auto& gpt = (*turns)[1];
    if (!human.is_object() || !gpt.is_object() || !human.contains("value") || !gpt.contains("value") ||
        !human["value"].is_string() || !gpt["value"].is_string()) {
      continue;
    }
    RequestSpec spec;
    spec.prompt = human["value"].get<std::string>();
    spec.input_tokens = estimate_tokens(spec.prompt);
    std::uint32_t out = output_len > 0 ? output_len : estimate_tokens(gpt["value"].get_ref<const std::string&>());
    if (spec.input_tokens < 4 || spec.input_tokens > 1024) continue;
    if (output_len == 0 && (out < 4 || spec.input_tokens + out > 2048)) continue;
    spec.max_tokens = out;
    entries.push_back(std::move(spec));
  }
  if (entries.empty()) {
    return make_error(fmt::format("cannot read ShareGPT dataset from {}: no conversation passed the filters", path));
  }
  std::shuffle(entries.begin(), entries.end(), std::mt19937_64(seed));
  return std::make_unique<DatasetWorkload>(std::move(entries));
}

}  // namespace inferscope::loadgen
