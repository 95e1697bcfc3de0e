#include "core/contract/paper_table1.h"

#include <set>

#include <nlohmann/json.hpp>

#include "core/io/json_fields.h"

namespace torchgauge::core {

extern const char* const kPaperTable1Json;  // generated from models/paper_table1.json

using nlohmann::json;

const char* Name(PaperModelState s) {
  switch (s) {
    case PaperModelState::kNative:
      return "native";
    case PaperModelState::kPlanned:
      return "planned";
    case PaperModelState::kNotPossible:
      return "not possible here";
  }
  return "?";
}

namespace {
template <typename Models>
int CountState(const Models& models, PaperModelState s) {
  int n = 0;
  for (const auto& m : models) n += m.state == s ? 1 : 0;
  return n;
}
}  // namespace

int PaperTable1::CountIn(PaperModelState s) const { return CountState(models, s); }
int PaperTable1::SinceCountIn(PaperModelState s) const { return CountState(since_paper, s); }

PaperDomainCounts& PaperDomainCounts::operator+=(const PaperDomainCounts& o) {
  paper += o.paper, native += o.native, planned += o.planned, not_possible += o.not_possible, beyond += o.beyond;
  return *this;
}

std::map<std::string, PaperDomainCounts> CountByDomain(const PaperTable1& table) {
  std::map<std::string, PaperDomainCounts> c;
  for (const auto& m : table.models) {
    PaperDomainCounts& d = c[m.domain];
    ++d.paper;
    if (m.state == PaperModelState::kNative) ++d.native;
    if (m.state == PaperModelState::kPlanned) ++d.planned;
    if (m.state == PaperModelState::kNotPossible) ++d.not_possible;
  }
  for (const auto& o : table.ours_only) ++c[o.domain].beyond;
  return c;
}

namespace {

// Names and the other strings an entry must give: present and not empty.
std::string NonEmpty(const JsonFields& e, const char* key) {
  std::string v = e.Get<std::string>(key);
  if (v.empty()) e.Fail(key, "must not be empty");
  return v;
}

PaperModelState ReadState(const JsonFields& e) {
  static constexpr const char* kStates[] = {"native", "planned", "not possible here"};
  const std::string state = e.OneOf("state", kStates);
  if (state == "native") return PaperModelState::kNative;
  if (state == "planned") return PaperModelState::kPlanned;
  return PaperModelState::kNotPossible;
}

// The fields a listed model has past its name, domain and task, in either
// list: a state, `ours` exactly when native, a reason when not possible here.
template <typename Model>
void ReadStateFields(const JsonFields& e, Model& m) {
  m.state = ReadState(e);
  if (m.state == PaperModelState::kNative) {
    if (!e.Has("ours")) e.Fail("ours", "must name our model id when state is native");
    m.ours = NonEmpty(e, "ours");
  } else if (e.Has("ours")) {
    e.Fail("ours", "must be null unless state is native");
  }
  m.reason = m.state == PaperModelState::kNotPossible ? NonEmpty(e, "reason") : e.GetOr<std::string>("reason", "");
  m.note = e.GetOr<std::string>("note", "");
}

// One of the paper's models; `ours` collects our model ids, each listed once.
PaperModel ReadPaperModel(const JsonFields& e, std::set<std::string>& ours) {
  PaperModel m;
  m.paper_name = NonEmpty(e, "paper_name");
  m.domain = NonEmpty(e, "domain");
  m.task = NonEmpty(e, "task");
  ReadStateFields(e, m);
  if (m.ours && !ours.insert(*m.ours).second) e.Fail("ours", "'" + *m.ours + "' is listed for two paper models");
  return m;
}

// One of the models added since the paper; `beyond` maps ours_only's ids to
// their domains (which the registry check holds to the models' own).
SincePaperModel ReadSinceModel(const JsonFields& e, const std::map<std::string, std::string>& beyond) {
  static constexpr const char* kSources[] = {"torchbench", "canary", "compiler suite"};
  SincePaperModel m;
  m.name = NonEmpty(e, "name");
  m.source = e.OneOf("source", kSources);
  m.domain = NonEmpty(e, "domain");
  m.task = NonEmpty(e, "task");
  ReadStateFields(e, m);
  if (!m.ours) return m;
  auto it = beyond.find(*m.ours);
  if (it == beyond.end()) e.Fail("ours", "'" + *m.ours + "' is not one of ours_only's ids");
  if (it->second != m.domain)
    e.Fail("domain", "'" + m.domain + "', but ours_only lists '" + *m.ours + "' in '" + it->second + "'");
  return m;
}

}  // namespace

PaperTable1 PaperTable1FromJson(const json& j, std::string_view source) {
  const JsonFields top(j, std::filesystem::path(source));
  PaperTable1 t;
  t.citation = NonEmpty(top, "citation");
  t.note = NonEmpty(top, "note");
  std::set<std::string> names, ours;
  for (const JsonFields& e : top.Objects("models")) {
    PaperModel m = ReadPaperModel(e, ours);
    if (!names.insert(m.paper_name).second) e.Fail("paper_name", "'" + m.paper_name + "' is listed twice");
    t.models.push_back(std::move(m));
  }
  for (const JsonFields& e : top.Objects("ours_only")) {
    OursOnlyModel m{NonEmpty(e, "id"), NonEmpty(e, "domain"), NonEmpty(e, "task"), e.GetOr<std::string>("note", "")};
    if (!ours.insert(m.id).second) e.Fail("id", "'" + m.id + "' is listed twice");
    t.ours_only.push_back(std::move(m));
  }
  std::map<std::string, std::string> beyond;
  for (const auto& o : t.ours_only) beyond[o.id] = o.domain;
  std::set<std::string> since;
  if (top.Has("since_paper")) {
    t.since_paper_source = NonEmpty(top, "since_paper_source");
    for (const JsonFields& e : top.Objects("since_paper")) {
      SincePaperModel m = ReadSinceModel(e, beyond);
      if (!since.insert(m.name).second) e.Fail("name", "'" + m.name + "' is listed twice");
      t.since_paper.push_back(std::move(m));
    }
  }
  return t;
}

const PaperTable1& EmbeddedPaperTable1() {
  static const PaperTable1 table = PaperTable1FromJson(json::parse(kPaperTable1Json), "models/paper_table1.json");
  return table;
}

}  // namespace torchgauge::core
