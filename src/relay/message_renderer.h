// File: message_renderer.h
// Turns notifications into chat text: one section per notification as Alertmanager grouped it
// (title, each alert's labels, summary, description, runbook, time, source link, and the
// diagnosis slot), in the markup dialect of each service, and merges several sections into one
// size-limited message. Example:
//   ComposedMessage m = compose_message(MarkupStyle::kDingTalk, batch, 18000, diagnoses);
// Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "relay/notification.h"

namespace inferscope::relay {

// MarkupStyle is the text dialect a service renders.
enum class MarkupStyle {
  kLarkMd,    // Feishu/Lark card lark_md: **bold**, [text](url)
  kDingTalk,  // DingTalk markdown: #### heading, blank line between paragraphs
  kWeCom,     // WeCom markdown: # heading, <font color="warning|info">
  kSlack,     // Slack mrkdwn: *bold*, <url|text>
  kPlain,     // email and the generic webhook's "text"
};

// notification_title returns "[FIRING:2] HighLatency (model=m1)" or "[RESOLVED] ...".
std::string notification_title(const Notification& notification);

// render_section renders one notification. `diagnosis` (Markdown from the doctor) is shown under
// "Diagnosis" when non-empty; each alert's runbook annotation is always shown.
std::string render_section(const Notification& notification, MarkupStyle style, const std::string& diagnosis);

// ComposedMessage is what one send carries.
struct ComposedMessage {
  std::string title;
  std::string text;
  std::size_t notifications = 0;  // how many of the batch (from its front) the text covers
  bool truncated = false;         // the single section was cut to fit
};

// compose_message merges the front of `batch` into one message of at most max_bytes of text
// (0 = unlimited): whole sections while they fit; a first section that alone is too long is cut
// at a UTF-8 boundary with kTruncatedMarker. The rest of the batch is left for the next message.
// diagnoses[i] belongs to batch[i] (may be shorter: missing = none). Requires a non-empty batch.
ComposedMessage compose_message(MarkupStyle style, const std::vector<Notification>& batch, std::size_t max_bytes,
                                const std::vector<std::string>& diagnoses);

}  // namespace inferscope::relay
