// One span holding every attribute kind, a parent, a status and flags: the common input of the
// OTLP protobuf and JSON codec tests, so both encodings are checked against the same span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "trace/otlp.h"
#include "trace/span.h"

namespace inferscope::trace {

inline Span otlp_sample_span() {
  Span s;
  for (std::size_t i = 0; i < 16; ++i) s.trace_id[i] = static_cast<std::uint8_t>(i + 1);
  for (std::size_t i = 0; i < 8; ++i) s.span_id[i] = static_cast<std::uint8_t>(0xa0 + i);
  s.parent_span_id = {1, 2, 3, 4, 5, 6, 7, 8};
  s.name = "decode";
  s.kind = SpanKind::kInternal;
  s.start_unix_ns = 1796140000123456789ULL;
  s.end_unix_ns = 1796140000987654321ULL;
  s.attributes = {{"gen_ai.request.model", std::string("llama")},
                  {"stream", true},
                  {"gen_ai.usage.output_tokens", std::int64_t{-7}},
                  {"gen_ai.latency.e2e", 0.125},
                  {"gen_ai.response.finish_reasons", StringList{"stop", "length"}},
                  {"empty", std::string()}};
  s.status = {StatusCode::kError, "500"};
  s.flags = 0x301;
  return s;
}

// otlp_sample_request wraps the sample span and a bare server span of the same trace in one
// resource ("inferscope-serve") and one scope.
inline ExportRequest otlp_sample_request() {
  Span sample = otlp_sample_span();
  Span server;
  server.trace_id = sample.trace_id;
  server.span_id = {9, 9, 9, 9, 9, 9, 9, 9};
  server.kind = SpanKind::kServer;
  ExportRequest r;
  ResourceSpans& resource = r.resources.emplace_back();
  resource.resource_attributes = {{"service.name", std::string("inferscope-serve")}};
  resource.scopes.push_back(ScopeSpans{"inferscope", "0.1.0", {sample, server}});
  return r;
}

}  // namespace inferscope::trace
