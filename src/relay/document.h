// File: document.h
// Document: a long text (the periodic report) delivered through the relay's channels, as opposed
// to an alert notification. Chat robots get the chat text (no tables), cut to their size limit at a UTF-8
// boundary with kTruncatedMarker and a line pointing to the full version; the generic webhook gets
// title, Markdown and HTML as JSON; email gets multipart/alternative (Markdown as text/plain, the
// HTML as text/html). Example:
//   Document d{"inferscope report ...", markdown, html, chat};
//   ComposedMessage m = compose_document(d, 4096, MarkupStyle::kWeCom);   // what a WeCom robot receives
//   Result<std::size_t> sent = send_document_now(config, "oncall", d, 3);   // `report --send`
// Pure functions apart from send_document_now (network), thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <inferscope/common/result.h>

#include "relay/message_renderer.h"
#include "relay/relay_config.h"

namespace inferscope::relay {

struct Document {
  std::string title;
  std::string markdown;
  std::string html;  // may be empty (then email is text/plain only)
  std::string chat = {};  // what chat robots get: no tables (they show them as raw pipes); "" = markdown
};

// kDocumentCutNote follows kTruncatedMarker in a document cut to a channel's limit.
inline constexpr std::string_view kDocumentCutNote =
    "\n\n(cut to fit this channel; the full report is in the HTML version: the email or webhook channel, "
    "or `inferscope report --format html`)";

// document_to_json / parse_document are the outbox's stored form ({"title","markdown","html","chat"};
// "chat" may be missing in documents stored before it existed). parse_document never throws;
// errors say which field is missing.
std::string document_to_json(const Document& document);
Result<Document> parse_document(std::string_view json_text);

// compose_document returns the document's title and its text for a channel of `style`: the chat
// text for robots (every style but kPlain) when the document has one, else the Markdown; whole
// when it fits in max_bytes (0 = unlimited), else its longest UTF-8-aligned prefix +
// kTruncatedMarker + kDocumentCutNote, the whole at most max_bytes (truncated = true).
// notifications is 0.
ComposedMessage compose_document(const Document& document, std::size_t max_bytes,
                                 MarkupStyle style = MarkupStyle::kPlain);

// send_document_now delivers one document synchronously through the channel named `channel` of
// `config` (secrets resolved as Relay::open does), trying at most `attempts` times with the
// config's back-off (capped at 10 s between tries). Returns the bytes sent (request body or email
// message). Errors are one line naming the channel; an unknown name lists the configured ones.
Result<std::size_t> send_document_now(const RelayConfig& config, const std::string& channel, const Document& document,
                                      int attempts);

// configured_channel_names returns "a, b, c" (or "none") for error messages.
std::string configured_channel_names(const RelayConfig& config);

}  // namespace inferscope::relay
