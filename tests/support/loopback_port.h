// File: support/loopback_port.h
// free_loopback_port asks the kernel for a 127.0.0.1 TCP port that is free now, for a peer that
// must be told its port before it starts (or that another process must know first). The port can
// be taken by someone else before it is used: callers that can retry do.
// Example: const int port = testing::free_loopback_port();  // 0 when none could be had
// Thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace inferscope::testing {

inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof address;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);
  return port;
}

}  // namespace inferscope::testing
