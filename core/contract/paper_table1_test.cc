#include "core/contract/paper_table1.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace torchgauge::core;
using nlohmann::json;

namespace {

// Vectors, not braced json: json{x} with one element is x itself under some
// compilers and a one-element array under others.
json Table(const std::vector<json>& models, const std::vector<json>& ours_only = {}) {
  json j = {{"citation", "c"}, {"note", "n"}, {"models", json::array()}, {"ours_only", json::array()}};
  for (const auto& m : models) j["models"].push_back(m);
  for (const auto& o : ours_only) j["ours_only"].push_back(o);
  return j;
}
json Entry(const std::string& name, const std::string& state, json ours = nullptr) {
  return {{"paper_name", name}, {"domain", "vision"}, {"task", "t"}, {"state", state}, {"ours", std::move(ours)}};
}

// Reading `j` fails with a message that contains `what`.
void Fails(const json& j, const std::string& what) {
  std::string message;
  try {
    PaperTable1FromJson(j, "t.json");
  } catch (const std::runtime_error& e) {
    message = e.what();
  }
  CHECK_MESSAGE(message.find(what) != std::string::npos, "got: '", message, "', expected: ", what);
}

}  // namespace

TEST_CASE("paper table 1: the three states read with their invariants") {
  json np = Entry("pig1", "not possible here");
  np["reason"] = "renamed";
  const PaperTable1 t =
      PaperTable1FromJson(Table({Entry("alexnet", "native", "alexnet"), Entry("mnasnet1_0", "planned"), np},
                                {json{{"id", "dqn"}, {"domain", "rl"}, {"task", "rl"}}}));
  REQUIRE(t.models.size() == 3);
  CHECK(t.models[0].ours == "alexnet");
  CHECK(t.models[1].state == PaperModelState::kPlanned);
  CHECK(t.models[2].reason == "renamed");
  CHECK(t.CountIn(PaperModelState::kNative) == 1);
  CHECK(t.ours_only.at(0).id == "dqn");
  CHECK(std::string(Name(PaperModelState::kNotPossible)) == "not possible here");
}

TEST_CASE("paper table 1: bad entries are refused naming the file, the entry and the field") {
  Fails(Table({Entry("a", "native")}), "t.json: field 'models[0].ours': must name our model id");
  Fails(Table({Entry("a", "planned", "a")}), "field 'models[0].ours': must be null unless state is native");
  Fails(Table({Entry("a", "not possible here")}), "field 'models[0].reason': missing required field");
  Fails(Table({Entry("a", "maybe")}),
        "field 'models[0].state': value 'maybe' is not one of: native, planned, not possible here");
  Fails(Table({Entry("a", "planned"), Entry("a", "planned")}), "field 'models[1].paper_name': 'a' is listed twice");
  Fails(Table({Entry("a", "native", "x"), Entry("b", "native", "x")}), "'x' is listed for two paper models");
  Fails(Table({Entry("a", "native", "x")}, {json{{"id", "x"}, {"domain", "d"}, {"task", "t"}}}),
        "field 'ours_only[0].id': 'x' is listed twice");
  json bad = Entry("a", "planned");
  bad["paper_name"] = 3;
  Fails(Table({bad}), "field 'models[0].paper_name': must be a string");
  Fails(json{{"citation", "c"}, {"note", "n"}}, "field 'models': missing required field");
  Fails(json{{"citation", "c"}, {"note", "n"}, {"models", "all"}}, "field 'models': must be an array (is a string)");
}

TEST_CASE("paper table 1: the embedded table reads and accounts for every model") {
  const PaperTable1& t = EmbeddedPaperTable1();
  CHECK(t.models.size() == 83);  // the names the extracted text recovers of the paper's 84
  const int states = t.CountIn(PaperModelState::kNative) + t.CountIn(PaperModelState::kPlanned) +
                     t.CountIn(PaperModelState::kNotPossible);
  CHECK(states == static_cast<int>(t.models.size()));
  for (const auto& m : t.models) {
    const bool explained = m.state != PaperModelState::kNotPossible || !m.reason.empty();
    CHECK_MESSAGE(explained, m.paper_name);
  }
}

TEST_CASE("paper table 1: the models added since the paper read with their invariants") {
  auto with_since = [](const std::vector<json>& since) {
    json j =
        Table({Entry("alexnet", "native", "alexnet")}, {json{{"id", "nanogpt"}, {"domain", "nlp"}, {"task", "t"}}});
    j["since_paper_source"] = "upstream at abc";
    j["since_paper"] = json::array();
    for (const auto& s : since) j["since_paper"].push_back(s);
    return j;
  };
  auto since = [](const std::string& name, const std::string& state, json ours = nullptr) {
    return json{{"name", name}, {"source", "torchbench"}, {"domain", "nlp"},
                {"task", "t"},  {"state", state},         {"ours", std::move(ours)}};
  };
  const PaperTable1 t =
      PaperTable1FromJson(with_since({since("nanogpt", "native", "nanogpt"), since("sam", "planned")}));
  REQUIRE(t.since_paper.size() == 2);
  CHECK(t.since_paper_source == "upstream at abc");
  CHECK(t.since_paper[0].ours == "nanogpt");
  CHECK(t.since_paper[1].state == PaperModelState::kPlanned);
  CHECK(PaperTable1FromJson(Table({Entry("a", "planned")})).since_paper.empty());  // optional

  Fails(with_since({since("gpt", "native", "alexnet")}),
        "field 'since_paper[0].ours': 'alexnet' is not one of ours_only's ids");
  Fails(with_since({since("gpt", "native")}), "field 'since_paper[0].ours': must name our model id");
  json other_domain = since("gpt", "native", "nanogpt");
  other_domain["domain"] = "speech";
  Fails(with_since({other_domain}), "field 'since_paper[0].domain': 'speech', but ours_only lists 'nanogpt' in 'nlp'");
  Fails(with_since({since("sam", "planned"), since("sam", "planned")}),
        "field 'since_paper[1].name': 'sam' is listed twice");
  json bad = since("sam", "planned");
  bad["source"] = "hub";
  Fails(with_since({bad}), "field 'since_paper[0].source': value 'hub' is not one of");
  json no_source = with_since({since("sam", "planned")});
  no_source.erase("since_paper_source");
  Fails(no_source, "field 'since_paper_source': missing required field");
}
