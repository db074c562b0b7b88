#include "relay/fired_alerts.h"

#include "relay/outbox.h"

namespace inferscope::relay {

Result<std::vector<FiredAlert>> read_alerts_fired_between(const std::string& database_path,
                                                          std::chrono::system_clock::time_point from,
                                                          std::chrono::system_clock::time_point to) {
  using std::chrono::duration_cast;
  using std::chrono::milliseconds;
  auto box = Outbox::open_read_only(database_path, std::chrono::seconds(2));
  if (!box) return box.error();
  return (*box)->fired_between(duration_cast<milliseconds>(from.time_since_epoch()).count(),
                               duration_cast<milliseconds>(to.time_since_epoch()).count());
}

}  // namespace inferscope::relay
