#include "collector/config.h"

#include <algorithm>
#include <limits>
#include <span>
#include <stdexcept>
#include <type_traits>

#include "collector/embedded_suites.h"
#include "core/vocabulary.h"

namespace torchgauge::collector {

using nlohmann::json;

std::vector<std::string> EmbeddedSuiteNames() {
  std::vector<std::string> names;
  for (const auto& s : kEmbeddedSuites) names.emplace_back(s.name);
  return names;
}

json EmbeddedSuiteJson(const std::string& name) {
  for (const auto& s : kEmbeddedSuites) {
    if (name == s.name) return json::parse(s.json);
  }
  std::string known;
  for (const auto& n : EmbeddedSuiteNames()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown suite '" + name + "' (embedded suites: " + known + ")");
}

json MergeConfig(const json& base, const json& overrides) {
  if (!base.is_object() || !overrides.is_object()) return overrides;
  json out = base;
  for (auto it = overrides.begin(); it != overrides.end(); ++it) {
    if (out.contains(it.key()) && out[it.key()].is_object() && it.value().is_object()) {
      out[it.key()] = MergeConfig(out[it.key()], it.value());
    } else {
      out[it.key()] = it.value();
    }
  }
  return out;
}

namespace {

[[noreturn]] void Bad(const std::string& source, const std::string& field, const std::string& msg) {
  throw std::invalid_argument(source + ": field '" + field + "': " + msg);
}

// An integer field must hold an integer that fits: nlohmann converts a float
// (2330e8) to int with a plain cast, undefined behaviour when out of range
// (found by the suite_config fuzzer), and wraps -1 into a uint64_t.
template <typename T>
void CheckInteger(const json& v, const std::string& source, const std::string& field) {
  if (!v.is_number_integer()) Bad(source, field, std::string("must be an integer (is ") + v.type_name() + ")");
  const bool fits =
      v.is_number_unsigned()
          ? v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
          : v.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                (std::is_unsigned_v<T> || v.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()));
  if (!fits) Bad(source, field, "is out of range");
}

template <typename T>
T Field(const json& j, const char* key, const std::string& source, T fallback) {
  if (!j.contains(key)) return fallback;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) CheckInteger<T>(j.at(key), source, key);
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    Bad(source, key, std::string("has the wrong type (") + j.at(key).type_name() + ")");
  }
}

void CheckAllowed(const std::vector<std::string>& values, std::span<const char* const> allowed,
                  const std::string& source, const char* field) {
  for (const auto& v : values) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; })) {
      Bad(source, field, "'" + v + "' is not one of: " + core::JoinNames(allowed));
    }
  }
}

// The settings part of a suite: the fields the file gives replace the
// defaults of core::RunSettings.
core::RunSettings ParseSettings(const json& j, const std::string& source, bool smoke) {
  core::RunSettings r;
  r.warmup = Field<int>(j, "warmup", source, r.warmup);
  r.repeat = Field<int>(j, "repeat", source, r.repeat);
  r.processes = Field<int>(j, "processes", source, r.processes);
  r.profile_iterations = Field<int>(j, "profile_iterations", source, r.profile_iterations);
  r.timeout_s = Field<double>(j, "timeout_s", source, r.timeout_s);
  r.seed = Field<uint64_t>(j, "seed", source, r.seed);
  r.pairing = Field<std::string>(j, "pairing", source, r.pairing);
  r.smoke = smoke;
  if (auto problem = core::CheckRunSettings(r)) Bad(source, problem->field, problem->message);
  return r;
}

void ParseSelection(const json& j, const std::string& source, SuiteConfig& s) {
  if (j.contains("models")) {
    if (j.at("models").is_string()) {
      if (j.at("models") != "all") Bad(source, "models", "must be \"all\" or a list of model ids");
    } else {
      s.models = Field<std::vector<std::string>>(j, "models", source, {});
    }
  }
  s.exclude = Field<std::vector<std::string>>(j, "exclude", source, {});
  s.modes = Field<std::vector<std::string>>(j, "modes", source, s.modes);
  s.backends = Field<std::vector<std::string>>(j, "backends", source, s.backends);
  s.precisions = Field<std::vector<std::string>>(j, "precisions", source, s.precisions);
  CheckAllowed(s.modes, core::kModes, source, "modes");
  CheckAllowed(s.backends, core::kBackends, source, "backends");
  CheckAllowed(s.precisions, core::kPrecisions, source, "precisions");
  if (s.modes.empty()) Bad(source, "modes", "must not be empty");
  if (s.precisions.empty()) Bad(source, "precisions", "must not be empty");
  if (s.backends.empty()) Bad(source, "backends", "must not be empty");
}

