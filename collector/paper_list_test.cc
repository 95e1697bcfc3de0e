#include "collector/paper_list.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using namespace torchgauge;

namespace {

models::ModelInfo Info(const std::string& id, const std::string& paper_name, models::Domain domain) {
  models::ModelInfo m;
  m.id = id;
  m.paper_name = paper_name;
  m.domain = domain;
  return m;
}

bool Has(const std::vector<std::string>& problems, const std::string& text) {
  for (const auto& p : problems) {
    if (p.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("paper table 1 agrees with the model registry") {
  const auto problems = collector::PaperTableProblems(core::EmbeddedPaperTable1(), models::Registry());
  for (const auto& p : problems) MESSAGE(p);
  CHECK(problems.empty());
}

TEST_CASE("paper table 1 against a registry: each kind of drift is named") {
  const core::PaperTable1 table = core::PaperTable1FromJson(nlohmann::json::parse(R"({
    "citation": "c", "note": "n",
    "models": [
      {"paper_name": "alexnet", "domain": "vision", "task": "t", "state": "native", "ours": "alexnet"},
      {"paper_name": "hf_ptg1", "domain": "nlp", "task": "t", "state": "native", "ours": "hf_gpt2"},
      {"paper_name": "mnasnet1_0", "domain": "vision", "task": "t", "state": "planned", "ours": null},
      {"paper_name": "vgg16", "domain": "vision", "task": "t", "state": "native", "ours": "vgg16"}],
    "ours_only": [{"id": "dqn", "domain": "rl", "task": "t"}]})"));
  std::vector<models::ModelInfo> registry = {Info("alexnet", "alexnet", models::Domain::kVision),
                                             Info("hf_gpt2", "hf_ptg1 (GPT-2)", models::Domain::kNlp),
                                             Info("dqn", "", models::Domain::kReinforcementLearning)};
  CHECK(collector::PaperTableProblems(table, registry) ==
        std::vector<std::string>{"paper model vgg16: our id 'vgg16' is not a registered model"});
  registry.push_back(Info("mnasnet", "mnasnet1_0", models::Domain::kVision));
  registry.push_back(Info("extra", "", models::Domain::kOther));
  registry[0].domain = models::Domain::kNlp;
  const auto problems = collector::PaperTableProblems(table, registry);
  CHECK(Has(problems, "paper model alexnet: domain 'vision', but 'alexnet' is registered in 'nlp'"));
  CHECK(Has(problems, "paper model mnasnet1_0 is 'planned', but 'mnasnet' is registered with that paper name"));
  CHECK(Has(problems, "registered model 'extra' is not in models/paper_table1.json"));
  CHECK(Has(problems, "registered model 'mnasnet' is not in models/paper_table1.json"));
  CHECK_FALSE(Has(problems, "hf_gpt2"));  // a glossed paper name still matches
}

TEST_CASE("list --paper text and JSON: every model and the per-domain counts") {
  const auto& table = core::EmbeddedPaperTable1();
  const std::string text = collector::PaperTableText(table);
  CHECK(text.find("pig1") != std::string::npos);
  CHECK(text.find("not possible here") != std::string::npos);
  CHECK(text.find("names recovered of the 84 the paper counts") != std::string::npos);
  const auto j = collector::PaperTableJson(table);
  CHECK(j["models"].size() == table.models.size());
  CHECK(j["ours_only"].size() == table.ours_only.size());
}

TEST_CASE("list --paper: the models added since the paper, with their drift named") {
  const core::PaperTable1 table = core::PaperTable1FromJson(nlohmann::json::parse(R"({
    "citation": "c", "note": "n",
    "models": [{"paper_name": "alexnet", "domain": "vision", "task": "t", "state": "native", "ours": "alexnet"}],
    "ours_only": [{"id": "nanogpt", "domain": "nlp", "task": "t"}],
    "since_paper_source": "upstream at abc",
    "since_paper": [
      {"name": "nanogpt", "source": "torchbench", "domain": "nlp", "task": "t", "state": "native", "ours": "nanogpt"},
      {"name": "hf_Whisper", "source": "torchbench", "domain": "speech", "task": "t", "state": "planned", "ours": null}]})"));
  std::vector<models::ModelInfo> registry = {Info("alexnet", "alexnet", models::Domain::kVision),
                                             Info("nanogpt", "", models::Domain::kNlp)};
  CHECK(collector::PaperTableProblems(table, registry).empty());
  registry.push_back(Info("hf_whisper", "", models::Domain::kSpeech));
  CHECK(Has(collector::PaperTableProblems(table, registry),
            "since-paper model hf_Whisper is 'planned', but 'hf_whisper' is registered: mark it native"));
  const std::string text = collector::PaperTableText(table);
  CHECK(text.find("SINCE THE PAPER: upstream at abc") != std::string::npos);
  CHECK(text.find("(2 models added since the paper: 1 native, 1 planned, 0 not possible here)") != std::string::npos);
  const auto j = collector::PaperTableJson(table);
  REQUIRE(j["since_paper"].size() == 2);
  CHECK(j["since_paper"][1]["name"] == "hf_Whisper");
  CHECK(j["since_paper"][1]["ours"].is_null());
}
