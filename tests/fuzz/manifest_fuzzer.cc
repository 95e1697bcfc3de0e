// Fuzzes the manifest reader: the bytes become <scratch>/manifest.json, read
// with core::ReadJsonFile (the manifest size cap) and checked by
// core::ManifestFromJson, as every reader of a results tree does.
// Contract beyond "no crash, no sanitizer report": both throw only
// core::FileError (every refusal names the file).
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/contract/manifest.h"
#include "core/io/json_io.h"
#include "tests/fuzz/fuzz_util.h"

namespace core = torchgauge::core;
using torchgauge::fuzz::ContractBroken;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = torchgauge::fuzz::ScratchDir() / "manifest.json";
  torchgauge::fuzz::WriteBytes(file, data, size);
  try {
    (void)core::ManifestFromJson(core::ReadJsonFile(file, core::JsonKind::kManifest), file);
  } catch (const core::FileError&) {
  } catch (const std::exception& e) {
    ContractBroken(std::string("the manifest reader threw something other than FileError: ") + e.what());
  }
  return 0;
}
