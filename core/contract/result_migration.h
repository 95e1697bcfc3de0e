// Run results written by an older collector, brought to the current shape
// before they are read (asv's update_to_N steps): RunResultFromJson reads
// only the current shape, and each change of the format that an older file
// needs adapting to is one step here, not a special case inside the reader.
// Fields added to schema version 1 (settings.processes, timing.
// process_medians_ms, ...) need no step: the reader treats them as absent.
#pragma once

#include <optional>

#include <nlohmann/json.hpp>

namespace torchgauge::core {

// The current shape of the run result `j` (its schema_version and kind
// already checked, as CheckSchema does), or nullopt when it has it already:
// the common case copies nothing. A file of an older schema_version comes
// back with the current one.
std::optional<nlohmann::json> MigrateRunResult(const nlohmann::json& j);

}  // namespace torchgauge::core
