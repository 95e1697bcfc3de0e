#include "collector/paper_list.h"

#include <cctype>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "core/contract/vocabulary.h"

namespace torchgauge::collector {

using nlohmann::json;

std::vector<std::string> PaperTableProblems(const core::PaperTable1& table,
                                            const std::vector<models::ModelInfo>& registry) {
  std::map<std::string, const models::ModelInfo*> by_id;
  for (const auto& m : registry) by_id[m.id] = &m;
  std::vector<std::string> problems;
  std::map<std::string, bool> listed;
  auto check_ours = [&](const std::string& id, const std::string& domain, const std::string& entry) {
    listed[id] = true;
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      problems.push_back(entry + ": our id '" + id + "' is not a registered model");
      return static_cast<const models::ModelInfo*>(nullptr);
    }
    const models::ModelInfo& m = *it->second;
    if (m.hidden) problems.push_back(entry + ": '" + id + "' is a hidden test model");
    if (domain != core::Name(m.domain)) {
      problems.push_back(entry + ": domain '" + domain + "', but '" + id + "' is registered in '" +
                         core::Name(m.domain) + "'");
    }
    return &m;
  };
  for (const auto& p : table.models) {
    const std::string entry = "paper model " + p.paper_name;
    if (p.ours) {
      const auto* m = check_ours(*p.ours, p.domain, entry);
      // The registry's paper name may add a gloss: "hf_ptg1 (GPT-2)".
      if (m && m->paper_name.rfind(p.paper_name, 0) != 0) {
        problems.push_back(entry + ": '" + *p.ours + "' is registered with paper name '" + m->paper_name + "'");
      }
      continue;
    }
    for (const auto& m : registry) {
      if (!m.hidden && !m.paper_name.empty() && m.paper_name.rfind(p.paper_name, 0) == 0 &&
          (m.paper_name.size() == p.paper_name.size() || m.paper_name[p.paper_name.size()] == ' ')) {
        problems.push_back(entry + " is '" + core::Name(p.state) + "', but '" + m.id +
                           "' is registered with that paper name: mark it native");
      }
    }
  }
  for (const auto& o : table.ours_only) check_ours(o.id, o.domain, "ours_only " + o.id);
  auto lower = [](std::string t) {
    for (auto& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return t;
  };
  // A native entry's id and domain are ours_only's (the contract holds them
  // to it, and ours_only is checked above); a planned one must not name a
  // registered model. TorchBench spells some names with capitals
  // (hf_Whisper); our ids are lower case.
  for (const auto& n : table.since_paper) {
    if (n.ours) continue;
    if (auto it = by_id.find(lower(n.name)); it != by_id.end() && !it->second->hidden) {
      problems.push_back("since-paper model " + n.name + " is '" + core::Name(n.state) + "', but '" + it->first +
                         "' is registered: mark it native");
    }
  }
  for (const auto& m : registry) {
    if (!m.hidden && !listed.count(m.id)) {
      problems.push_back("registered model '" + m.id +
                         "' is not in models/paper_table1.json: add it as a paper model's 'ours' or to ours_only");
    }
  }
  return problems;
}

namespace {

std::string Line(const char* fmt, auto... args) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// A listed model's reason and note, each only where it has one.
void AddReasonAndNote(json& e, const std::string& reason, const std::string& note) {
  if (!reason.empty()) e["reason"] = reason;
  if (!note.empty()) e["note"] = note;
}

}  // namespace

std::string PaperTableText(const core::PaperTable1& table) {
  std::string out =
      Line("%-34s %-15s %-26s %-18s %-34s %s\n", "PAPER MODEL", "DOMAIN", "TASK", "STATE", "OURS", "REASON / NOTE");
  for (const auto& m : table.models) {
    const std::string why = m.reason.empty() ? m.note : m.reason;
    out += Line("%-34s %-15s %-26s %-18s %-34s %s\n", m.paper_name.c_str(), m.domain.c_str(), m.task.c_str(),
                core::Name(m.state), m.ours.value_or("-").c_str(), why.c_str());
  }
  for (const auto& o : table.ours_only) {
    out += Line("%-34s %-15s %-26s %-18s %-34s %s\n", "(beyond the paper's list)", o.domain.c_str(), o.task.c_str(),
                "native", o.id.c_str(), o.note.c_str());
  }
  out += Line("\n%-15s %6s %7s %8s %13s %10s\n", "DOMAIN", "PAPER", "NATIVE", "PLANNED", "NOT POSSIBLE", "BEYOND");
  core::PaperDomainCounts all;
  for (const auto& [domain, d] : core::CountByDomain(table)) {
    out +=
        Line("%-15s %6d %7d %8d %13d %10d\n", domain.c_str(), d.paper, d.native, d.planned, d.not_possible, d.beyond);
    all += d;
  }
  out += Line("%-15s %6d %7d %8d %13d %10d\n", "all", all.paper, all.native, all.planned, all.not_possible, all.beyond);
  out += Line("(%d names recovered of the 84 the paper counts; %d native models in all, %d beyond its list)\n",
              all.paper, all.native + all.beyond, all.beyond);
  if (table.since_paper.empty()) return out;
  out += "\nSINCE THE PAPER: " + table.since_paper_source + "\n";
  out += Line("%-34s %-15s %-15s %-26s %-18s %-34s %s\n", "MODEL", "SOURCE", "DOMAIN", "TASK", "STATE", "OURS",
              "REASON / NOTE");
  for (const auto& n : table.since_paper) {
    const std::string why = n.reason.empty() ? n.note : n.reason;
    out += Line("%-34s %-15s %-15s %-26s %-18s %-34s %s\n", n.name.c_str(), n.source.c_str(), n.domain.c_str(),
                n.task.c_str(), core::Name(n.state), n.ours.value_or("-").c_str(), why.c_str());
  }
  using S = core::PaperModelState;
  out += Line("(%zu models added since the paper: %d native, %d planned, %d not possible here)\n",
              table.since_paper.size(), table.SinceCountIn(S::kNative), table.SinceCountIn(S::kPlanned),
              table.SinceCountIn(S::kNotPossible));
  return out;
}

json PaperTableJson(const core::PaperTable1& table) {
  json models = json::array(), only = json::array();
  for (const auto& m : table.models) {
    json e = {{"paper_name", m.paper_name},
              {"domain", m.domain},
              {"task", m.task},
              {"state", core::Name(m.state)},
              {"ours", m.ours ? json(*m.ours) : json(nullptr)}};
    AddReasonAndNote(e, m.reason, m.note);
    models.push_back(std::move(e));
  }
  for (const auto& o : table.ours_only)
    only.push_back({{"id", o.id}, {"domain", o.domain}, {"task", o.task}, {"note", o.note}});
  json since = json::array();
  for (const auto& n : table.since_paper) {
    json e = {{"name", n.name}, {"source", n.source},           {"domain", n.domain},
              {"task", n.task}, {"state", core::Name(n.state)}, {"ours", n.ours ? json(*n.ours) : json(nullptr)}};
    AddReasonAndNote(e, n.reason, n.note);
    since.push_back(std::move(e));
  }
  return {{"citation", table.citation},
          {"models", std::move(models)},
          {"ours_only", std::move(only)},
          {"since_paper_source", table.since_paper_source},
          {"since_paper", std::move(since)}};
}

}  // namespace torchgauge::collector
