// File: fake_servers.h
// Loopback fakes for the relay tests: FakeHttpServer (HTTP/1.1 with keep-alive, one thread per
// connection, a handler deciding each answer) and FakeSmtpServer (enough SMTP for libcurl:
// EHLO, MAIL, RCPT, DATA, QUIT). Both bind 127.0.0.1 port 0 and stop in their destructors.
// Thread-safe: recorded requests are read under the fake's mutex.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace inferscope::relay::testing {

struct FakeRequest {
  std::string method, target, body;
};

struct FakeResponse {
  int status = 200;
  std::string body = "{\"errcode\":0,\"errmsg\":\"ok\"}";
};

// Listener owns a loopback listening socket and the connection threads.
class Listener {
 public:
  Listener() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 64);
    socklen_t len = sizeof addr;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
  }
  virtual ~Listener() = default;
  int port() const { return port_; }

 protected:
  void run(std::function<void(int)> serve) {
    acceptor_ = std::thread([this, serve] {
      for (;;) {
        const int client = ::accept(fd_, nullptr, nullptr);
        if (client < 0) return;
        std::lock_guard lock(threads_mutex_);
        if (stopped_) {
          ::close(client);
          return;
        }
        clients_.push_back(client);
        threads_.emplace_back([serve, client] { serve(client); });
      }
    });
  }
  void shutdown_all() {
    {
      std::lock_guard lock(threads_mutex_);
      stopped_ = true;
      for (int c : clients_) ::shutdown(c, SHUT_RDWR);
    }
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    if (acceptor_.joinable()) acceptor_.join();
    for (std::thread& t : threads_) t.join();
    for (int c : clients_) ::close(c);
  }
  static bool read_more(int fd, std::string& buffer) {
    char chunk[8192];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  static void write_all(int fd, const std::string& data) {
    std::size_t off = 0;
    while (off < data.size()) {
      const ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_ = -1;
  int port_ = 0;
  std::thread acceptor_;
  std::mutex threads_mutex_;
  bool stopped_ = false;
  std::vector<int> clients_;
  std::vector<std::thread> threads_;
};

class FakeHttpServer : public Listener {
 public:
  using Handler = std::function<FakeResponse(const FakeRequest&)>;
  explicit FakeHttpServer(Handler handler = {}) : handler_(std::move(handler)) {
    run([this](int fd) { serve(fd); });
  }
  ~FakeHttpServer() override { shutdown_all(); }

  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port()) + path; }
  std::vector<FakeRequest> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // wait_for_requests blocks until at least n requests arrived or the deadline passed.
  bool wait_for_requests(std::size_t n, std::chrono::milliseconds deadline = std::chrono::seconds(20)) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, deadline, [&] { return requests_.size() >= n; });
  }

 private:
  void serve(int fd) {
    std::string buffer;
    for (;;) {
      std::size_t header_end;
      while ((header_end = buffer.find("\r\n\r\n")) == std::string::npos) {
        if (!read_more(fd, buffer)) return;
      }
      FakeRequest request;
      const std::string head = buffer.substr(0, header_end);
      const auto sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
      request.method = head.substr(0, sp1);
      request.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
      std::size_t length = 0;
      std::string lower = head;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (auto at = lower.find("content-length:"); at != std::string::npos) length = std::stoul(head.substr(at + 15));
      while (buffer.size() < header_end + 4 + length) {
        if (!read_more(fd, buffer)) return;
      }
      request.body = buffer.substr(header_end + 4, length);
      buffer.erase(0, header_end + 4 + length);
      const FakeResponse response = handler_ ? handler_(request) : FakeResponse{};
      {
        std::lock_guard lock(mutex_);
        requests_.push_back(request);
      }
      cv_.notify_all();
      write_all(fd, "HTTP/1.1 " + std::to_string(response.status) + " X\r\nContent-Type: application/json\r\nContent-Length: " +
                        std::to_string(response.body.size()) + "\r\n\r\n" + response.body);
    }
  }

  Handler handler_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<FakeRequest> requests_;
};

struct FakeEmail {
  std::string mail_from;
  std::vector<std::string> rcpt_to;
  std::string data;  // the message as sent, up to the terminating "."
};

class FakeSmtpServer : public Listener {
 public:
  FakeSmtpServer() {
    run([this](int fd) { serve(fd); });
  }
  ~FakeSmtpServer() override { shutdown_all(); }
  std::string url() const { return "smtp://127.0.0.1:" + std::to_string(port()); }
  std::vector<FakeEmail> emails() {
    std::lock_guard lock(mutex_);
    return emails_;
  }

 private:
  void serve(int fd) {
    write_all(fd, "220 fake ESMTP\r\n");
    std::string buffer;
    FakeEmail email;
    bool in_data = false;
    for (;;) {
      if (in_data) {
        std::size_t end;
        while ((end = buffer.find("\r\n.\r\n")) == std::string::npos) {
          if (!read_more(fd, buffer)) return;
        }
        email.data = buffer.substr(0, end + 2);
        buffer.erase(0, end + 5);
        in_data = false;
        {
          std::lock_guard lock(mutex_);
          emails_.push_back(email);
        }
        email = {};
        write_all(fd, "250 queued\r\n");
        continue;
      }
      std::size_t eol;
      while ((eol = buffer.find("\r\n")) == std::string::npos) {
        if (!read_more(fd, buffer)) return;
      }
      const std::string line = buffer.substr(0, eol);
      buffer.erase(0, eol + 2);
      std::string verb = line.substr(0, 4);
      for (char& c : verb) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (verb == "EHLO" || verb == "HELO") {
        write_all(fd, "250 fake\r\n");
      } else if (verb == "MAIL") {
        email.mail_from = line.substr(10);
        write_all(fd, "250 ok\r\n");
      } else if (verb == "RCPT") {
        email.rcpt_to.push_back(line.substr(8));
        write_all(fd, "250 ok\r\n");
      } else if (verb == "DATA") {
        in_data = true;
        write_all(fd, "354 go ahead\r\n");
      } else if (verb == "QUIT") {
        write_all(fd, "221 bye\r\n");
        return;
      } else {
        write_all(fd, "250 ok\r\n");
      }
    }
  }
  std::mutex mutex_;
  std::vector<FakeEmail> emails_;
};

}  // namespace inferscope::relay::testing
