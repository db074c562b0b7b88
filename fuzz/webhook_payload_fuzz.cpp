// libFuzzer target for the relay's Alertmanager webhook parser (outside input: any process that
// can reach up's port can POST it), and for what the relay does next with a parsed payload:
// serialise it to the outbox, derive its dedupe key and render it for every channel.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "relay/message_renderer.h"
#include "relay/notification.h"

using namespace inferscope::relay;

namespace {

// valid_utf8 checks sequence structure only: enough to catch a cut through a character.
bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    const std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    }
    i += len;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_notification(body);
  if (!parsed) {
    // Every rejection says why, in the documented form.
    if (parsed.error().message.rfind("cannot parse Alertmanager webhook: ", 0) != 0) std::abort();
    return 0;
  }
  const Notification& n = *parsed;
  if (n.alerts.empty() || (n.status != "firing" && n.status != "resolved")) std::abort();
  // What the outbox stores must parse back to the same notification.
  const std::string stored = notification_to_json(n);
  auto again = parse_notification(stored);
  if (!again || notification_to_json(*again) != stored || dedupe_key(*again) != dedupe_key(n)) std::abort();
  for (const Alert& a : n.alerts) (void)parse_rfc3339(a.starts_at);
  for (MarkupStyle style : {MarkupStyle::kLarkMd, MarkupStyle::kDingTalk, MarkupStyle::kWeCom, MarkupStyle::kSlack,
                            MarkupStyle::kPlain}) {
    const ComposedMessage m = compose_message(style, {n, n}, 512, {"diagnosis"});
    if (m.text.size() > 512 || m.notifications < 1 || m.notifications > 2) std::abort();
    // The parser only lets valid UTF-8 through, so a cut that splits a character shows here.
    if (!valid_utf8(m.text)) std::abort();
  }
  return 0;
}
