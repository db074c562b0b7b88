// Fuzzes the cost-profile JSON loader of `inferscope serve` (--profiles FILE). Every input goes
// through parse_profile the way ProfileCatalog::load reads a file's text (one object, an array,
// or {"profiles": [...]}); one input in 64 also goes through ProfileCatalog::load itself from a
// temporary file (the whole path, built-in profiles included, costs ~10 ms under the sanitizers).
// Invariants: never crashes or throws; an error starts "cannot"; every accepted profile has a
// non-empty name, a positive KV capacity and non-negative costs, and a loaded catalog finds every
// profile it names.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "serve/engine/cost_profile.h"

namespace {

using inferscope::serve::CostProfile;

void check_profile(const CostProfile& p) {
  if (p.name.empty() || p.kv_capacity_tokens == 0) std::abort();
  if (p.step_overhead_s < 0 || p.forward_base_s < 0 || p.prefill_token_s < 0 || p.decode_seq_s < 0) std::abort();
}

void check_error(const std::string& message) {
  if (message.rfind("cannot ", 0) != 0) std::abort();
}

// scratch_path is one temporary file per fuzzing process, rewritten for each input that uses it
// and removed at exit (a plain char array: it must outlive the atexit handler).
char g_scratch[] = "/tmp/inferscope-cost-profile-fuzz-XXXXXX";
const char* scratch_path() {
  static const bool created = [] {
    int fd = ::mkstemp(g_scratch);
    if (fd < 0) std::abort();
    ::close(fd);
    std::atexit([] { std::remove(g_scratch); });  // libFuzzer ends runs with exit()
    return true;
  }();
  (void)created;
  return g_scratch;
}

void load_from_file(const std::uint8_t* data, std::size_t size) {
  const char* path = scratch_path();
  std::FILE* f = std::fopen(path, "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  auto catalog = inferscope::serve::ProfileCatalog::load(path);
  if (!catalog) return check_error(catalog.error().message);
  for (const std::string& name : catalog->names()) {
    const CostProfile* p = catalog->find(name);
    if (p == nullptr || p->name != name) std::abort();
    check_profile(*p);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_discarded()) {
    if (json.is_object() && json.contains("profiles")) json = json["profiles"];
    if (!json.is_array()) json = nlohmann::json::array({json});
    for (const auto& item : json) {
      auto profile = inferscope::serve::parse_profile(item, "fuzz.json");
      if (profile) {
        check_profile(*profile);
      } else {
        check_error(profile.error().message);
      }
    }
  }
  if (size > 0 && data[size / 2] % 64 == 0) load_from_file(data, size);
  return 0;
}
