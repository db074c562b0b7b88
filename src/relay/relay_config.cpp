#include "relay/relay_config.h"

namespace inferscope::relay {

std::string_view channel_kind_name(ChannelKind kind) noexcept {
  switch (kind) {
    case ChannelKind::kFeishu: return "feishu";
    case ChannelKind::kDingTalk: return "dingtalk";
    case ChannelKind::kWeCom: return "wecom";
    case ChannelKind::kSlack: return "slack";
    case ChannelKind::kWebhook: return "webhook";
    case ChannelKind::kEmail: return "email";
  }
  return "webhook";
}

std::optional<ChannelKind> parse_channel_kind(std::string_view text) noexcept {
  if (text == "feishu" || text == "lark") return ChannelKind::kFeishu;
  if (text == "dingtalk") return ChannelKind::kDingTalk;
  if (text == "wecom") return ChannelKind::kWeCom;
  if (text == "slack") return ChannelKind::kSlack;
  if (text == "webhook") return ChannelKind::kWebhook;
  if (text == "email") return ChannelKind::kEmail;
  return std::nullopt;
}

}  // namespace inferscope::relay
