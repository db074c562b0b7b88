// File: up_session.cpp
#include "up/up_session.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <algorithm>
#include <array>
#include <vector>

namespace inferscope::up {
namespace {

std::string up_session_digest(std::string_view id) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(id.data(), id.size(), digest.data(), &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest.data()), size);
}

}  // namespace

Result<std::string> up_random_hex(std::size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  if (RAND_bytes(raw.data(), static_cast<int>(raw.size())) != 1) return make_error("OpenSSL RAND_bytes failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (const unsigned char b : raw) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

UpSessions::UpSessions(Clock now) : now_(std::move(now)) {
  if (!now_) now_ = [] { return std::chrono::steady_clock::now(); };
}

Result<UpNewSession> UpSessions::create(const std::string& user, config::WebRole role) {
  auto id = up_random_hex(32);
  if (!id) return make_error(id.error().message);
  auto csrf = up_random_hex(32);
  if (!csrf) return make_error(csrf.error().message);
  std::lock_guard lock(mutex_);
  const auto now = now_();
  std::erase_if(by_digest_, [&](const auto& entry) { return entry.second.expires <= now; });
  if (by_digest_.size() >= kMaxSessions) {
    auto oldest = std::min_element(by_digest_.begin(), by_digest_.end(), [](const auto& a, const auto& b) {
      return a.second.expires < b.second.expires;
    });
    by_digest_.erase(oldest);
  }
  by_digest_[up_session_digest(*id)] = UpSession{user, role, *csrf, now + kLifetime};
  return UpNewSession{*id, *csrf};
}

std::optional<UpSession> UpSessions::find(std::string_view id) {
  if (id.empty()) return std::nullopt;
  const std::string digest = up_session_digest(id);
  std::lock_guard lock(mutex_);
  auto it = by_digest_.find(digest);
  if (it == by_digest_.end()) return std::nullopt;
  if (it->second.expires <= now_()) {
    by_digest_.erase(it);
    return std::nullopt;
  }
  return it->second;
}

bool UpSessions::drop(std::string_view id) {
  const std::string digest = up_session_digest(id);
  std::lock_guard lock(mutex_);
  return by_digest_.erase(digest) > 0;
}

std::size_t UpSessions::size() {
  std::lock_guard lock(mutex_);
  return by_digest_.size();
}

}  // namespace inferscope::up
