// Fuzzes the manifest reader: the bytes become <scratch>/manifest.json, read
// with core::ReadJsonFile and checked by ManifestFromJson, as the site does.
// Contract beyond "no crash, no sanitizer report": both throw only
// core::FileError (every refusal names the file).
//
// ManifestFromJson is moving to core/manifest.h as core::ManifestFromJson;
// then the two lines marked MANIFEST-API change (the include and the alias).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json_io.h"
#include "reporter/load.h"  // MANIFEST-API
#include "tests/fuzz/fuzz_util.h"

namespace manifest_api = torchgauge::reporter;  // MANIFEST-API
namespace core = torchgauge::core;
using torchgauge::fuzz::ContractBroken;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = torchgauge::fuzz::ScratchDir() / "manifest.json";
  torchgauge::fuzz::WriteBytes(file, data, size);
  try {
    (void)manifest_api::ManifestFromJson(core::ReadJsonFile(file), file);
  } catch (const core::FileError&) {
  } catch (const std::exception& e) {
    ContractBroken(std::string("the manifest reader threw something other than FileError: ") + e.what());
  }
  return 0;
}
