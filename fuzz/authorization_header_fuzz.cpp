// Fuzzes the Authorization header parser (parse_authorization: what up's public server reads
// from every request before a route runs). Invariants: never crashes or throws; errors are one
// line "cannot parse Authorization header: <reason>" with one of the parser's fixed reasons, so no
// byte of the input (the secret) shows; a parsed Basic header rebuilt with basic_authorization parses to the same
// user and password; a parsed Bearer token is the input's credentials unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "net/authorization.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace inferscope::net;
  const std::string_view value(reinterpret_cast<const char*>(data), size);
  const auto parsed = parse_authorization(value);
  if (!parsed) {
    const std::string& message = parsed.error().message;
    constexpr std::string_view kPrefix = "cannot parse Authorization header: ";
    if (message.rfind(kPrefix, 0) != 0 || message.find('\n') != std::string::npos) std::abort();
    // Nothing of the input may show: every message is one of the parser's fixed reasons.
    static const std::set<std::string, std::less<>> kReasons = {
        "it is empty",
        "it is over " + std::to_string(kMaxAuthorizationBytes) + " bytes",
        "it has a scheme but no credentials",
        "its Basic credentials are not valid base64",
        "its Basic credentials have no ':' between user and password",
        "its Basic credentials have an empty user",
        "its Basic credentials hold a control character",
        "its Bearer token holds characters a token cannot have",
        "its scheme is not Basic or Bearer",
    };
    if (!kReasons.contains(std::string_view(message).substr(kPrefix.size()))) std::abort();
    return 0;
  }
  if (parsed->scheme == AuthScheme::basic) {
    if (parsed->user.empty() || !parsed->token.empty()) std::abort();
    const auto again = parse_authorization(basic_authorization(parsed->user, parsed->password));
    if (!again || again->user != parsed->user || again->password != parsed->password) std::abort();
  } else {
    if (parsed->token.empty() || !parsed->user.empty() || value.find(parsed->token) == std::string_view::npos) std::abort();
  }
  return 0;
}
