// File: request_log.h
// Per-request output files: --csv (one row per request, fixed columns) and --jsonl (one object per
// request, plus every output event's time). Times are milliseconds on the run clock (0 = start),
// empty/null when the moment never happened.
// Example: auto ok = write_request_csv("run.csv", result, class_names);
// Pure I/O over a finished run; thread-compatible. Never writes prompts, outputs or headers.
#pragma once

#include <string>
#include <vector>

#include "inferscope/common/result.h"
#include "loadgen/request_runner.h"

namespace inferscope::bench {

// kCsvColumns is the CSV header, in column order.
inline constexpr const char* kCsvColumns =
    "index,class,warmup,http_status,error,intended_ms,dispatched_ms,started_ms,sent_ms,headers_ms,"
    "first_event_ms,first_content_ms,last_token_ms,end_ms,dns_ms,connect_ms,tls_ms,ttft_ms,"
    "ttft_corrected_ms,e2el_ms,e2el_corrected_ms,tpot_ms,input_tokens,output_tokens,token_source,events,"
    "token_events,reused_connection,input_token_source";

// write_request_csv writes every record of `run` to `path`. Fails with "cannot write ..." when
// the file cannot be created or written.
Result<void> write_request_csv(const std::string& path, const loadgen::RunResult& run, const std::vector<std::string>& classes);

// write_request_jsonl writes one JSON object per record, with the CSV fields plus
// "token_event_ms" (each output event's time after the start).
Result<void> write_request_jsonl(const std::string& path, const loadgen::RunResult& run, const std::vector<std::string>& classes);

}  // namespace inferscope::bench
