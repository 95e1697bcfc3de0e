#include "collector/config.h"

#include <algorithm>
#include <span>
#include <stdexcept>

#include "collector/embedded_suites.h"
#include "core/contract/vocabulary.h"
#include "core/io/json_fields.h"
#include "core/io/json_io.h"

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

using core::JsonFields;

void CheckAllowed(const JsonFields& f, const char* key, const std::vector<std::string>& values,
                  std::span<const char* const> allowed) {
  for (const auto& v : values) {
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return v == a; })) {
      f.Fail(key, "'" + v + "' is not one of: " + core::JoinNames(allowed));
    }
  }
}

void ParseSelection(const JsonFields& f, SuiteConfig& s) {
  if (const json* models = f.Find("models"); models && models->is_string()) {
    if (*models != "all") f.Fail("models", "must be \"all\" or a list of model ids");
  } else {
    s.models = f.GetOr<std::vector<std::string>>("models", {});
  }
  s.exclude = f.GetOr<std::vector<std::string>>("exclude", {});
  s.modes = f.GetOr("modes", s.modes);
  s.backends = f.GetOr("backends", s.backends);
  s.precisions = f.GetOr("precisions", s.precisions);
  CheckAllowed(f, "modes", s.modes, core::kModes);
  CheckAllowed(f, "backends", s.backends, core::kBackends);
  CheckAllowed(f, "precisions", s.precisions, core::kPrecisions);
  if (s.modes.empty()) f.Fail("modes", "must not be empty");
  if (s.precisions.empty()) f.Fail("precisions", "must not be empty");
  if (s.backends.empty()) f.Fail("backends", "must not be empty");
}

// The "probe" object: only the fields it gives replace the probe's defaults.
ProbeOptions ParseProbe(const JsonFields& f) {
  ProbeOptions o;
  const auto p = f.OptObject("probe");
  if (!p) return o;
  for (const auto& [key, value] : p->raw().items()) {
    static const std::vector<std::string> kFields = {"matmul_n", "warmup", "repeats", "triad_elements", "kernels"};
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) p->Fail(key, "unknown field");
  }
  o.matmul_n = p->GetOr("matmul_n", o.matmul_n);
  o.warmup = p->GetOr("warmup", o.warmup);
  o.repeats = p->GetOr("repeats", o.repeats);
  o.triad_elements = p->GetOr("triad_elements", o.triad_elements);
  o.kernels = p->GetOr("kernels", o.kernels);
  if (o.matmul_n < 0) p->Fail("matmul_n", "must be >= 0 (0: the probe's default)");
  if (o.triad_elements < 0) p->Fail("triad_elements", "must be >= 0 (0: 4x the last-level cache)");
  if (o.warmup < 0) p->Fail("warmup", "must be >= 0");
  if (o.repeats < 1) p->Fail("repeats", "must be >= 1");
  return o;
}

// A mode named in a per-model or per-backend table must be one.
void CheckMode(const JsonFields& f, const std::string& field, const std::string& mode) {
  if (!core::IsName<core::Mode>(mode)) {
    f.Fail(field, "mode '" + mode + "' is not one of: " + core::JoinNames(core::kModes));
  }
}

// backend_models and backend_processes: each names only the suite's own
// backends.
void ParseBackendLimits(const JsonFields& f, SuiteConfig& s) {
  std::string backends;
  for (const auto& b : s.backends) backends += (backends.empty() ? "" : ", ") + b;
  auto check_backend = [&](const std::string& field, const std::string& backend) {
    if (std::find(s.backends.begin(), s.backends.end(), backend) == s.backends.end()) {
      f.Fail(field + "." + backend, "is not one of the suite's backends (" + backends + ")");
    }
  };
  s.backend_models = f.GetOr("backend_models", s.backend_models);
  for (const auto& [backend, modes] : s.backend_models) {
    check_backend("backend_models", backend);
    for (const auto& [mode, ids] : modes) CheckMode(f, "backend_models." + backend, mode);
  }
  s.backend_processes = f.GetOr("backend_processes", s.backend_processes);
  for (const auto& [backend, n] : s.backend_processes) {
    check_backend("backend_processes", backend);
    if (n < 1) f.Fail("backend_processes." + backend, "must be >= 1");
  }
}

