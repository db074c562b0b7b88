#include "relay/http_poster.h"

#include <mutex>

#include <curl/curl.h>

namespace inferscope::relay {
namespace {

constexpr std::size_t kMaxReplyBytes = 64 * 1024;

std::size_t collect(char* data, std::size_t size, std::size_t count, void* user) {
  auto* out = static_cast<std::string*>(user);
  const std::size_t n = size * count;
  if (out->size() < kMaxReplyBytes) out->append(data, std::min(n, kMaxReplyBytes - out->size()));
  return n;
}

}  // namespace

void ensure_curl_initialized() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

HttpPoster::HttpPoster(std::chrono::milliseconds timeout) : curl_(nullptr), timeout_(timeout) {
  ensure_curl_initialized();
  curl_ = curl_easy_init();
}

HttpPoster::~HttpPoster() {
  if (curl_ != nullptr) curl_easy_cleanup(static_cast<CURL*>(curl_));
}

Result<net::HttpReply> HttpPoster::post(const std::string& url, const std::string& body) {
  auto* curl = static_cast<CURL*>(curl_);
  if (curl == nullptr) return make_error("cannot POST to channel: curl_easy_init failed");
  curl_easy_reset(curl);
  net::HttpReply answer;
  char error_text[CURL_ERROR_SIZE] = {0};
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json; charset=utf-8");
  headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min<long long>(timeout_.count(), 5000)));
  curl_easy_setopt(curl, CURLOPT_USERAGENT, "inferscope-relay/0.1");
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_text);
  const CURLcode code = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  answer.status = static_cast<int>(status);
  curl_slist_free_all(headers);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, nullptr);
  if (code != CURLE_OK) {
    // curl's messages name host and port, never the path or query that hold the token.
    return make_error(std::string("cannot POST to channel: ") + (error_text[0] != 0 ? error_text : curl_easy_strerror(code)));
  }
  return answer;
}

}  // namespace inferscope::relay
