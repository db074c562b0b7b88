// File: blocking_http.cpp
#include "stack/blocking_http.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>

namespace inferscope::stack {
namespace {

constexpr std::size_t kMaxBody = 64u << 20;

std::size_t append_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  const std::size_t n = size * count;
  if (body->size() + n > kMaxBody) return 0;  // curl reports CURLE_WRITE_ERROR
  body->append(data, n);
  return n;
}

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

}  // namespace

Result<HttpReply> blocking_http_request(std::string_view method, const std::string& url, std::string_view body,
                                        std::string_view content_type, std::chrono::milliseconds timeout) {
  init_curl_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  const std::string what = "cannot " + std::string(method) + " " + url + ": ";
  if (!curl) return make_error(what + "curl_easy_init failed");
  HttpReply reply;
  const std::string method_text(method);
  const std::string header = "Content-Type: " + std::string(content_type);
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, &curl_slist_free_all);
  if (!content_type.empty()) headers.reset(curl_slist_append(nullptr, header.c_str()));
  curl_easy_setopt(curl.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_CUSTOMREQUEST, method_text.c_str());
  curl_easy_setopt(curl.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(curl.get(), CURLOPT_WRITEFUNCTION, &append_body);
  curl_easy_setopt(curl.get(), CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl.get(), CURLOPT_PROXY, "");  // loopback calls never go through a proxy
  if (method != "GET" && method != "HEAD") {
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl.get(), CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  if (headers) curl_easy_setopt(curl.get(), CURLOPT_HTTPHEADER, headers.get());
  const CURLcode rc = curl_easy_perform(curl.get());
  if (rc != CURLE_OK) return make_error(what + curl_easy_strerror(rc));
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &reply.status);
  return reply;
}

}  // namespace inferscope::stack
