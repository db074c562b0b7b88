// Fuzzes the OTLP JSON decoder of traces (decode_export_request_json: what up's receiver reads
// from any SDK that sends application/json). Invariants: never crashes or throws; errors are one
// line starting "cannot decode OTLP JSON traces: "; a decoded request is one the protobuf path can
// carry: it encodes to protobuf that decodes again with the same span count and encodes the same
// bytes (the JSON and protobuf decoders fill one model, so the store sees no difference).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "trace/otlp.h"
#include "trace/otlp_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace inferscope::trace;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto decoded = decode_export_request_json(body);
  if (!decoded) {
    const std::string& message = decoded.error().message;
    if (message.rfind("cannot decode OTLP JSON traces: ", 0) != 0 || message.find('\n') != std::string::npos) {
      std::abort();
    }
    return 0;
  }
  const std::string once = encode_export_request(*decoded);
  const auto again = decode_export_request(once);
  if (!again) std::abort();
  if (again->span_count() != decoded->span_count()) std::abort();
  if (encode_export_request(*again) != once) std::abort();
  return 0;
}
