// File: channel.h
// Channel: one configured destination at run time: its secrets (resolved once), its limits, its
// rate limiter and its transport (HTTP POST or SMTP). Example:
//   auto ch = Channel::create(config, 10s);  SendOutcome o = (*ch)->send(message, included, now);
// Not thread-safe: owned by one delivery thread (the relay serialises deliver_due with it).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "relay/document.h"
#include "relay/http_poster.h"
#include "relay/message_renderer.h"
#include "relay/rate_limiter.h"
#include "relay/relay_config.h"
#include "relay/smtp_sender.h"

namespace inferscope::relay {

// resolve_secret reads a secret from its env var or file (trailing whitespace stripped). Errors
// name `what` and the variable or path, never the value.
Result<std::string> resolve_secret(const SecretSource& source, const std::string& what);

// default_messages_per_minute and default_max_message_bytes are each kind's documented limits.
int default_messages_per_minute(ChannelKind kind) noexcept;
std::size_t default_max_message_bytes(ChannelKind kind) noexcept;

// SendOutcome is the verdict on one message.
struct SendOutcome {
  bool ok = false;
  bool throttled = false;
  std::string error;  // no secrets: curl and robot messages only
  std::size_t bytes = 0;  // size of what was sent: the request body or the email message
};

struct OutgoingRequest;  // robot_payload.h

class Channel {
 public:
  // create validates the config and resolves its secrets. Errors start with "channel <name>: ".
  static Result<std::unique_ptr<Channel>> create(const ChannelConfig& config, std::chrono::milliseconds timeout);

  const ChannelConfig& config() const noexcept { return config_; }
  const std::string& name() const noexcept { return config_.name; }
  MarkupStyle style() const noexcept;
  std::size_t max_message_bytes() const noexcept { return max_bytes_; }
  RollingRateLimiter& limiter() noexcept { return limiter_; }
  // throttle_pause is how long to stop after the service said "too fast" (DingTalk: 10 minutes).
  std::chrono::milliseconds throttle_pause() const noexcept;
  // accepts reports whether notifications from this Alertmanager receiver go here.
  bool accepts(const std::string& receiver) const;

  // send delivers one composed message covering `included`.
  SendOutcome send(const ComposedMessage& message, const std::vector<Notification>& included,
                   std::chrono::system_clock::time_point now);
  // send_document delivers one document (document.h): its Markdown cut to max_message_bytes for
  // robots, title + Markdown + HTML to the generic webhook, multipart/alternative email. The body's
  // error code is checked as for alerts. The caller applies the rate limiter.
  SendOutcome send_document(const Document& document, std::chrono::system_clock::time_point now);

 private:
  SendOutcome post_checked(const OutgoingRequest& request);

  Channel(ChannelConfig config, std::string url, std::string secret, std::size_t max_bytes, int per_minute,
          std::chrono::milliseconds timeout);

  ChannelConfig config_;
  std::string url_;
  std::string secret_;
  std::size_t max_bytes_;
  RollingRateLimiter limiter_;
  HttpPoster poster_;
  std::unique_ptr<SmtpSender> smtp_;
};

}  // namespace inferscope::relay
