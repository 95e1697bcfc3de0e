#include "core/io/hash.h"

#include <doctest/doctest.h>

#include <fstream>

namespace fs = std::filesystem;
using torchgauge::core::Fingerprint;

TEST_CASE("fingerprint: FNV-1a reference value, field boundaries, files") {
  // FNV-1a 64 of nothing is its offset basis. Add("a") hashes the length
  // (1 as 8 little-endian bytes) then 'a'; the value was computed
  // independently in Python from the published FNV-1a constants.
  CHECK(Fingerprint().Hex() == "cbf29ce484222325");
  CHECK(Fingerprint().Add("a").Hex() == "529a4ddc8ff56bbf");
  CHECK(Fingerprint().Add("ab").Add("c").value() != Fingerprint().Add("a").Add("bc").value());
  CHECK(Fingerprint().Add("x").value() == Fingerprint().Add("x").value());
  CHECK(Fingerprint().Add(int64_t{1}).value() != Fingerprint().Add(int64_t{2}).value());
  CHECK(Fingerprint().Add(0.5).value() != Fingerprint().Add(0.25).value());
  CHECK(Fingerprint().Hex().size() == 16);

  fs::path dir = fs::temp_directory_path() / "torchgauge_hash_test";
  fs::create_directories(dir);
  std::ofstream(dir / "f") << std::string(200000, 'q');
  uint64_t a = Fingerprint().AddFile(dir / "f").value();
  std::ofstream(dir / "f") << std::string(199999, 'q') << 'r';
  CHECK(Fingerprint().AddFile(dir / "f").value() != a);
  CHECK_THROWS_WITH_AS(Fingerprint().AddFile(dir / "missing"), doctest::Contains("missing: cannot read"),
                       std::runtime_error);
  fs::remove_all(dir);
}
