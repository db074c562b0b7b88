// Fuzzes the OTLP/HTTP protobuf decoder of traces (decode_export_request: what up's receiver will
// read from any OTel SDK) and the W3C traceparent parser (parse_traceparent: a header every
// traced request may carry). Invariants: never crashes; errors are one line starting "cannot
// decode OTLP traces: "; a decoded request re-encodes to bytes that decode with the same span
// count and encode the same again (a fixed point after one round); an accepted traceparent has
// non-zero ids and, for version 00 with only defined flag bits, formats back to the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "trace/otlp.h"
#include "trace/trace_context.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace inferscope::trace;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const auto decoded = decode_export_request(bytes);
  if (!decoded) {
    const std::string& message = decoded.error().message;
    if (message.rfind("cannot decode OTLP traces: ", 0) != 0 || message.find('\n') != std::string::npos) std::abort();
  } else {
    const std::string once = encode_export_request(*decoded);
    const auto again = decode_export_request(once);
    if (!again) std::abort();
    if (encode_export_request(*again) != once) std::abort();
    if (again->span_count() != decoded->span_count()) std::abort();
  }
  if (const auto parent = parse_traceparent(bytes)) {
    if (is_zero(parent->trace_id) || is_zero(parent->parent_id)) std::abort();
    if (bytes.substr(0, 2) == "00" && format_traceparent(parent->trace_id, parent->parent_id, parent->flags) != bytes &&
        (parent->flags & ~0x03) == 0) {
      std::abort();
    }
  }
  return 0;
}
