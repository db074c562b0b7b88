#include "relay/channel.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "relay/robot_payload.h"

namespace inferscope::relay {

Result<std::string> resolve_secret(const SecretSource& source, const std::string& what) {
  if (!source.env.empty() && !source.file.empty()) {
    return make_error("cannot read " + what + ": set either an environment variable or a file, not both");
  }
  std::string value;
  if (!source.env.empty()) {
    const char* env = std::getenv(source.env.c_str());
    if (env == nullptr || *env == '\0') {
      return make_error("cannot read " + what + " from environment variable " + source.env + ": not set");
    }
    value = env;
  } else if (!source.file.empty()) {
    std::ifstream in(source.file, std::ios::binary);
    if (!in) return make_error("cannot read " + what + " from file " + source.file + ": cannot open it");
    std::ostringstream text;
    text << in.rdbuf();
    value = text.str();
  } else {
    return make_error("cannot read " + what + ": neither an environment variable nor a file is configured");
  }
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ' || value.back() == '\t')) {
    value.pop_back();
  }
  if (value.empty()) return make_error("cannot read " + what + ": it is empty");
  return value;
}

int default_messages_per_minute(ChannelKind kind) noexcept {
  switch (kind) {
    case ChannelKind::kDingTalk:
    case ChannelKind::kWeCom: return 20;
    case ChannelKind::kFeishu: return 100;
    case ChannelKind::kSlack: return 60;
    case ChannelKind::kWebhook:
    case ChannelKind::kEmail: return 0;
  }
  return 0;
}

std::size_t default_max_message_bytes(ChannelKind kind) noexcept {
  switch (kind) {
    case ChannelKind::kWeCom: return 4096;
    case ChannelKind::kDingTalk:
    case ChannelKind::kFeishu: return 18000;  // 20,000-byte body limit less the JSON envelope
    case ChannelKind::kSlack: return 39000;   // Slack cuts text at 40,000 characters
    case ChannelKind::kWebhook:
    case ChannelKind::kEmail: return 0;
  }
  return 0;
}

Result<std::unique_ptr<Channel>> Channel::create(const ChannelConfig& config, std::chrono::milliseconds timeout) {
  const std::string prefix = "channel " + config.name + ": ";
  if (config.name.empty()) return make_error("channel without a name: every channel needs a unique name");
  for (const char c : config.name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) {
      return make_error(prefix + "name may contain only letters, digits, '_', '-' and '.'");
    }
  }
  auto url = resolve_secret(config.url, "the URL of channel " + config.name);
  if (!url) return url.error();
  const bool is_email = config.kind == ChannelKind::kEmail;
  const std::string scheme = url->substr(0, url->find("://"));
  if (is_email ? (scheme != "smtp" && scheme != "smtps") : (scheme != "http" && scheme != "https")) {
    return make_error(prefix + "URL must start with " + (is_email ? "smtp:// or smtps://" : "http:// or https://"));
  }
  std::string secret;
  if (!config.secret.empty()) {
    if (config.kind != ChannelKind::kFeishu && config.kind != ChannelKind::kDingTalk) {
      return make_error(prefix + "a signing secret is only used by feishu and dingtalk channels");
    }
    auto s = resolve_secret(config.secret, "the signing secret of channel " + config.name);
    if (!s) return s.error();
    secret = std::move(*s);
  }
  const int per_minute = config.messages_per_minute.value_or(default_messages_per_minute(config.kind));
  if (per_minute < 0) return make_error(prefix + "messages_per_minute must be >= 0");
  const std::size_t max_bytes = config.max_message_bytes.value_or(default_max_message_bytes(config.kind));
  if (max_bytes != 0 && max_bytes < 64) return make_error(prefix + "max_message_bytes must be 0 or >= 64");
  std::unique_ptr<Channel> channel(new Channel(config, std::move(*url), std::move(secret), max_bytes, per_minute, timeout));
  if (is_email) {
    if (config.email_from.empty() || config.email_to.empty()) {
      return make_error(prefix + "email needs email_from and at least one email_to");
    }
    SmtpSettings smtp{channel->url_, config.email_from, config.email_to, config.smtp_username, {}, config.smtp_require_tls,
                      timeout};
    if (!config.smtp_password.empty()) {
      auto password = resolve_secret(config.smtp_password, "the SMTP password of channel " + config.name);
      if (!password) return password.error();
      smtp.password = std::move(*password);
    }
    channel->smtp_ = std::make_unique<SmtpSender>(std::move(smtp));
  }
  return channel;
}

Channel::Channel(ChannelConfig config, std::string url, std::string secret, std::size_t max_bytes, int per_minute,
                 std::chrono::milliseconds timeout)
    : config_(std::move(config)),
      url_(std::move(url)),
      secret_(std::move(secret)),
      max_bytes_(max_bytes),
      // One second beyond the minute: the robot counts arrivals, which trail our send times.
      limiter_(per_minute, std::chrono::milliseconds(61000)),
      poster_(timeout) {}

MarkupStyle Channel::style() const noexcept { return markup_style(config_.kind); }

std::chrono::milliseconds Channel::throttle_pause() const noexcept {
  return config_.kind == ChannelKind::kDingTalk ? std::chrono::minutes(10) : std::chrono::minutes(1);
}

bool Channel::accepts(const std::string& receiver) const {
  if (config_.receivers.empty()) return true;
  for (const std::string& r : config_.receivers) {
    if (r == receiver) return true;
  }
  return false;
}

SendOutcome Channel::send(const ComposedMessage& message, const std::vector<Notification>& included,
                          std::chrono::system_clock::time_point now) {
  SendOutcome outcome;
  if (smtp_) {
    auto sent = smtp_->send(message.title, message.text, now);
    outcome.ok = sent.ok();
    if (!sent) outcome.error = sent.error().message;
    return outcome;
  }
  return post_checked(build_robot_request(config_.kind, message, included, url_, secret_, now));
}

SendOutcome Channel::send_document(const Document& document, std::chrono::system_clock::time_point now) {
  const ComposedMessage message = compose_document(document, max_bytes_, style());
  if (smtp_) {
    SendOutcome outcome;
    auto sent = smtp_->send_alternative(message.title, message.text, document.html, now);
    outcome.ok = sent.ok();
    if (sent) {
      outcome.bytes = *sent;
    } else {
      outcome.error = sent.error().message;
    }
    return outcome;
  }
  return post_checked(build_document_request(config_.kind, message, document, url_, secret_, now));
}

SendOutcome Channel::post_checked(const OutgoingRequest& request) {
  SendOutcome outcome;
  outcome.bytes = request.body.size();
  auto answer = poster_.post(request.url, request.body);
  if (!answer) {
    outcome.error = answer.error().message;
    return outcome;
  }
  const ReplyCheck check = check_robot_reply(config_.kind, answer->status, answer->body);
  outcome.ok = check.ok;
  outcome.throttled = check.throttled;
  outcome.error = check.error;
  return outcome;
}

}  // namespace inferscope::relay
