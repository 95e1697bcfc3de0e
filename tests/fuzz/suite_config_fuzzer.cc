// Fuzzes the suite configuration: the bytes are a --config file, read with
// core::ReadJsonFile as `torchgauge-collect run --config` does, parsed alone
// (a whole suite) and merged over the embedded smoke suite (an override).
//
// Contracts beyond "no crash, no sanitizer report":
//  - ParseSuite refuses with std::invalid_argument only (the collector's
//    CLI prints it), reading the file with core::FileError only.
//  - An accepted suite survives SuiteToJson -> ParseSuite unchanged: the
//    effective configuration the manifest records reads back as itself.
#include <filesystem>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "collector/config.h"
#include "core/io/json_io.h"
#include "tests/fuzz/fuzz_util.h"

namespace collector = torchgauge::collector;
namespace core = torchgauge::core;
using nlohmann::json;
using torchgauge::fuzz::ContractBroken;

namespace {

void ParseAndCheck(const json& j, const std::string& source) {
  collector::SuiteConfig s;
  try {
    s = collector::ParseSuite(j, source);
  } catch (const std::invalid_argument&) {
    return;
  } catch (const std::exception& e) {
    ContractBroken(std::string("ParseSuite threw something other than invalid_argument: ") + e.what());
  }
  const json written = collector::SuiteToJson(s);
  try {
    if (collector::SuiteToJson(collector::ParseSuite(written, "roundtrip")) != written) {
      ContractBroken("an accepted suite reads back changed:\n" + written.dump());
    }
  } catch (const std::invalid_argument& e) {
    ContractBroken(std::string("an accepted suite does not read back: ") + e.what() + "\n" + written.dump());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = torchgauge::fuzz::ScratchDir() / "suite.json";
  static const json smoke = collector::EmbeddedSuiteJson("smoke");
  torchgauge::fuzz::WriteBytes(file, data, size);
  json j;
  try {
    j = core::ReadJsonFile(file);
  } catch (const core::FileError&) {
    return 0;
  } catch (const std::exception& e) {
    ContractBroken(std::string("ReadJsonFile threw something other than FileError: ") + e.what());
  }
  ParseAndCheck(j, file.string());
  ParseAndCheck(collector::MergeConfig(smoke, j), file.string());
  return 0;
}
