// File: report_send.h
// `inferscope report --send CHANNEL --config FILE`: deliver a rendered report synchronously
// through a channel of up's config (its notifications.channels section, secrets from env vars or
// files as there), with bounded retries. Example:
//   Result<std::size_t> n = send_report_with_config("deploy/inferscope.yaml", "oncall", document);
// Thread-compatible; blocks for the attempts (at most 3, back-off capped at 10 s).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include <inferscope/common/result.h>

#include "relay/document.h"

namespace inferscope::stack {

// kReportSendAttempts is how many times `report --send` tries one channel.
inline constexpr int kReportSendAttempts = 3;

// send_report_with_config loads config_file (errors name file:line:col and the key), then sends
// `document` to the channel named `channel`. Returns the bytes sent. Errors are one line: the
// config's, "no channels in FILE (notifications.channels)", "unknown channel "x" (configured:
// a, b)", or "channel x: <why> (after 3 attempts)".
Result<std::size_t> send_report_with_config(const std::filesystem::path& config_file, const std::string& channel,
                                            const relay::Document& document);

}  // namespace inferscope::stack
