// File: smtp_sender.h
// SmtpSender: sends one plain-text UTF-8 email over SMTP with libcurl (STARTTLS when offered or
// required, AUTH when a user is set). Example:
//   SmtpSender smtp(settings);  Result<void> r = smtp.send("[FIRING:1] HighLatency", text);
// Not thread-safe: one sender per delivery thread. Never logs the password.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

namespace inferscope::relay {

// SmtpSettings: server URL (smtp://host:port or smtps://host:port), envelope and credentials.
struct SmtpSettings {
  std::string url;
  std::string from;
  std::vector<std::string> to;
  std::string username;  // empty = no AUTH
  std::string password;
  bool require_tls = false;
  std::chrono::milliseconds timeout{10000};
};

// build_email_message returns the RFC 5322 message: headers (Subject as an RFC 2047 UTF-8 word),
// body base64 in 76-column lines (so no line-length or dot-stuffing hazards).
std::string build_email_message(const SmtpSettings& settings, const std::string& subject, const std::string& text,
                                std::chrono::system_clock::time_point now);

// build_alternative_email_message returns the same headers with a multipart/alternative body: the
// text as text/plain and, when html is non-empty, the HTML as text/html (each part base64). The
// boundary is derived from a hash of the content, so it never occurs in it.
std::string build_alternative_email_message(const SmtpSettings& settings, const std::string& subject,
                                            const std::string& text, const std::string& html,
                                            std::chrono::system_clock::time_point now);

class SmtpSender {
 public:
  explicit SmtpSender(SmtpSettings settings);
  // send delivers one message; errors ("cannot send email: ...") carry the server's reply.
  Result<void> send(const std::string& subject, const std::string& text, std::chrono::system_clock::time_point now);
  // send_alternative delivers build_alternative_email_message; returns the message's size in bytes.
  Result<std::size_t> send_alternative(const std::string& subject, const std::string& text, const std::string& html,
                                       std::chrono::system_clock::time_point now);

 private:
  Result<void> deliver(const std::string& message);

  SmtpSettings settings_;
};

}  // namespace inferscope::relay
