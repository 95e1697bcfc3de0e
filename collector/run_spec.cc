#include "collector/run_spec.h"

#include <algorithm>
#include <optional>
#include <regex>
#include <stdexcept>

// RunSettingsFromJson has an overload for JsonFields: the type must be
// complete where it is called with a json, or nlohmann's conversion
// operator's traits fail on it.
#include "core/contract/vocabulary.h"
#include "core/io/json_fields.h"
#include "models/workload.h"

namespace torchgauge::collector {

using nlohmann::json;

json RunSpec::ToJson() const {
  return {{"model", model},
          {"mode", mode},
          {"backend", backend},
          {"precision", precision},
          {"batch_size", batch_size},
          {"device", device},
          {"settings", core::ToJson(settings)},
          {"result_file", result_file},
          {"trace", trace},
          {"build_id", build_id},
          {"platform_id", platform_id},
          {"platform_dir", platform_dir},
          {"slowdown", slowdown},
          {"jitter", jitter},
          {"ballast_mib", ballast_mib},
          {"plant_cost", plant_cost},
          {"valgrind_version", valgrind_version},
          {"callgrind_out", callgrind_out},
          {"keep_profile", keep_profile}};
}

RunSpec RunSpec::FromJson(const json& j) {
  RunSpec s;
  s.model = j.at("model");
  s.mode = j.at("mode");
  s.backend = j.at("backend");
  s.precision = j.at("precision");
  s.batch_size = j.at("batch_size");
  s.device = j.at("device");
  s.settings = core::RunSettingsFromJson(j.at("settings"));
  s.result_file = j.value("result_file", std::string());
  s.trace = j.at("trace");
  s.build_id = j.at("build_id");
  s.platform_id = j.at("platform_id");
  s.platform_dir = j.at("platform_dir");
  s.slowdown = j.value("slowdown", 0.0);
  s.jitter = j.value("jitter", 0.0);
  s.ballast_mib = j.value("ballast_mib", 0);
  s.plant_cost = j.value("plant_cost", std::string());
  s.valgrind_version = j.value("valgrind_version", std::string());
  s.callgrind_out = j.value("callgrind_out", std::string());
  s.keep_profile = j.value("keep_profile", std::string());
  return s;
}

namespace {

std::optional<std::regex> ModelRegex(const std::string& pattern) {
  if (pattern.empty()) return std::nullopt;
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw std::invalid_argument("--model: invalid regular expression '" + pattern + "': " + e.what());
  }
}

void CheckNames(const SuiteConfig& suite, const PlanFilters& filters) {
  for (const auto& d : filters.domains) {
    if (!core::IsName<core::Domain>(d)) {
      throw std::invalid_argument("--domain: unknown domain '" + d + "' (" + core::JoinNames(core::kDomains) + ")");
    }
  }
  for (const auto& id : suite.models) {
    if (!models::FindModel(id)) throw std::invalid_argument("suite '" + suite.name + "': unknown model '" + id + "'");
  }
  for (const auto& [backend, modes] : suite.backend_models) {
    for (const auto& [mode, ids] : modes) {
      for (const auto& id : ids) {
        if (!models::FindModel(id)) {
          throw std::invalid_argument("suite '" + suite.name + "': backend_models." + backend + "." + mode +
                                      ": unknown model '" + id + "'");
        }
      }
    }
  }
}

// A suite's backend_models restriction, for the suite's own backends only.
bool BackendRuns(const SuiteConfig& suite, const PlanFilters& filters, const std::string& backend,
                 const std::string& mode, const std::string& model) {
  if (!filters.backends.empty()) return true;
  const auto b = suite.backend_models.find(backend);
  if (b == suite.backend_models.end()) return true;
  const auto m = b->second.find(mode);
  return m != b->second.end() && std::find(m->second.begin(), m->second.end(), model) != m->second.end();
}

bool Selected(const models::ModelInfo& info, const SuiteConfig& suite, const PlanFilters& filters,
              const std::optional<std::regex>& re) {
  const bool named = std::find(suite.models.begin(), suite.models.end(), info.id) != suite.models.end();
  if (info.hidden && !filters.include_hidden && !named) return false;
  if (!suite.models.empty() && !named && !(info.hidden && filters.include_hidden)) return false;
  if (std::find(suite.exclude.begin(), suite.exclude.end(), info.id) != suite.exclude.end()) return false;
  if (re && !std::regex_search(info.id, *re)) return false;
  const std::string domain = core::Name(info.domain);
  return filters.domains.empty() ||
         std::find(filters.domains.begin(), filters.domains.end(), domain) != filters.domains.end();
}

int64_t BatchSize(const models::ModelInfo& info, const std::string& mode_name, const SuiteConfig& suite,
                  const PlanFilters& filters, const std::string& device) {
  const auto mode = core::Parse<core::Mode>(mode_name);
  models::BatchSizes sizes = info.default_batch;
  if (suite.batch_sizes == "smoke")
    sizes = info.smoke_batch;
  else if (device == "cpu" && info.cpu_batch)
    sizes = *info.cpu_batch;
  int64_t batch = sizes.For(mode);
  if (auto it = suite.batch_size_overrides.find(info.id); it != suite.batch_size_overrides.end()) {
    if (auto m = it->second.find(mode_name); m != it->second.end()) batch = m->second;
  }
  return filters.batch_size > 0 ? filters.batch_size : batch;
}

}  // namespace

std::vector<RunSpec> BuildPlan(const SuiteConfig& suite, const PlanFilters& filters, const std::string& device) {
  const auto re = ModelRegex(filters.model_regex);
  CheckNames(suite, filters);
  auto pick = [](const std::vector<std::string>& f, const std::vector<std::string>& s) { return f.empty() ? s : f; };
  const auto modes = pick(filters.modes, suite.modes);
  const auto precisions = pick(filters.precisions, suite.precisions);
  const auto backends = pick(filters.backends, suite.backends);

  std::vector<RunSpec> plan;
  for (const auto& info : models::Registry()) {
    if (!Selected(info, suite, filters, re)) continue;
    for (const auto& mode : modes) {
      const int64_t batch = BatchSize(info, mode, suite, filters, device);
      for (const auto& backend : backends) {
        if (!BackendRuns(suite, filters, backend, mode, info.id)) continue;
        for (const auto& precision : precisions) {
          RunSpec s;
          s.model = info.id;
          s.mode = mode;
          s.backend = backend;
          s.precision = precision;
          s.batch_size = batch;
          s.device = device;
          s.settings = suite.settings;
          if (const auto p = suite.backend_processes.find(backend); p != suite.backend_processes.end()) {
            s.settings.processes = p->second;
          }
          plan.push_back(s);
        }
      }
    }
  }
  return plan;
}

}  // namespace torchgauge::collector
