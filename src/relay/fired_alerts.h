// File: fired_alerts.h
// Reading the relay's fired-alert history from its database file, from any process (the report
// subcommand), while `inferscope up` runs or after. Example:
//   auto alerts = read_alerts_fired_between(state_dir + "/relay.db", now - 24h, now);
// Thread-safe (each call opens its own read-only connection). Never writes or creates the file.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include <inferscope/common/result.h>

#include "relay/notification.h"

namespace inferscope::relay {

// read_alerts_fired_between returns the alerts whose firing interval [startsAt, endsAt) overlaps
// [from, to), oldest first; an alert still firing has no ends_at. Errors name the file
// ("cannot open relay database PATH for reading: unable to open database file" when up never ran
// with that state directory).
Result<std::vector<FiredAlert>> read_alerts_fired_between(const std::string& database_path,
                                                          std::chrono::system_clock::time_point from,
                                                          std::chrono::system_clock::time_point to);

}  // namespace inferscope::relay
