// File: report_send.h
// `inferscope report --send CHANNEL --config FILE`: deliver a rendered report synchronously
// through one of the configured notification channels, with bounded retries. The caller loads
// the config file (src/config) and passes its relay section. Example:
//   Result<std::size_t> n = send_report(config->relay, "deploy/inferscope.yaml", "oncall", document);
// Thread-compatible; blocks for the attempts (at most 3, back-off capped at 10 s).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <inferscope/common/result.h>

#include "relay/document.h"
#include "relay/relay_config.h"

namespace inferscope::relay {

// kReportSendAttempts is how many times `report --send` tries one channel.
inline constexpr int kReportSendAttempts = 3;

// send_report sends `document` to the channel named `channel` of `config` (config_file names
// where it came from, for the errors). Returns the bytes sent. Errors are one line: "no channels
// in FILE (notifications.channels)", "unknown channel "x" (configured: a, b)", or "channel x:
// <why> (after 3 attempts)".
Result<std::size_t> send_report(const RelayConfig& config, const std::filesystem::path& config_file,
                                const std::string& channel, const Document& document);

}  // namespace inferscope::relay
