// Fuzzes the run-result reader: the bytes become a file under
// <scratch>/<build>/<platform>/runs/ and go through reporter::LoadRunFile,
// the path `validate` and the site take (read, JSON parse,
// core::RunResultFromJson, the layout and range checks).
//
// Contracts checked beyond "no crash, no sanitizer report":
//  - core::RunResultFromJson and LoadRunFile throw only core::FileError.
//  - A result the loader accepts survives ToJson -> text -> RunResultFromJson
//    unchanged: what the reporter accepts, the collector's writer can write.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/contract/layout.h"
#include "core/contract/result.h"
#include "core/io/json_io.h"
#include "reporter/results/load.h"
#include "tests/fuzz/fuzz_util.h"

namespace fs = std::filesystem;
namespace core = torchgauge::core;
using nlohmann::json;
using torchgauge::fuzz::ContractBroken;

namespace {

void CheckRoundTrip(const core::RunResult& r) {
  const json written = core::ToJson(r);
  const std::string text = written.dump();
  core::RunResult again;
  try {
    again = core::RunResultFromJson(json::parse(text), "roundtrip.json");
  } catch (const std::exception& e) {
    ContractBroken(std::string("an accepted result does not read back: ") + e.what() + "\n" + text);
  }
  if (core::ToJson(again) != written) ContractBroken("an accepted result reads back changed:\n" + text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Where the file must sit (and what it must be called) for the loader to
  // get past its layout checks to the range checks: take it from the text.
  std::string build = "b", platform = "p", stem = "x";
  json j = json::parse(data, data + size, nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) {
    try {
      core::RunResult r = core::RunResultFromJson(j, "fuzz.json");
      if (core::IsSafeId(r.build_id) && core::IsSafeId(r.platform_id) && core::IsSafeId(r.model.id)) {
        build = r.build_id;
        platform = r.platform_id;
        stem = core::RunKey{r.model.id, r.mode, r.backend, r.precision}.FileStem();
      }
    } catch (const core::FileError&) {
    } catch (const std::exception& e) {
      ContractBroken(std::string("RunResultFromJson threw something other than FileError: ") + e.what());
    }
  }
  const fs::path dir = torchgauge::fuzz::ScratchDir() / build / platform / "runs";
  fs::create_directories(dir);
  const fs::path file = dir / (stem + ".json");
  torchgauge::fuzz::WriteBytes(file, data, size);
  try {
    CheckRoundTrip(torchgauge::reporter::LoadRunFile(file, build, platform));
  } catch (const core::FileError&) {
  } catch (const std::exception& e) {
    ContractBroken(std::string("LoadRunFile threw something other than FileError: ") + e.what());
  }
  fs::remove_all(torchgauge::fuzz::ScratchDir() / build);
  return 0;
}
