// File: notification_links.h
// fix_local_links repairs the links of an Alertmanager v4 webhook body before the relay stores it:
// a Prometheus or Alertmanager that `up` started on port 0 gets no --web.external-url (its port is
// known only once it runs), so it links to "http://<hostname>:0/...". Each such link (the body's
// externalURL, each alert's generatorURL) is pointed at the real bound address. Example:
//   fix_local_links(body, "http://127.0.0.1:41234", "http://127.0.0.1:41235")
//   turns "generatorURL":"http://box:0/graph?g0.expr=up" into "http://127.0.0.1:41234/graph?g0.expr=up".
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace inferscope::up {

// replace_port_zero_origin returns `url` with its scheme://host:0 replaced by `base` (no trailing
// slash) when its port is 0 and `base` is not empty; otherwise `url` unchanged.
std::string replace_port_zero_origin(std::string_view url, std::string_view base);

// fix_local_links returns `webhook_body` with externalURL re-based on `alertmanager_url` and every
// alerts[].generatorURL on `prometheus_url`, where their port is 0. A body that is not a JSON
// object, or has no such link, is returned byte for byte (the relay judges it).
std::string fix_local_links(std::string_view webhook_body, std::string_view prometheus_url,
                            std::string_view alertmanager_url);

}  // namespace inferscope::up
