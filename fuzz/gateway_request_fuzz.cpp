// Fuzzes the gateway's reading of client request bodies (inspect_client_request) and its
// include_usage rewrite. Invariants: no crash on any bytes; a body that inspects cleanly and is
// rewritten still inspects cleanly, keeps its model and stream flag, and now has include_usage.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gateway/client_request.h"

using inferscope::gateway::inspect_client_request;
using inferscope::gateway::with_include_usage;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  const auto info = inspect_client_request(body);
  if (info.error || !info.needs_usage()) return 0;
  const auto after = inspect_client_request(with_include_usage(body));
  if (after.error || after.model != info.model || after.stream != info.stream || !after.include_usage) std::abort();
  return 0;
}
