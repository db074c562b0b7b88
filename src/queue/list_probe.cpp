// Plain list probe (shared/reference/queues.md §4): LLEN only. Configured names are read
// directly; glob patterns are resolved by the collector's discovery passes (SCAN … TYPE list).
#include <map>
#include <set>

#include "queue/queue_payload.h"
#include "queue/queue_probe.h"

namespace inferscope::queue::detail {
namespace {

bool is_glob(std::string_view pattern) { return pattern.find_first_of("*?[") != std::string_view::npos; }

class ListProbe final : public QueueProbe {
 public:
  QueueSystem system() const noexcept override { return QueueSystem::kList; }

  void plan(int round, Pipeline& pipeline, CollectContext& ctx) override {
    if (!configured_) configure(ctx);
    if (round == 1) plan_lengths(pipeline, ctx);
  }

  std::vector<ScanPattern> scan_patterns(CollectContext& ctx) override {
    if (!configured_) configure(ctx);
    return globs_;
  }

  void on_scanned(const ScanPattern&, const std::string& key, CollectContext& ctx) override { add_key(key, ctx); }

  void publish(CollectContext& ctx, CollectorStatus& status) override {
    for (const auto& [key, depth] : depths_) {
      QueueStatus entry{.system = QueueSystem::kList, .queue = key, .depth = depth};
      if (!depth) entry.absent.emplace_back(Quantity::kDepth, "the key is not a list (see collect errors)");
      ctx.metrics.set(QueueSystem::kList, key, Quantity::kDepth, depth);
      status.queues.push_back(std::move(entry));
    }
    status.systems.push_back(SystemStatus{
        .system = QueueSystem::kList,
        .workers_absent = std::string(*absent_reason(QueueSystem::kList, Quantity::kWorkers))});
  }

 private:
  void configure(CollectContext& ctx) {
    configured_ = true;
    for (const std::string& pattern : ctx.options.lists) {
      if (is_glob(pattern)) globs_.push_back({.pattern = pattern, .type = "list"});
      else add_key(pattern, ctx);
    }
  }

  void add_key(const std::string& key, CollectContext& ctx) {
    if (keys_.count(key) != 0) return;
    if (!is_label_safe(key)) {
      ctx.count(CollectErrorKind::kBinaryKey);
      return;
    }
    if (keys_.size() >= ctx.options.max_queues) {
      ctx.count(CollectErrorKind::kTooManyQueues);
      return;
    }
    keys_.insert(key);
  }

  void plan_lengths(Pipeline& pipeline, CollectContext& ctx) {
    depths_.clear();
    for (const std::string& key : keys_) {
      pipeline.add({"LLEN", key}, [this, key, &ctx](const RedisReply& r) {
        if (r.type == RedisReply::Type::kInteger) {
          depths_[key] = static_cast<double>(r.integer);  // a list Redis deleted when empty reads 0
        } else {
          ctx.count(CollectErrorKind::kRedisError);
          depths_[key] = std::nullopt;
        }
      });
    }
  }

  bool configured_ = false;
  std::vector<ScanPattern> globs_;
  std::set<std::string> keys_;
  std::map<std::string, std::optional<double>> depths_;
};

}  // namespace

std::unique_ptr<QueueProbe> make_list_probe() { return std::make_unique<ListProbe>(); }

}  // namespace inferscope::queue::detail
