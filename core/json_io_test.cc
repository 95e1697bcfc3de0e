#include "core/json_io.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;
using namespace torchgauge::core;

namespace {
std::string Slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
// Runs the body with a fresh temporary directory as the working directory.
struct InTempDir {
  fs::path old = fs::current_path();
  fs::path dir = fs::temp_directory_path() / ("tg_json_io_" + std::to_string(::getpid()));
  InTempDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::current_path(dir);
  }
  ~InTempDir() {
    fs::current_path(old);
    fs::remove_all(dir);
  }
};
}  // namespace

TEST_CASE("atomic writes create parents, replace files and accept a bare file name") {
  InTempDir tmp;
  WriteFileAtomic("bare.md", "one\n");  // no parent directory: the working directory
  CHECK(Slurp("bare.md") == "one\n");
  WriteFileAtomic("bare.md", "two\n");
  CHECK(Slurp("bare.md") == "two\n");
  WriteFileAtomic(fs::path("a") / "b" / "c.json", "{}\n");
  CHECK(Slurp(fs::path("a") / "b" / "c.json") == "{}\n");
  // No temporary file is left behind.
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(".")) n += e.is_regular_file();
  CHECK(n == 2);
}

TEST_CASE("reading a missing or malformed file names the file") {
  InTempDir tmp;
  CHECK_THROWS_WITH_AS(ReadJsonFile("missing.json"), doctest::Contains("missing.json"), FileError);
  WriteFileAtomic("bad.json", "{\"a\": ");
  CHECK_THROWS_WITH_AS(ReadJsonFile("bad.json"), doctest::Contains("bad.json"), FileError);
  // Found by the fuzzer (tests/fuzz/corpus/*/regress-number-overflow.json): a
  // number no double holds is nlohmann's out_of_range, not a parse_error.
  WriteFileAtomic("huge.json", "{\"repeat\": 2e3083}");
  CHECK_THROWS_WITH_AS(ReadJsonFile("huge.json"), doctest::Contains("huge.json"), FileError);
}

TEST_CASE("a file over its kind's size cap is refused with its size and the cap") {
  InTempDir tmp;
  CHECK(SizeCap(JsonKind::kManifest) < SizeCap(JsonKind::kRunResult));
  // Valid JSON just over the manifest cap: fine as a run result, refused as a manifest.
  std::string big = "{\"pad\": \"" + std::string(SizeCap(JsonKind::kManifest), 'x') + "\"}";
  WriteFileAtomic("big.json", big);
  CHECK(ReadJsonFile("big.json", JsonKind::kRunResult).at("pad").get<std::string>().size() == SizeCap(JsonKind::kManifest));
  try {
    (void)ReadJsonFile("big.json", JsonKind::kManifest);
    FAIL("expected a FileError");
  } catch (const FileError& e) {
    const std::string what = e.what();
    CHECK(what.find("big.json") != std::string::npos);
    CHECK(what.find(std::to_string(big.size()) + " bytes") != std::string::npos);
    CHECK(what.find("1.0 MiB cap for a manifest file") != std::string::npos);
  }
  // A directory is not a file.
  fs::create_directories("dir.json");
  CHECK_THROWS_WITH_AS(ReadJsonFile("dir.json"), doctest::Contains("dir.json"), FileError);
}