// The "probe" object: only the fields it gives replace the probe's defaults.
ProbeOptions ParseProbe(const json& j, const std::string& source) {
  ProbeOptions o;
  if (!j.contains("probe")) return o;
  const json& p = j.at("probe");
  const std::string where = source + " (probe)";
  if (!p.is_object()) Bad(source, "probe", "must be an object");
  for (auto it = p.begin(); it != p.end(); ++it) {
    static const std::vector<std::string> kFields = {"matmul_n", "warmup", "repeats", "triad_elements", "kernels"};
    if (std::find(kFields.begin(), kFields.end(), it.key()) == kFields.end())
      Bad(source, "probe." + it.key(), "unknown field");
  }
  o.matmul_n = Field<int64_t>(p, "matmul_n", where, o.matmul_n);
  o.warmup = Field<int>(p, "warmup", where, o.warmup);
  o.repeats = Field<int>(p, "repeats", where, o.repeats);
  o.triad_elements = Field<int64_t>(p, "triad_elements", where, o.triad_elements);
  o.kernels = Field<bool>(p, "kernels", where, o.kernels);
  if (o.matmul_n < 0) Bad(source, "probe.matmul_n", "must be >= 0 (0: the probe's default)");
  if (o.triad_elements < 0) Bad(source, "probe.triad_elements", "must be >= 0 (0: 4x the last-level cache)");
  if (o.warmup < 0) Bad(source, "probe.warmup", "must be >= 0");
  if (o.repeats < 1) Bad(source, "probe.repeats", "must be >= 1");
  return o;
}

// backend_models and backend_processes: each names only the suite's own
// backends.
void ParseBackendLimits(const json& j, const std::string& source, SuiteConfig& s) {
  std::string backends;
  for (const auto& b : s.backends) backends += (backends.empty() ? "" : ", ") + b;
  auto check_backend = [&](const std::string& field, const std::string& backend) {
    if (std::find(s.backends.begin(), s.backends.end(), backend) == s.backends.end()) {
      Bad(source, field + "." + backend, "is not one of the suite's backends (" + backends + ")");
    }
  };
  s.backend_models =
      Field<std::map<std::string, std::map<std::string, std::vector<std::string>>>>(j, "backend_models", source, {});
  for (const auto& [backend, modes] : s.backend_models) {
    check_backend("backend_models", backend);
    for (const auto& [mode, ids] : modes) {
      if (!core::IsName<core::Mode>(mode)) {
        Bad(source, "backend_models." + backend, "mode '" + mode + "' is not one of: " + core::JoinNames(core::kModes));
      }
    }
  }
  if (j.contains("backend_processes") && j.at("backend_processes").is_object()) {
    for (const auto& [backend, n] : j.at("backend_processes").items()) {
      CheckInteger<int>(n, source, "backend_processes." + backend);
    }
  }
  s.backend_processes = Field<std::map<std::string, int>>(j, "backend_processes", source, {});
  for (const auto& [backend, n] : s.backend_processes) {
    check_backend("backend_processes", backend);
    if (n < 1) Bad(source, "backend_processes." + backend, "must be >= 1");
  }
}

}  // namespace

