#include "core/io/json_io.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

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

TEST_CASE("the first line of a file, without trailing blanks or carriage return") {
  InTempDir tmp;
  WriteFileAtomic("hash", "0123abcd \r\nsecond line\n");
  CHECK(ReadFirstLine("hash") == "0123abcd");
  WriteFileAtomic("empty", "");
  CHECK(ReadFirstLine("empty").empty());
  CHECK(ReadFirstLine("missing").empty());
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
  CHECK(ReadJsonFile("big.json", JsonKind::kRunResult).at("pad").get<std::string>().size() ==
        SizeCap(JsonKind::kManifest));
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

// ParseJsonText reads with simdjson and falls back to nlohmann for what
// simdjson refuses; either way it must accept exactly what
// nlohmann::json::parse accepts and give the same tree, number types
// included (dump() shows 1 and 1.0 apart, and -0.0).
TEST_CASE("ParseJsonText accepts what nlohmann accepts and gives the same tree") {
  const std::vector<std::string> texts = {
      R"({"b": [1, -1, 0, -0, 1.0, -0.0, 0.1e1, 1E-400, 4.9e-324, 1.7976931348623157e308], "a": null})",
      R"({"a": 1, "a": 2, "b": {"x": true, "x": false}})",                    // a repeated key: the last wins
      "9223372036854775808", "18446744073709551615",                          // unsigned beyond int64
      "18446744073709551616", "-9223372036854775809",                         // beyond 64 bits: a double in nlohmann
      R"("\u0000 \u00e9 \ud83d\ude00 \" \\ \/ \b\f\n\r\t")", "\"\xc3\xa9\"",  // escapes, a surrogate pair, UTF-8
      " \n\t[ ] ", "{}", "[[[[[[[[[[]]]]]]]]]]", "true", "false", "null", "\"\"",
      std::string(1100, '[') + std::string(1100, ']'),  // deeper than simdjson's 1024
      // Refused by both:
      "", " ", "1e999", "[1,]", "{\"a\" 1}", "1 2", "tru", "\"\\ud800\"", "\"\\udc00\"", "\"\xc3\x28\"", "\"a\tb\"",
      "01", "{\"a\":1", "[\"a\"]]", "NaN", "-", "1.", ".5", "\"\\x41\""};
  for (const std::string& text : texts) {
    CAPTURE(text.substr(0, 60));
    const nlohmann::json want = nlohmann::json::parse(text, nullptr, false);
    const nlohmann::json got = ParseJsonText(text);
    CHECK(got.is_discarded() == want.is_discarded());
    if (want.is_discarded() || got.is_discarded()) continue;
    CHECK(got == want);
    CHECK(got.dump() == want.dump());
    CHECK(got.type() == want.type());
  }
  // A real run result file, nested objects and arrays of every type.
  const std::string run = R"({"kind":"torchgauge.run","schema_version":1,"timing":{"samples_ms":[2032.656,2026.6372],
    "process_medians_ms":[2032.656],"repetitions":10,"cov":0.009},"operators":{"count":2,"names":["aten::mm","aten::t"]},
    "memory":{"cpu_peak_rss_bytes":790976437,"gpu_peak_allocated_bytes":null},"settings":{"smoke":false,"seed":0}})";
  CHECK(ParseJsonText(run).dump() == nlohmann::json::parse(run).dump());
}
