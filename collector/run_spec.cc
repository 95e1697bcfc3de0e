#include "collector/run_spec.h"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "models/workload.h"

namespace torchgauge::collector {

using nlohmann::json;

json RunSpec::ToJson() const {
  return {{"model", model}, {"mode", mode}, {"backend", backend}, {"precision", precision},
          {"batch_size", batch_size}, {"device", device}, {"warmup", warmup}, {"repeat", repeat}, {"processes", processes}, {"result_file", result_file},
          {"profile_iterations", profile_iterations}, {"seed", seed}, {"timeout_s", timeout_s},
          {"trace", trace}, {"build_id", build_id}, {"platform_id", platform_id},
          {"platform_dir", platform_dir}, {"slowdown", slowdown}, {"smoke", smoke}, {"threads", threads}};
}

RunSpec RunSpec::FromJson(const json& j) {
  RunSpec s;
  s.model = j.at("model");
  s.mode = j.at("mode");
  s.backend = j.at("backend");
  s.precision = j.at("precision");
  s.batch_size = j.at("batch_size");
  s.device = j.at("device");
  s.warmup = j.at("warmup");
  s.repeat = j.at("repeat");
  s.processes = j.value("processes", 1);
  s.result_file = j.value("result_file", std::string());
  s.profile_iterations = j.at("profile_iterations");
  s.seed = j.at("seed");
  s.timeout_s = j.at("timeout_s");
  s.trace = j.at("trace");
  s.build_id = j.at("build_id");
  s.platform_id = j.at("platform_id");
  s.platform_dir = j.at("platform_dir");
  s.slowdown = j.value("slowdown", 0.0);
  s.smoke = j.value("smoke", false);
  s.threads = j.value("threads", 0);
  return s;
}

std::vector<RunSpec> BuildPlan(const SuiteConfig& suite, const PlanFilters& filters, const std::string& device) {
  std::optional<std::regex> re;
  if (!filters.model_regex.empty()) {
    try {
      re.emplace(filters.model_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--model: invalid regular expression '" + filters.model_regex + "': " + e.what());
    }
  }
  for (const auto& d : filters.domains) {
    static const char* kDomains[] = {"vision", "nlp", "recommendation", "rl", "speech", "other", "test"};
    if (std::none_of(std::begin(kDomains), std::end(kDomains), [&](const char* k) { return d == k; })) {
      throw std::invalid_argument("--domain: unknown domain '" + d +
                                  "' (vision, nlp, recommendation, rl, speech, other)");
    }
  }
  for (const auto& id : suite.models) {
    if (!models::FindModel(id)) throw std::invalid_argument("suite '" + suite.name + "': unknown model '" + id + "'");
  }
  auto pick = [](const std::vector<std::string>& f, const std::vector<std::string>& s) { return f.empty() ? s : f; };
  const auto modes = pick(filters.modes, suite.modes);
  const auto precisions = pick(filters.precisions, suite.precisions);
  const auto backends = pick(filters.backends, suite.backends);

  std::vector<RunSpec> plan;
  for (const auto& info : models::Registry()) {
    const bool named = std::find(suite.models.begin(), suite.models.end(), info.id) != suite.models.end();
    if (info.hidden && !filters.include_hidden && !named) continue;
    if (!suite.models.empty() && !named && !(info.hidden && filters.include_hidden)) continue;
    if (std::find(suite.exclude.begin(), suite.exclude.end(), info.id) != suite.exclude.end()) continue;
    if (re && !std::regex_search(info.id, *re)) continue;
    const std::string domain = models::DomainName(info.domain);
    if (!filters.domains.empty() &&
        std::find(filters.domains.begin(), filters.domains.end(), domain) == filters.domains.end()) {
      continue;
    }
    for (const auto& mode_name : modes) {
      const auto mode = *models::ParseMode(mode_name);
      models::BatchSizes sizes = info.default_batch;
      if (suite.batch_sizes == "smoke") sizes = info.smoke_batch;
      else if (device == "cpu" && info.cpu_batch) sizes = *info.cpu_batch;
      int64_t batch = sizes.For(mode);
      if (auto it = suite.batch_size_overrides.find(info.id); it != suite.batch_size_overrides.end()) {
        if (auto m = it->second.find(mode_name); m != it->second.end()) batch = m->second;
      }
      if (filters.batch_size > 0) batch = filters.batch_size;
      for (const auto& backend : backends) {
        for (const auto& precision : precisions) {
          RunSpec s;
          s.model = info.id;
          s.mode = mode_name;
          s.backend = backend;
          s.precision = precision;
          s.batch_size = batch;
          s.device = device;
          s.warmup = suite.warmup;
          s.repeat = suite.repeat;
          s.processes = suite.processes;
          s.profile_iterations = suite.profile_iterations;
          s.seed = suite.seed;
          s.timeout_s = suite.timeout_s;
          s.smoke = suite.batch_sizes == "smoke";
          plan.push_back(s);
        }
      }
    }
  }
  return plan;
}

}  // namespace torchgauge::collector
