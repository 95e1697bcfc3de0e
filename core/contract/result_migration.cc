#include "core/contract/result_migration.h"

#include <cstdint>

#include "core/contract/result.h"

namespace torchgauge::core {

using nlohmann::json;

namespace {

// One change of the format: files of schema_version up to `up_to_version`
// may need it; `needed` tells whether this one does.
struct Step {
  int up_to_version;
  bool (*needed)(const json& j);
  void (*apply)(json& j);
};

// Version 1: "aotinductor" was the inductor backend's name before it ran
// (the collector recorded it only as unsupported); such results are the
// inductor backend's.
bool NamesAotinductor(const json& j) {
  const auto it = j.find("backend");
  return it != j.end() && *it == "aotinductor";
}
void RenameAotinductor(json& j) { j["backend"] = "inductor"; }

constexpr Step kSteps[] = {
    {1, NamesAotinductor, RenameAotinductor},
};

}  // namespace

std::optional<json> MigrateRunResult(const json& j) {
  const auto v = j.find("schema_version");
  if (v == j.end() || !v->is_number_integer()) return std::nullopt;  // CheckSchema refuses it
  // Non-negative integers parse as unsigned; one above INT64_MAX is only "newer".
  const int64_t version = !v->is_number_unsigned() ? v->get<int64_t>()
                          : v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)
                              ? INT64_MAX
                              : static_cast<int64_t>(v->get<uint64_t>());
  std::optional<json> out;
  for (const Step& step : kSteps) {
    if (version > step.up_to_version || !step.needed(out ? *out : j)) continue;
    if (!out) out = j;
    step.apply(*out);
  }
  if (version < kRunSchemaVersion) {
    if (!out) out = j;
    (*out)["schema_version"] = kRunSchemaVersion;
  }
  return out;
}

}  // namespace torchgauge::core
