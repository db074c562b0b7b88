#include "relay/document.h"

#include <algorithm>
#include <thread>

#include <nlohmann/json.hpp>

#include "relay/channel.h"
#include "relay/utf8_truncate.h"

namespace inferscope::relay {

std::string document_to_json(const Document& d) {
  return nlohmann::json({{"title", d.title}, {"markdown", d.markdown}, {"html", d.html}, {"chat", d.chat}})
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Result<Document> parse_document(std::string_view text) {
  const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (!j.is_object()) return make_error("cannot parse stored document: not a JSON object");
  Document d;
  for (auto [key, field] : {std::pair{"title", &d.title}, std::pair{"markdown", &d.markdown}, std::pair{"html", &d.html}}) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_string()) {
      return make_error(std::string("cannot parse stored document: field '") + key + "' missing or not a string");
    }
    *field = it->get<std::string>();
  }
  if (const auto it = j.find("chat"); it != j.end()) {
    if (!it->is_string()) return make_error("cannot parse stored document: field 'chat' not a string");
    d.chat = it->get<std::string>();
  }
  return d;
}

ComposedMessage compose_document(const Document& document, std::size_t max_bytes, MarkupStyle style) {
  ComposedMessage m;
  m.title = document.title;
  const std::string& text = style != MarkupStyle::kPlain && !document.chat.empty() ? document.chat : document.markdown;
  if (max_bytes == 0 || text.size() <= max_bytes) {
    m.text = text;
    return m;
  }
  const std::string tail = std::string(kTruncatedMarker) + std::string(kDocumentCutNote);
  if (max_bytes <= tail.size()) {
    m.text = truncate_utf8(text, max_bytes);  // tiny limits: the marker alone
  } else {
    m.text = text.substr(0, utf8_prefix_length(text, max_bytes - tail.size())) + tail;
  }
  m.truncated = true;
  return m;
}

std::string configured_channel_names(const RelayConfig& config) {
  std::string names;
  for (const ChannelConfig& c : config.channels) names += (names.empty() ? "" : ", ") + c.name;
  return names.empty() ? "none" : names;
}

Result<std::size_t> send_document_now(const RelayConfig& config, const std::string& name, const Document& document,
                                      int attempts) {
  const auto found = std::find_if(config.channels.begin(), config.channels.end(),
                                  [&](const ChannelConfig& c) { return c.name == name; });
  if (found == config.channels.end()) {
    return make_error("unknown channel \"" + name + "\" (configured: " + configured_channel_names(config) + ")");
  }
  auto channel = Channel::create(*found, config.request_timeout);
  if (!channel) return channel.error();
  auto delay = std::min<std::chrono::milliseconds>(config.retry.initial_backoff, std::chrono::seconds(10));
  SendOutcome outcome;
  for (int attempt = 1; attempt <= std::max(1, attempts); ++attempt) {
    const auto now = std::chrono::system_clock::now();
    if (!(*channel)->limiter().allowed(now)) {
      std::this_thread::sleep_until(std::chrono::steady_clock::now() + ((*channel)->limiter().next_allowed(now) - now));
    }
    outcome = (*channel)->send_document(document, std::chrono::system_clock::now());
    (*channel)->limiter().record(std::chrono::system_clock::now());
    if (outcome.ok) return outcome.bytes;
    if (attempt < attempts) {
      std::this_thread::sleep_for(outcome.throttled ? std::max<std::chrono::milliseconds>(delay, std::chrono::seconds(10))
                                                    : delay);
      delay = std::min<std::chrono::milliseconds>(delay * 2, std::chrono::seconds(10));
    }
  }
  return make_error("channel " + name + ": " + outcome.error + " (after " + std::to_string(std::max(1, attempts)) +
                    " attempts)");
}

}  // namespace inferscope::relay
