#include "queue/queue_payload.h"

#include <charconv>
#include <cmath>

#include <nlohmann/json.hpp>

namespace inferscope::queue {
namespace {

bool digits(std::string_view text, std::size_t pos, std::size_t count, int& out) {
  if (pos + count > text.size()) return false;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  out = value;
  return true;
}

// days_from_civil returns days since 1970-01-01 (Howard Hinnant's algorithm).
long long days_from_civil(int y, int m, int d) noexcept {
  y -= m <= 2 ? 1 : 0;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * static_cast<unsigned>(m + (m > 2 ? -3 : 9)) + 2) / 5 + static_cast<unsigned>(d) - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

int days_in_month(int y, int m) noexcept {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

std::optional<double> number_of(const nlohmann::json& value) {
  if (value.is_number()) {
    const double v = value.get<double>();
    if (std::isfinite(v)) return v;
    return std::nullopt;
  }
  if (value.is_string()) {
    const auto& s = value.get_ref<const std::string&>();
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size() && std::isfinite(v)) return v;
  }
  return std::nullopt;
}

}  // namespace

std::optional<double> parse_rq_timestamp(std::string_view text) noexcept {
  // 2026-12-01T16:07:04[.146997]Z
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (text.size() < 20 || text.size() > 64) return std::nullopt;
  if (!digits(text, 0, 4, year) || text[4] != '-' || !digits(text, 5, 2, month) || text[7] != '-' ||
      !digits(text, 8, 2, day) || text[10] != 'T' || !digits(text, 11, 2, hour) || text[13] != ':' ||
      !digits(text, 14, 2, minute) || text[16] != ':' || !digits(text, 17, 2, second)) {
    return std::nullopt;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > days_in_month(year, month) || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  double fraction = 0;
  std::size_t pos = 19;
  if (text[pos] == '.') {
    ++pos;
    double scale = 0.1;
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (pos - start < 9) fraction += (text[pos] - '0') * scale;
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  if (pos + 1 != text.size() || text[pos] != 'Z') return std::nullopt;
  const long long days = days_from_civil(year, month, day);
  return static_cast<double>(days * 86400 + hour * 3600 + minute * 60 + second) + fraction;
}

Result<CeleryMessage> parse_celery_message(std::string_view json) noexcept {
  const auto fail = [](const std::string& why) { return make_error("cannot parse celery message: " + why); };
  if (json.size() > kMaxPayloadBytes) return fail("larger than 1 MiB");
  const auto doc = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (doc.is_discarded()) return fail("not JSON");
  if (!doc.is_object()) return fail("not a JSON object");
  const auto headers = doc.find("headers");
  if (headers == doc.end() || !headers->is_object()) return fail("no headers object");
  CeleryMessage message;
  const auto id = headers->find("id");
  if (id == headers->end() || !id->is_string() || id->get_ref<const std::string&>().empty()) {
    return fail("no headers.id");
  }
  message.id = id->get<std::string>();
  if (const auto task = headers->find("task"); task != headers->end() && task->is_string()) {
    message.task = task->get<std::string>();
  }
  if (const auto enqueued = headers->find("inferscope_enqueued_at"); enqueued != headers->end() && !enqueued->is_null()) {
    message.enqueued_at = number_of(*enqueued);
    if (!message.enqueued_at || *message.enqueued_at < 0) return fail("headers.inferscope_enqueued_at is not Unix seconds");
  }
  return message;
}

Result<CeleryWorkerEvent> parse_celery_event(std::string_view envelope) noexcept {
  const auto fail = [](const std::string& why) { return make_error("cannot parse celery event: " + why); };
  if (envelope.size() > kMaxPayloadBytes) return fail("larger than 1 MiB");
  const auto doc = nlohmann::json::parse(envelope.begin(), envelope.end(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return fail("the envelope is not a JSON object");
  const auto body = doc.find("body");
  if (body == doc.end() || !body->is_string()) return fail("no body string");
  std::string event_text = body->get<std::string>();
  const auto properties = doc.find("properties");
  if (properties != doc.end() && properties->is_object()) {
    const auto encoding = properties->find("body_encoding");
    if (encoding != properties->end() && encoding->is_string() && encoding->get_ref<const std::string&>() == "base64") {
      auto decoded = base64_decode(event_text);
      if (!decoded) return fail("the body is not base64");
      event_text = std::move(*decoded);
    }
  }
  const auto event = nlohmann::json::parse(event_text, nullptr, false);
  if (event.is_discarded() || !event.is_object()) return fail("the body is not a JSON object");
  CeleryWorkerEvent out;
  const auto type = event.find("type");
  if (type == event.end() || !type->is_string()) return fail("no type");
  out.type = type->get<std::string>();
  if (out.type != "worker-heartbeat" && out.type != "worker-online" && out.type != "worker-offline") {
    return fail("not a worker event");
  }
  const auto hostname = event.find("hostname");
  if (hostname == event.end() || !hostname->is_string() || hostname->get_ref<const std::string&>().empty()) {
    return fail("no hostname");
  }
  out.hostname = hostname->get<std::string>();
  const auto timestamp = event.find("timestamp");
  const auto ts = timestamp == event.end() ? std::nullopt : number_of(*timestamp);
  if (!ts || *ts < 0) return fail("no numeric timestamp");
  out.timestamp = *ts;
  if (const auto freq = event.find("freq"); freq != event.end()) {
    const auto f = number_of(*freq);
    if (!f || *f <= 0 || *f > 3600) return fail("freq is not 0..3600 seconds");
    out.freq = *f;
  }
  if (const auto active = event.find("active"); active != event.end()) {
    if (!active->is_number_integer() || active->get<long long>() < 0) return fail("active is not a count");
    out.active = active->get<long long>();
  }
  if (const auto processed = event.find("processed"); processed != event.end()) {
    if (!processed->is_number_integer() || processed->get<long long>() < 0) return fail("processed is not a count");
    out.processed = processed->get<long long>();
  }
  return out;
}

std::optional<StreamId> parse_stream_id(std::string_view text) noexcept {
  const auto dash = text.find('-');
  if (dash == std::string_view::npos || dash == 0 || dash + 1 == text.size()) return std::nullopt;
  StreamId id;
  const char* begin = text.data();
  auto [end_ms, ec_ms] = std::from_chars(begin, begin + dash, id.ms);
  if (ec_ms != std::errc() || end_ms != begin + dash) return std::nullopt;
  auto [end_seq, ec_seq] = std::from_chars(begin + dash + 1, begin + text.size(), id.seq);
  if (ec_seq != std::errc() || end_seq != begin + text.size()) return std::nullopt;
  return id;
}

bool is_label_safe(std::string_view text) noexcept {
  if (text.empty() || text.size() > 200) return false;
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = 0;
    std::uint32_t code = 0;
    if ((c & 0xe0) == 0xc0) {
      length = 2;
      code = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      length = 3;
      code = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      length = 4;
      code = c & 0x07;
    } else {
      return false;
    }
    if (i + length > text.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      code = (code << 6) | (cc & 0x3f);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (code < kMin[length] || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return false;
    if (code >= 0x80 && code < 0xa0) return false;  // C1 controls
    i += length;
  }
  return true;
}

std::optional<std::string> base64_decode(std::string_view text) noexcept {
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::uint32_t buffer = 0;
  int bits = 0;
  std::size_t padding = 0;
  std::size_t symbols = 0;
  for (const char c : text) {
    if (c == '\r' || c == '\n') continue;
    int value = -1;
    if (c >= 'A' && c <= 'Z') value = c - 'A';
    else if (c >= 'a' && c <= 'z') value = c - 'a' + 26;
    else if (c >= '0' && c <= '9') value = c - '0' + 52;
    else if (c == '+') value = 62;
    else if (c == '/') value = 63;
    else if (c == '=') {
      ++padding;
      ++symbols;
      continue;
    } else {
      return std::nullopt;
    }
    if (padding > 0) return std::nullopt;  // data after padding
    ++symbols;
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((buffer >> bits) & 0xff));
    }
  }
  if (padding > 2 || (padding > 0 && symbols % 4 != 0) || symbols % 4 == 1) return std::nullopt;
  return out;
}

}  // namespace inferscope::queue
