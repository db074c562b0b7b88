// Fuzzes the parsers of what Celery (kombu's Redis transport) leaves in Redis: task messages
// (parse_celery_message), worker events from /<db>.celeryev/worker.* (parse_celery_event) and
// base64 bodies (base64_decode). Invariants: never crashes or throws; errors are one line starting
// "cannot parse celery message: " / "cannot parse celery event: "; an accepted message has an id
// and a non-negative finite enqueue time when it has one; an accepted event is a worker event
// with a hostname, a timestamp >= 0, a freq in (0, 3600] and counts >= 0.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "queue/queue_payload.h"

namespace {

void check_error(const std::string& message, std::string_view prefix) {
  if (message.rfind(prefix, 0) != 0 || message.find('\n') != std::string::npos) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  using namespace inferscope::queue;
  if (auto message = parse_celery_message(text)) {
    if (message->id.empty()) std::abort();
    if (message->enqueued_at && (!std::isfinite(*message->enqueued_at) || *message->enqueued_at < 0)) std::abort();
  } else {
    check_error(message.error().message, "cannot parse celery message: ");
  }
  if (auto event = parse_celery_event(text)) {
    if (event->hostname.empty() || event->timestamp < 0 || !(event->freq > 0 && event->freq <= 3600) ||
        event->active < 0 || event->processed < 0) {
      std::abort();
    }
    if (event->type != "worker-heartbeat" && event->type != "worker-online" && event->type != "worker-offline") {
      std::abort();
    }
  } else {
    check_error(event.error().message, "cannot parse celery event: ");
  }
  if (const auto decoded = base64_decode(text)) {
    if (decoded->size() > text.size()) std::abort();
  }
  return 0;
}