void ParseBatchSizeOverrides(const JsonFields& f, SuiteConfig& s) {
  s.batch_size_overrides = f.GetOr("batch_size_overrides", s.batch_size_overrides);
  for (const auto& [model, modes] : s.batch_size_overrides) {
    for (const auto& [mode, size] : modes) {
      CheckMode(f, "batch_size_overrides." + model, mode);
      if (size < 1) f.Fail("batch_size_overrides." + model + "." + mode, "must be >= 1");
    }
  }
}

SuiteConfig ReadSuite(const JsonFields& f) {
  static const std::vector<std::string> kKnown = {
      "name",         "description",    "batch_sizes",       "models",
      "exclude",      "modes",          "backends",          "precisions",
      "warmup",       "repeat",         "processes",         "profile_iterations",
      "timeout_s",    "seed",           "pairing",           "batch_size_overrides",
      "probe",        "backend_models", "backend_processes", "prompt_tokens",
      "decode_steps", "generations",    "measure",           "cpu_isa"};
  for (const auto& [key, value] : f.raw().items()) {
    if (std::find(kKnown.begin(), kKnown.end(), key) == kKnown.end()) f.Fail(key, "unknown field");
  }
  SuiteConfig s;
  s.name = f.GetOr<std::string>("name", "custom");
  s.description = f.GetOr<std::string>("description", "");
  s.batch_sizes = f.GetOr("batch_sizes", s.batch_sizes);
  if (s.batch_sizes != "default" && s.batch_sizes != "smoke") f.Fail("batch_sizes", "must be 'default' or 'smoke'");
  ParseSelection(f, s);
  // The settings sit at the suite's top level; smoke follows batch_sizes.
  s.settings = core::RunSettingsFromJson(f);
  s.settings.smoke = s.batch_sizes == "smoke";
  s.probe = ParseProbe(f);
  ParseBackendLimits(f, s);
  ParseBatchSizeOverrides(f, s);
  return s;
}

}  // namespace

SuiteConfig ParseSuite(const json& j, const std::string& source) {
  if (!j.is_object()) throw std::invalid_argument(source + ": a suite must be a JSON object");
  // The reader's FileError becomes the invalid_argument the CLI reports as a
  // usage error; the message ("x.json: field 'repeat': must be >= 1") is kept.
  try {
    return ReadSuite(JsonFields(j, source));
  } catch (const core::FileError& e) {
    throw std::invalid_argument(e.what());
  }
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
  if (o.prompt_tokens) s.prompt_tokens = *o.prompt_tokens;
  if (o.decode_steps) s.decode_steps = *o.decode_steps;
  if (o.generations) s.generations = *o.generations;
  if (o.measure) s.measure = *o.measure;
  if (o.cpu_isa) s.cpu_isa = *o.cpu_isa;
  if (s.measure == "counted") {
    // The effective settings of a counted run: Valgrind runs one thread at a
    // time and emulates no AVX-512; the profiling and paired passes would
    // only be slow there (collector/counted.h).
    if (s.threads > 1) throw std::invalid_argument("--threads: a counted run (--measure counted) runs one thread");
    if (!s.cpu_isa.empty() && s.cpu_isa != "avx2") {
      throw std::invalid_argument("--cpu-isa: a counted run executes AVX2 kernels (Valgrind has no AVX-512)");
    }
    s.threads = 1;
    s.cpu_isa = "avx2";
    s.profile_iterations = 0;
    s.pairing = "off";
  }
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
  j["prompt_tokens"] = s.settings.prompt_tokens;
  j["decode_steps"] = s.settings.decode_steps;
  j["generations"] = s.settings.generations;
  if (s.settings.measure != "time") j["measure"] = s.settings.measure;
  if (!s.settings.cpu_isa.empty()) j["cpu_isa"] = s.settings.cpu_isa;
  j["batch_size_overrides"] = s.batch_size_overrides;
  j["probe"] = {{"matmul_n", s.probe.matmul_n},
                {"warmup", s.probe.warmup},
                {"repeats", s.probe.repeats},
                {"triad_elements", s.probe.triad_elements},
                {"kernels", s.probe.kernels}};
  return j;
}

}  // namespace torchgauge::collector
