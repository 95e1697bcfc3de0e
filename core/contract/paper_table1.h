// The paper's Table 1 (models/paper_table1.json, embedded at build time): the
// 84 models of TorchBench as the paper lists them, each with our state. The
// one reader of that file, shared by `torchgauge-collect list --paper` (which
// checks it against the model registry) and the reporter's Table 1 pages.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace torchgauge::core {

enum class PaperModelState { kNative, kPlanned, kNotPossible };
// "native" | "planned" | "not possible here", as the file spells them.
const char* Name(PaperModelState s);

struct PaperModel {
  std::string paper_name, domain, task;
  PaperModelState state = PaperModelState::kPlanned;
  std::optional<std::string> ours;  // our model id; set exactly when native
  std::string reason;               // why not possible here (required then)
  std::string note;
};
struct OursOnlyModel {
  std::string id, domain, task, note;
};
// A model TorchBench (or PyTorch's compiler suite) added after the paper, by
// its upstream name; native ones name the ours_only entry that implements it.
struct SincePaperModel {
  std::string name, source, domain, task;  // source: "torchbench", "canary" or "compiler suite"
  PaperModelState state = PaperModelState::kPlanned;
  std::optional<std::string> ours;  // set exactly when native; one of ours_only's ids
  std::string reason;               // why not possible here (required then)
  std::string note;
};
struct PaperTable1 {
  std::string citation, note;
  std::vector<PaperModel> models;
  std::vector<OursOnlyModel> ours_only;  // ours, not in the paper's list as extracted
  std::string since_paper_source;        // where the list below was read, and when
  std::vector<SincePaperModel> since_paper;
  int CountIn(PaperModelState s) const;       // of the paper's models
  int SinceCountIn(PaperModelState s) const;  // of since_paper's
};

// Table 1's counts for one domain, or summed over all: the paper's models by
// state, and ours beyond its list.
struct PaperDomainCounts {
  int paper = 0, native = 0, planned = 0, not_possible = 0, beyond = 0;
  PaperDomainCounts& operator+=(const PaperDomainCounts& o);
};
// Per domain (as the file spells it), in name order: the one count behind
// `list --paper`'s summary and the Table 1 page's domain rows.
std::map<std::string, PaperDomainCounts> CountByDomain(const PaperTable1& table);

// Throws FileError (a std::runtime_error) naming `source` and the field's
// path (models[3].state). Checks
// the invariants: a known state, `ours` exactly for native models, a reason
// for models not possible here, no paper name or our id listed twice; in
// since_paper, a known source, no name twice, and a native entry's `ours`
// among ours_only's ids (the models beyond the paper's list), in its domain.
PaperTable1 PaperTable1FromJson(const nlohmann::json& j, std::string_view source = "paper_table1.json");
// The table embedded at build time.
const PaperTable1& EmbeddedPaperTable1();

}  // namespace torchgauge::core
