#include "relay/smtp_sender.h"

#include <cstring>
#include <functional>
#include <ctime>

#include <curl/curl.h>

#include "relay/http_poster.h"
#include "relay/robot_signature.h"

namespace inferscope::relay {
namespace {

struct ReadCursor {
  const std::string* data;
  std::size_t offset = 0;
};

std::size_t feed(char* buffer, std::size_t size, std::size_t count, void* user) {
  auto* cursor = static_cast<ReadCursor*>(user);
  const std::size_t n = std::min(size * count, cursor->data->size() - cursor->offset);
  std::memcpy(buffer, cursor->data->data() + cursor->offset, n);
  cursor->offset += n;
  return n;
}

std::string angle(const std::string& address) {
  return address.find('<') == std::string::npos ? "<" + address + ">" : address;
}

// header_safe drops CR/LF so that a label value cannot inject headers.
std::string header_safe(std::string text) {
  for (char& c : text) {
    if (c == '\r' || c == '\n') c = ' ';
  }
  return text;
}

}  // namespace

namespace {

// email_headers returns Date, From, To, Subject and MIME-Version lines.
std::string email_headers(const SmtpSettings& settings, const std::string& subject,
                          std::chrono::system_clock::time_point now) {
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[64];
  std::strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  std::string to;
  for (const std::string& rcpt : settings.to) to += (to.empty() ? "" : ", ") + header_safe(rcpt);
  std::string message = "Date: " + std::string(date) + "\r\n";
  message += "From: " + header_safe(settings.from) + "\r\n";
  message += "To: " + to + "\r\n";
  message += "Subject: =?UTF-8?B?" + base64_encode(header_safe(subject)) + "?=\r\n";
  message += "MIME-Version: 1.0\r\n";
  return message;
}

// base64_lines encodes data in 76-column CRLF lines (so no line-length or dot-stuffing hazards).
std::string base64_lines(const std::string& data) {
  const std::string encoded = base64_encode(data);
  std::string out;
  for (std::size_t i = 0; i < encoded.size(); i += 76) out += encoded.substr(i, 76) + "\r\n";
  return out;
}

}  // namespace

std::string build_email_message(const SmtpSettings& settings, const std::string& subject, const std::string& text,
                                std::chrono::system_clock::time_point now) {
  std::string message = email_headers(settings, subject, now);
  message += "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: base64\r\n";
  message += "X-Mailer: inferscope-relay\r\n\r\n";
  return message + base64_lines(text);
}

std::string build_alternative_email_message(const SmtpSettings& settings, const std::string& subject,
                                            const std::string& text, const std::string& html,
                                            std::chrono::system_clock::time_point now) {
  if (html.empty()) return build_email_message(settings, subject, text, now);
  // Parts are base64, whose alphabet has no '_', so this boundary cannot occur in them.
  const std::string boundary = "=_inferscope_" + std::to_string(std::hash<std::string>{}(text + html));
  std::string message = email_headers(settings, subject, now);
  message += "Content-Type: multipart/alternative; boundary=\"" + boundary + "\"\r\n";
  message += "X-Mailer: inferscope-relay\r\n\r\n";
  message += "--" + boundary + "\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
  message += base64_lines(text);
  message += "--" + boundary + "\r\nContent-Type: text/html; charset=UTF-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
  message += base64_lines(html);
  message += "--" + boundary + "--\r\n";
  return message;
}

SmtpSender::SmtpSender(SmtpSettings settings) : settings_(std::move(settings)) { ensure_curl_initialized(); }

Result<void> SmtpSender::send(const std::string& subject, const std::string& text,
                              std::chrono::system_clock::time_point now) {
  return deliver(build_email_message(settings_, subject, text, now));
}

Result<std::size_t> SmtpSender::send_alternative(const std::string& subject, const std::string& text,
                                                 const std::string& html, std::chrono::system_clock::time_point now) {
  const std::string message = build_alternative_email_message(settings_, subject, text, html, now);
  if (auto r = deliver(message); !r) return r.error();
  return message.size();
}

Result<void> SmtpSender::deliver(const std::string& message) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return make_error("cannot send email: curl_easy_init failed");
  ReadCursor cursor{&message};
  curl_slist* recipients = nullptr;
  for (const std::string& rcpt : settings_.to) recipients = curl_slist_append(recipients, angle(rcpt).c_str());
  const std::string from = angle(settings_.from);
  char error_text[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(curl, CURLOPT_URL, settings_.url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(curl, CURLOPT_MAIL_RCPT, recipients);
  curl_easy_setopt(curl, CURLOPT_READFUNCTION, feed);
  curl_easy_setopt(curl, CURLOPT_READDATA, &cursor);
  curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(curl, CURLOPT_USE_SSL, settings_.require_tls ? static_cast<long>(CURLUSESSL_ALL)
                                                               : static_cast<long>(CURLUSESSL_TRY));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(settings_.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
  if (!settings_.username.empty()) {
    curl_easy_setopt(curl, CURLOPT_USERNAME, settings_.username.c_str());
    curl_easy_setopt(curl, CURLOPT_PASSWORD, settings_.password.c_str());
  }
  const CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(recipients);
  curl_easy_cleanup(curl);
  if (code != CURLE_OK) {
    return make_error(std::string("cannot send email: ") + (error_text[0] != 0 ? error_text : curl_easy_strerror(code)));
  }
  return {};
}

}  // namespace inferscope::relay
