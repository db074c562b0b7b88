// File: robot_payload.h
// The request each channel kind sends (URL with DingTalk's signature, JSON body with Feishu's) and
// the check of each service's reply, which reports errors in the body of an HTTP 200.
// Example: OutgoingRequest r = build_robot_request(ChannelKind::kDingTalk, msg, batch, url, secret, now);
// Pure functions, thread-safe. Email goes through smtp_sender.h instead.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "relay/document.h"
#include "relay/message_renderer.h"
#include "relay/notification.h"
#include "relay/relay_config.h"

namespace inferscope::relay {

// OutgoingRequest is one HTTP POST (Content-Type: application/json).
struct OutgoingRequest {
  std::string url;
  std::string body;
};

// markup_style returns the text dialect of a channel kind.
MarkupStyle markup_style(ChannelKind kind) noexcept;

// build_robot_request renders the POST for kind (not kEmail). `included` are the notifications
// the message covers (the generic webhook carries them as JSON). An empty secret means unsigned.
OutgoingRequest build_robot_request(ChannelKind kind, const ComposedMessage& message,
                                    const std::vector<Notification>& included, const std::string& url,
                                    const std::string& secret, std::chrono::system_clock::time_point now);

// build_document_request renders the POST of a document (document.h) for kind (not kEmail): the
// robots get `message` (the document's title and its Markdown, already cut to the channel's limit)
// exactly as an alert message, signed the same way; the generic webhook gets
// {"version":"inferscope.document/1","kind":"report","title","markdown","html","truncated"}: the
// Markdown of `message` (whole unless max_message_bytes is set) and the whole HTML.
OutgoingRequest build_document_request(ChannelKind kind, const ComposedMessage& message, const Document& document,
                                       const std::string& url, const std::string& secret,
                                       std::chrono::system_clock::time_point now);

// ReplyCheck is the verdict on a service's answer.
struct ReplyCheck {
  bool ok = false;
  bool throttled = false;  // the service said "too many messages" (HTTP 429, DingTalk 130101, WeCom 45009)
  std::string error;       // "HTTP 200 errcode 310000: keywords not in content" (body cut to 200 bytes)
};

// check_robot_reply judges an HTTP answer: non-2xx fails; Feishu needs code (or StatusCode) 0,
// DingTalk and WeCom errcode 0; Slack and webhooks any 2xx.
ReplyCheck check_robot_reply(ChannelKind kind, long http_status, std::string_view body);

}  // namespace inferscope::relay
