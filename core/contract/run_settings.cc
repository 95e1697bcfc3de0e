#include "core/contract/run_settings.h"

#include <algorithm>
#include <iterator>
#include <string>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"

namespace torchgauge::core {

namespace {
// "must be one of: a, b, c" when `value` is not among `allowed`.
template <size_t N>
std::optional<std::string> NotOneOf(const std::string& value, const char* const (&allowed)[N]) {
  if (std::find(std::begin(allowed), std::end(allowed), value) != std::end(allowed)) return std::nullopt;
  std::string values;
  for (const char* v : allowed) values += (values.empty() ? "" : ", ") + (*v ? std::string(v) : "\"\"");
  return "must be one of: " + values;
}
}  // namespace

std::optional<SettingsProblem> CheckRunSettings(const RunSettings& s) {
  if (s.warmup < 0) return SettingsProblem{"warmup", "must be >= 0"};
  if (s.repeat < 1) return SettingsProblem{"repeat", "must be >= 1"};
  if (s.processes < 1 || s.processes > 100) return SettingsProblem{"processes", "must be within [1, 100]"};
  if (s.profile_iterations < 0) return SettingsProblem{"profile_iterations", "must be >= 0"};
  if (!(s.timeout_s > 0)) return SettingsProblem{"timeout_s", "must be > 0"};
  if (s.threads < 0) return SettingsProblem{"threads", "must be >= 0"};
  if (s.prompt_tokens < 1) return SettingsProblem{"prompt_tokens", "must be >= 1"};
  if (s.decode_steps < 1) return SettingsProblem{"decode_steps", "must be >= 1"};
  if (s.generations < 1) return SettingsProblem{"generations", "must be >= 1"};
  if (auto bad = NotOneOf(s.pairing, kPairings)) return SettingsProblem{"pairing", *bad};
  if (auto bad = NotOneOf(s.measure, kMeasures)) return SettingsProblem{"measure", *bad};
  if (auto bad = NotOneOf(s.cpu_isa, kCpuIsas)) return SettingsProblem{"cpu_isa", *bad};
  return std::nullopt;
}

nlohmann::json ToJson(const RunSettings& s) {
  nlohmann::json j = {{"warmup", s.warmup},
                      {"repeat", s.repeat},
                      {"seed", s.seed},
                      {"timeout_s", s.timeout_s},
                      {"profile_iterations", s.profile_iterations},
                      {"smoke", s.smoke},
                      {"processes", s.processes},
                      // Not set: null, LibTorch's choice (0 is no number of threads).
                      {"threads", s.threads > 0 ? nlohmann::json(s.threads) : nlohmann::json(nullptr)},
                      {"pairing", s.pairing},
                      {"prompt_tokens", s.prompt_tokens},
                      {"decode_steps", s.decode_steps},
                      {"generations", s.generations}};
  // Written where they differ from their defaults, so that the results of
  // timed runs read as before.
  if (s.measure != "time") j["measure"] = s.measure;
  if (!s.cpu_isa.empty()) j["cpu_isa"] = s.cpu_isa;
  return j;
}

RunSettings RunSettingsFromJson(const JsonFields& f) {
  RunSettings s;
  s.warmup = f.GetOr("warmup", s.warmup);
  s.repeat = f.GetOr("repeat", s.repeat);
  s.seed = f.GetOr("seed", s.seed);
  s.timeout_s = f.GetOr("timeout_s", s.timeout_s);
  s.profile_iterations = f.GetOr("profile_iterations", s.profile_iterations);
  s.smoke = f.GetOr("smoke", s.smoke);
  s.processes = f.GetOr("processes", s.processes);
  s.threads = f.GetOr("threads", s.threads);
  s.pairing = f.GetOr("pairing", s.pairing);
  s.prompt_tokens = f.GetOr("prompt_tokens", s.prompt_tokens);
  s.decode_steps = f.GetOr("decode_steps", s.decode_steps);
  s.generations = f.GetOr("generations", s.generations);
  s.measure = f.GetOr("measure", s.measure);
  s.cpu_isa = f.GetOr("cpu_isa", s.cpu_isa);
  if (auto problem = CheckRunSettings(s)) f.Fail(problem->field, problem->message);
  return s;
}

RunSettings RunSettingsFromJson(const nlohmann::json& j) {
  return RunSettingsFromJson(JsonFields(j, "run spec", "settings"));
}

}  // namespace torchgauge::core
