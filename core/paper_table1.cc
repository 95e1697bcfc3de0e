#include "core/paper_table1.h"

#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

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

int PaperTable1::CountIn(PaperModelState s) const {
  int n = 0;
  for (const auto& m : models) n += m.state == s ? 1 : 0;
  return n;
}

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

struct Where {
  std::string_view source;
  std::string entry;
  [[noreturn]] void Fail(const std::string& field, const std::string& what) const {
    throw std::runtime_error(std::string(source) + ": " + entry + ": field '" + field + "' " + what);
  }
  std::string String(const json& e, const char* key, bool required = true) const {
    if (!e.is_object()) Fail(key, "cannot be read: the entry is not an object");
    auto it = e.find(key);
    if (it == e.end()) {
      if (required) Fail(key, "is missing");
      return "";
    }
    if (!it->is_string()) Fail(key, "must be a string");
    if (required && it->get_ref<const std::string&>().empty()) Fail(key, "must not be empty");
    return it->get<std::string>();
  }
};

const json& Array(const json& j, const char* key, std::string_view source) {
  if (!j.is_object() || !j.contains(key) || !j.at(key).is_array()) {
    throw std::runtime_error(std::string(source) + ": top level: field '" + key + "' must be an array");
  }
  return j.at(key);
}

}  // namespace

PaperTable1 PaperTable1FromJson(const json& j, std::string_view source) {
  PaperTable1 t;
  const Where top{source, "top level"};
  t.citation = top.String(j, "citation");
  t.note = top.String(j, "note");
  std::set<std::string> names, ours;
  const json& models = Array(j, "models", source);
  for (size_t i = 0; i < models.size(); ++i) {
    const json& e = models[i];
    Where w{source, "models[" + std::to_string(i) + "]"};
    PaperModel m;
    m.paper_name = w.String(e, "paper_name");
    w.entry += " (" + m.paper_name + ")";
    m.domain = w.String(e, "domain");
    m.task = w.String(e, "task");
    const std::string state = w.String(e, "state");
    if (state == "native")
      m.state = PaperModelState::kNative;
    else if (state == "planned")
      m.state = PaperModelState::kPlanned;
    else if (state == "not possible here")
      m.state = PaperModelState::kNotPossible;
    else
      w.Fail("state", "must be 'native', 'planned' or 'not possible here', got '" + state + "'");
    const bool has_ours = e.contains("ours") && !e.at("ours").is_null();
    if (m.state == PaperModelState::kNative) {
      if (!has_ours) w.Fail("ours", "must name our model id when state is native");
      m.ours = w.String(e, "ours");
      if (!ours.insert(*m.ours).second) w.Fail("ours", "'" + *m.ours + "' is listed for two paper models");
    } else if (has_ours) {
      w.Fail("ours", "must be null unless state is native");
    }
    m.reason = w.String(e, "reason", m.state == PaperModelState::kNotPossible);
    m.note = w.String(e, "note", false);
    if (!names.insert(m.paper_name).second) w.Fail("paper_name", "'" + m.paper_name + "' is listed twice");
    t.models.push_back(std::move(m));
  }
  const json& only = Array(j, "ours_only", source);
  for (size_t i = 0; i < only.size(); ++i) {
    const json& e = only[i];
    Where w{source, "ours_only[" + std::to_string(i) + "]"};
    OursOnlyModel m{w.String(e, "id"), w.String(e, "domain"), w.String(e, "task"), w.String(e, "note", false)};
    if (!ours.insert(m.id).second) w.Fail("id", "'" + m.id + "' is listed twice");
    t.ours_only.push_back(std::move(m));
  }
  return t;
}

const PaperTable1& EmbeddedPaperTable1() {
  static const PaperTable1 table = PaperTable1FromJson(json::parse(kPaperTable1Json), "models/paper_table1.json");
  return table;
}

}  // namespace torchgauge::core
