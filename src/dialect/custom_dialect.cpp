// A custom target's table: which kind and unit each mappable role has, the units a mapping may
// convert from, and the validation of a mapping.
#include "dialect/custom_dialect.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace inferscope::dialect {
namespace {

using R = Role;
using K = MetricKind;
using U = Unit;

// RoleShape is how a mapped role is read: the kind its metric must be, the role's unit and how
// its series combine.
struct RoleShape {
  Role role;
  MetricKind kind;
  Unit unit;
  Aggregation aggregation = Aggregation::kSum;
  bool per_batch = false;
};

constexpr RoleShape kShapes[] = {
    {R::kE2e, K::kHistogram, U::kSeconds},           {R::kTtft, K::kHistogram, U::kSeconds},
    {R::kQueue, K::kHistogram, U::kSeconds},         {R::kPrefill, K::kHistogram, U::kSeconds},
    {R::kDecode, K::kHistogram, U::kSeconds},        {R::kInference, K::kHistogram, U::kSeconds},
    {R::kItl, K::kHistogram, U::kSeconds},           {R::kTpot, K::kHistogram, U::kSeconds},
    {R::kPreprocess, K::kHistogram, U::kSeconds},    {R::kPostprocess, K::kHistogram, U::kSeconds},
    {R::kDependency, K::kHistogram, U::kSeconds},    {R::kSend, K::kHistogram, U::kSeconds},
    {R::kGatewayQueue, K::kHistogram, U::kSeconds},  {R::kUpstreamConnect, K::kHistogram, U::kSeconds},
    {R::kUpstreamTtft, K::kHistogram, U::kSeconds},  {R::kStream, K::kHistogram, U::kSeconds},
    {R::kRoute, K::kHistogram, U::kSeconds},         {R::kKvTransfer, K::kHistogram, U::kSeconds},
    {R::kEngineStep, K::kHistogram, U::kSeconds, Aggregation::kSum, true},
    {R::kPromptLength, K::kHistogram, U::kTokens},   {R::kGenerationLength, K::kHistogram, U::kTokens},
    {R::kRequests, K::kCounter, U::kRequests},       {R::kErrors, K::kCounter, U::kRequests},
    {R::kClientErrors, K::kCounter, U::kRequests},   {R::kPreemptions, K::kCounter, U::kEvents},
    {R::kPromptTokens, K::kCounter, U::kTokens},     {R::kGenerationTokens, K::kCounter, U::kTokens},
    {R::kPrefixCacheQueries, K::kCounter, U::kTokens}, {R::kPrefixCacheHits, K::kCounter, U::kTokens},
    {R::kWaiting, K::kGauge, U::kRequests},          {R::kRunning, K::kGauge, U::kRequests},
    {R::kInFlight, K::kGauge, U::kRequests},
    {R::kKvUsage, K::kGauge, U::kRatio, Aggregation::kMax},
    {R::kGpuUtilization, K::kGauge, U::kRatio, Aggregation::kAvg},
    {R::kEngineBusy, K::kGauge, U::kRatio, Aggregation::kAvg},
    {R::kGpuMemoryUsed, K::kGauge, U::kBytes},       {R::kGpuMemoryTotal, K::kGauge, U::kBytes},
    {R::kGpuTemperature, K::kGauge, U::kCelsius, Aggregation::kMax},
    {R::kGpuPower, K::kGauge, U::kWatts},
    {R::kHostMemoryUsed, K::kGauge, U::kBytes},      {R::kHostMemoryTotal, K::kGauge, U::kBytes},
};

// UnitSpelling is a unit a mapping may name for roles of unit `to`: raw * scale = value in `to`.
struct UnitSpelling {
  std::string_view name;
  Unit to;
  double scale;
};

constexpr UnitSpelling kUnits[] = {
    {"seconds", U::kSeconds, 1},      {"milliseconds", U::kSeconds, 1e-3}, {"microseconds", U::kSeconds, 1e-6},
    {"ratio", U::kRatio, 1},          {"percent", U::kRatio, 0.01},
    {"bytes", U::kBytes, 1},          {"KB", U::kBytes, 1e3},              {"MB", U::kBytes, 1e6},
    {"GB", U::kBytes, 1e9},           {"KiB", U::kBytes, 1024.0},          {"MiB", U::kBytes, 1048576.0},
    {"GiB", U::kBytes, 1073741824.0}, {"requests", U::kRequests, 1},       {"tokens", U::kTokens, 1},
    {"events", U::kEvents, 1},        {"celsius", U::kCelsius, 1},         {"watts", U::kWatts, 1},
};

// Roles a serving target usually has; the ones a mapping leaves out are listed as unmapped.
constexpr Role kUsualRoles[] = {R::kE2e,          R::kTtft,         R::kQueue,   R::kPrefill,
                                R::kDecode,       R::kRequests,     R::kErrors,  R::kPromptTokens,
                                R::kGenerationTokens, R::kWaiting,  R::kRunning, R::kKvUsage,
                                R::kGpuUtilization};

const RoleShape* shape_of(Role role) {
  for (const RoleShape& s : kShapes) {
    if (s.role == role) return &s;
  }
  return nullptr;
}

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  auto head = [](char ch) { return std::isalpha(static_cast<unsigned char>(ch)) != 0 || ch == '_' || ch == ':'; };
  if (!head(name.front())) return false;
  return std::all_of(name.begin() + 1, name.end(),
                     [&](char ch) { return head(ch) || std::isdigit(static_cast<unsigned char>(ch)) != 0; });
}

