#include "stack/report_send.h"

#include <algorithm>

#include "stack/stack_config.h"

namespace inferscope::stack {

Result<std::size_t> send_report_with_config(const std::filesystem::path& config_file, const std::string& channel,
                                            const relay::Document& document) {
  auto config = load_stack_config(config_file);
  if (!config) return config.error();
  if (config->relay.channels.empty()) {
    return make_error("no channels in " + config_file.string() + " (notifications.channels)");
  }
  const int attempts = std::clamp(config->relay.retry.max_attempts, 1, kReportSendAttempts);
  return relay::send_document_now(config->relay, channel, document, attempts);
}

}  // namespace inferscope::stack
