// File: connection.h
// serve's names for the shared HTTP connection of src/net (one coroutine per connection, deadlines,
// limits, SSE writes, peer watch). Example: co_return co_await connection.send(response);
// Not thread-safe: a Connection lives on its io thread. Internal header (Beast).
#pragma once

#include "net/connection.h"

namespace inferscope::serve {
using net::Connection;
using net::HttpRequest;
using net::HttpResponse;
using net::to_std;
}  // namespace inferscope::serve