std::string_view histogram_suffix(std::string_view name) {
  for (std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.ends_with(suffix)) return suffix;
  }
  return {};
}

}  // namespace

std::string mappable_role_list() {
  std::string out;
  for (const RoleShape& s : kShapes) out += (out.empty() ? "" : ", ") + std::string(to_string(s.role));
  return out;
}

std::string unit_choices(Role role) {
  const RoleShape* shape = shape_of(role);
  std::string out;
  for (const UnitSpelling& u : kUnits) {
    if (shape != nullptr && u.to == shape->unit) out += (out.empty() ? "" : ", ") + std::string(u.name);
  }
  return out;
}

std::vector<Role> CustomDialect::unmapped_roles() const {
  std::vector<Role> out;
  for (Role role : kUsualRoles) {
    if (find_binding(table_, role) == nullptr) out.push_back(role);
  }
  return out;
}

Result<std::shared_ptr<const CustomDialect>> make_custom_dialect(std::vector<CustomRole> roles,
                                                                 std::string model_label) {
  if (roles.empty()) return make_error("no role mapped: map at least e2e (roles: {e2e: <histogram name>})");
  if (!model_label.empty() && !valid_metric_name(model_label)) {
    return make_error("model_label \"" + model_label + "\" is not a label name");
  }
  std::shared_ptr<CustomDialect> out(new CustomDialect());
  out->roles_ = std::move(roles);
  out->model_label_ = std::move(model_label);
  out->bindings_.reserve(out->roles_.size());
  for (const CustomRole& mapped : out->roles_) {
    const std::string where = "role \"" + mapped.role + "\": ";
    const auto role = parse_role(mapped.role);
    if (!role) return make_error(where + "unknown role (mappable: " + mappable_role_list() + ")");
    const RoleShape* shape = shape_of(*role);
    if (shape == nullptr) {
      return make_error(where + "cannot be mapped to one metric name (mappable: " + mappable_role_list() + ")");
    }
    if (std::any_of(out->bindings_.begin(), out->bindings_.end(), [&](const MetricBinding& b) { return b.role == *role; })) {
      return make_error(where + "mapped twice");
    }
    if (!valid_metric_name(mapped.metric)) {
      return make_error(where + "\"" + mapped.metric + "\" is not a metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)");
    }
    if (shape->kind == MetricKind::kHistogram && !histogram_suffix(mapped.metric).empty()) {
      return make_error(where + "give the histogram's base name, without " + std::string(histogram_suffix(mapped.metric)));
    }
    double scale = 1;
    if (!mapped.unit.empty()) {
      const auto* unit = std::find_if(std::begin(kUnits), std::end(kUnits),
                                      [&](const UnitSpelling& u) { return u.name == mapped.unit && u.to == shape->unit; });
      if (unit == std::end(kUnits)) {
        return make_error(where + "unit \"" + mapped.unit + "\" does not fit a " + std::string(to_string(shape->unit)) +
                          " role (use " + unit_choices(*role) + ")");
      }
      scale = unit->scale;
    }
    // Histograms and counters of prometheus_client with labels appear with the first request.
    const Presence presence = shape->kind == MetricKind::kGauge ? Presence::kAlways : Presence::kLazy;
    out->bindings_.push_back(MetricBinding{.role = *role, .kind = shape->kind, .metric = mapped.metric,
                                           .unit = shape->unit, .scale = scale, .presence = presence,
                                           .aggregation = shape->aggregation, .per_batch = shape->per_batch});
  }
  out->table_ = Dialect{.id = DialectId::kCustom, .title = "custom target", .model_label = out->model_label_,
                        .bindings = out->bindings_, .note = "roles mapped to its own names in up's config"};
  return std::shared_ptr<const CustomDialect>(std::move(out));
}

}  // namespace inferscope::dialect
