#include "loadgen/request_record.h"

namespace inferscope::loadgen {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kNone: return "none";
    case ErrorKind::kRefused: return "refused";
    case ErrorKind::kConnect: return "connect";
    case ErrorKind::kTimeout: return "timeout";
    case ErrorKind::kReset: return "reset";
    case ErrorKind::kHttpStatus: return "http_status";
    case ErrorKind::kMalformedStream: return "malformed_stream";
    case ErrorKind::kTruncatedStream: return "truncated_stream";
    case ErrorKind::kStreamError: return "stream_error";
    case ErrorKind::kCancelled: return "cancelled";
    case ErrorKind::kEmptyResponse: return "empty_response";
  }
  return "unknown";
}

std::string_view to_string(TokenSource source) {
  switch (source) {
    case TokenSource::kNone: return "none";
    case TokenSource::kUsage: return "usage";
    case TokenSource::kCounted: return "counted";
    case TokenSource::kEstimated: return "estimated";
  }
  return "unknown";
}

}  // namespace inferscope::loadgen
