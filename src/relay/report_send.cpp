#include "relay/report_send.h"

#include <algorithm>

namespace inferscope::relay {

Result<std::size_t> send_report(const RelayConfig& config, const std::filesystem::path& config_file,
                                const std::string& channel, const Document& document) {
  if (config.channels.empty()) {
    return make_error("no channels in " + config_file.string() + " (notifications.channels)");
  }
  const int attempts = std::clamp(config.retry.max_attempts, 1, kReportSendAttempts);
  return send_document_now(config, channel, document, attempts);
}

}  // namespace inferscope::relay
