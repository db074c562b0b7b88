#include "relay/robot_payload.h"

#include <nlohmann/json.hpp>

#include "relay/robot_signature.h"
#include "relay/utf8_truncate.h"

namespace inferscope::relay {
namespace {

using nlohmann::json;

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string cut(std::string_view body) { return truncate_utf8(body, 200, "..."); }

bool firing(const std::vector<Notification>& included) {
  for (const Notification& n : included) {
    if (n.status == "firing") return true;
  }
  return false;
}

}  // namespace

MarkupStyle markup_style(ChannelKind kind) noexcept {
  switch (kind) {
    case ChannelKind::kFeishu: return MarkupStyle::kLarkMd;
    case ChannelKind::kDingTalk: return MarkupStyle::kDingTalk;
    case ChannelKind::kWeCom: return MarkupStyle::kWeCom;
    case ChannelKind::kSlack: return MarkupStyle::kSlack;
    case ChannelKind::kWebhook:
    case ChannelKind::kEmail: return MarkupStyle::kPlain;
  }
  return MarkupStyle::kPlain;
}

OutgoingRequest build_robot_request(ChannelKind kind, const ComposedMessage& message,
                                    const std::vector<Notification>& included, const std::string& url,
                                    const std::string& secret, std::chrono::system_clock::time_point now) {
  using std::chrono::duration_cast;
  OutgoingRequest request{url, {}};
  switch (kind) {
    case ChannelKind::kFeishu: {
      json body = {{"msg_type", "interactive"},
                   {"card",
                    {{"header",
                      {{"title", {{"tag", "plain_text"}, {"content", message.title}}},
                       {"template", firing(included) ? "red" : "green"}}},
                     {"elements", json::array({{{"tag", "div"}, {"text", {{"tag", "lark_md"}, {"content", message.text}}}}})}}}};
      if (!secret.empty()) {
        const auto seconds = duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
        body["timestamp"] = std::to_string(seconds);
        body["sign"] = feishu_signature(seconds, secret);
      }
      request.body = dump(body);
      break;
    }
    case ChannelKind::kDingTalk: {
      request.body = dump({{"msgtype", "markdown"}, {"markdown", {{"title", message.title}, {"text", message.text}}}});
      if (!secret.empty()) {
        const auto ms = duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
        request.url += url.find('?') == std::string::npos ? '?' : '&';
        request.url += "timestamp=" + std::to_string(ms) + "&sign=" + url_encode(dingtalk_signature(ms, secret));
      }
      break;
    }
    case ChannelKind::kWeCom:
      request.body = dump({{"msgtype", "markdown"}, {"markdown", {{"content", message.text}}}});
      break;
    case ChannelKind::kSlack:
      request.body = dump({{"text", message.text}});
      break;
    case ChannelKind::kWebhook:
    case ChannelKind::kEmail: {
      json notifications = json::array();
      for (const Notification& n : included) {
        notifications.push_back(json::parse(notification_to_json(n), nullptr, false));
      }
      request.body = dump({{"version", "inferscope.relay/1"},
                           {"title", message.title},
                           {"text", message.text},
                           {"truncated", message.truncated},
                           {"notifications", std::move(notifications)}});
      break;
    }
  }
  return request;
}

OutgoingRequest build_document_request(ChannelKind kind, const ComposedMessage& message, const Document& document,
                                       const std::string& url, const std::string& secret,
                                       std::chrono::system_clock::time_point now) {
  if (kind != ChannelKind::kWebhook && kind != ChannelKind::kEmail) {
    return build_robot_request(kind, message, {}, url, secret, now);
  }
  return {url, dump({{"version", "inferscope.document/1"},
                     {"kind", "report"},
                     {"title", document.title},
                     {"markdown", message.text},
                     {"html", document.html},
                     {"truncated", message.truncated}})};
}

ReplyCheck check_robot_reply(ChannelKind kind, long http_status, std::string_view body) {
  ReplyCheck check;
  if (http_status == 429) {
    check.throttled = true;
    check.error = "HTTP 429: " + cut(body);
    return check;
  }
  if (http_status < 200 || http_status > 299) {
    check.error = "HTTP " + std::to_string(http_status) + ": " + cut(body);
    return check;
  }
  if (kind == ChannelKind::kSlack || kind == ChannelKind::kWebhook || kind == ChannelKind::kEmail) {
    check.ok = true;
    return check;
  }
  const json reply = json::parse(body.begin(), body.end(), nullptr, false);
  const char* code_key = kind == ChannelKind::kFeishu ? "code" : "errcode";
  const json* code = nullptr;
  if (reply.is_object()) {
    if (auto it = reply.find(code_key); it != reply.end()) code = &*it;
    if (code == nullptr && kind == ChannelKind::kFeishu) {
      if (auto it = reply.find("StatusCode"); it != reply.end()) code = &*it;
    }
  }
  if (code == nullptr || !code->is_number_integer()) {
    check.error = "HTTP " + std::to_string(http_status) + " without a numeric " + code_key + ": " + cut(body);
    return check;
  }
  const auto value = code->get<long long>();
  if (value == 0) {
    check.ok = true;
    return check;
  }
  check.throttled = (kind == ChannelKind::kDingTalk && value == 130101) || (kind == ChannelKind::kWeCom && value == 45009);
  check.error = "HTTP " + std::to_string(http_status) + " " + code_key + " " + std::to_string(value) + ": " + cut(body);
  return check;
}

}  // namespace inferscope::relay
