// File: api_error.h
// serve's name for the shared OpenAI error answer (src/net/api_error.h), so serve code says ApiError.
// Example: ApiError e = ApiError::bad_request("'max_tokens' must be an integer", "max_tokens");
// Value type, thread-compatible. It never carries prompt text.
#pragma once

#include "net/api_error.h"

namespace inferscope::serve {
using net::api_error_body;
using net::ApiError;
}  // namespace inferscope::serve