SuiteConfig ParseSuite(const json& j, const std::string& source) {
  if (!j.is_object()) throw std::invalid_argument(source + ": a suite must be a JSON object");
  static const std::vector<std::string> kKnown = {
      "name",      "description",    "batch_sizes",      "models",
      "exclude",   "modes",          "backends",         "precisions",
      "warmup",    "repeat",         "processes",        "profile_iterations",
      "timeout_s", "seed",           "pairing",          "batch_size_overrides",
      "probe",     "backend_models", "backend_processes"};
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (std::find(kKnown.begin(), kKnown.end(), it.key()) == kKnown.end()) Bad(source, it.key(), "unknown field");
  }
  SuiteConfig s;
  s.name = Field<std::string>(j, "name", source, "custom");
  s.description = Field<std::string>(j, "description", source, "");
  s.batch_sizes = Field<std::string>(j, "batch_sizes", source, s.batch_sizes);
  if (s.batch_sizes != "default" && s.batch_sizes != "smoke")
    Bad(source, "batch_sizes", "must be 'default' or 'smoke'");
  ParseSelection(j, source, s);
  s.settings = ParseSettings(j, source, s.batch_sizes == "smoke");
  s.probe = ParseProbe(j, source);
  if (j.contains("batch_size_overrides") && j.at("batch_size_overrides").is_object()) {
    for (const auto& [model, modes] : j.at("batch_size_overrides").items()) {
      if (!modes.is_object()) continue;  // the conversion below names the type error
      for (const auto& [mode, size] : modes.items()) {
        CheckInteger<int64_t>(size, source, "batch_size_overrides." + model + "." + mode);
      }
    }
  }
  s.batch_size_overrides =
      Field<std::map<std::string, std::map<std::string, int64_t>>>(j, "batch_size_overrides", source, {});
  ParseBackendLimits(j, source, s);
  for (const auto& [model, modes] : s.batch_size_overrides) {
    for (const auto& [mode, size] : modes) {
      if (!core::IsName<core::Mode>(mode)) {
        Bad(source, "batch_size_overrides." + model,
            "mode '" + mode + "' is not one of: " + core::JoinNames(core::kModes));
      }
      if (size < 1) Bad(source, "batch_size_overrides." + model + "." + mode, "must be >= 1");
    }
  }
  return s;
}

void ApplyOverrides(const SettingsOverrides& o, core::RunSettings& s) {
  if (o.warmup) s.warmup = *o.warmup;
  if (o.repeat) s.repeat = *o.repeat;
  if (o.processes) s.processes = *o.processes;
  if (o.profile_iterations) s.profile_iterations = *o.profile_iterations;
  if (o.timeout_s) s.timeout_s = *o.timeout_s;
  if (o.seed) s.seed = *o.seed;
  if (o.threads) s.threads = *o.threads;
  if (o.pairing) s.pairing = *o.pairing;
  if (auto problem = core::CheckRunSettings(s)) {
    // The option is the field's name as a flag; timeout_s is --timeout.
    std::string flag = problem->field == "timeout_s" ? "timeout" : problem->field;
    std::replace(flag.begin(), flag.end(), '_', '-');
    throw std::invalid_argument("--" + flag + ": " + problem->message);
  }
}

void ApplyOverrides(const SettingsOverrides& o, SuiteConfig& suite) {
  ApplyOverrides(o, suite.settings);
  if (o.processes) suite.backend_processes.clear();
}

json SuiteToJson(const SuiteConfig& s) {
  json j;
  j["name"] = s.name;
  j["description"] = s.description;
  j["batch_sizes"] = s.batch_sizes;
  j["models"] = s.models.empty() ? json("all") : json(s.models);
  j["exclude"] = s.exclude;
  j["modes"] = s.modes;
  j["backends"] = s.backends;
  if (!s.backend_models.empty()) j["backend_models"] = s.backend_models;
  if (!s.backend_processes.empty()) j["backend_processes"] = s.backend_processes;
  j["precisions"] = s.precisions;
  j["warmup"] = s.settings.warmup;
  j["repeat"] = s.settings.repeat;
  j["processes"] = s.settings.processes;
  j["profile_iterations"] = s.settings.profile_iterations;
  j["timeout_s"] = s.settings.timeout_s;
  j["seed"] = s.settings.seed;
  j["pairing"] = s.settings.pairing;
  j["batch_size_overrides"] = s.batch_size_overrides;
  j["probe"] = {{"matmul_n", s.probe.matmul_n},
                {"warmup", s.probe.warmup},
                {"repeats", s.probe.repeats},
                {"triad_elements", s.probe.triad_elements},
                {"kernels", s.probe.kernels}};
  return j;
}

}  // namespace torchgauge::collector
