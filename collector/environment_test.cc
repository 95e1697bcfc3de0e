// The LibTorch build's identity (git commit, build version, CUDA/HIP build,
// origin) read from the files beside its libraries: a fake wheel layout and a
// fake C++ distribution, and the LibTorch this test runs with.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "collector/environment.h"
#include "core/io/remove_tree.h"
#include "models/torch_compat.h"

using namespace torchgauge;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path dir;
  explicit TempDir(const std::string& name) : dir(fs::temp_directory_path() / ("tg-envtest-" + name)) {
    core::RemoveTree(dir);
    fs::create_directories(dir / "lib");
  }
  ~TempDir() { core::RemoveTree(dir); }
  void Write(const std::string& file, const std::string& text) const { std::ofstream(dir / file) << text; }
};

}  // namespace

TEST_CASE("a wheel's torch/version.py names the commit, the build version and its CUDA") {
  TempDir t("wheel");
  t.Write("version.py",
          "from typing import Optional\n"
          "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip']\n"
          "__version__ = '2.15.0+cu132'\n"
          "debug = False\n"
          "cuda: Optional[str] = '13.2'\n"
          "git_version = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678'\n"
          "hip: Optional[str] = None\n");
  const auto id = collector::ReadTorchBuildIdentity(t.dir / "lib");
  CHECK(id["git_commit"] == "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678");
  CHECK(id["build_version"] == "2.15.0+cu132");
  CHECK(id["cuda_build"] == "13.2");
  CHECK(id["hip_build"].is_null());
  CHECK(id["origin"]["kind"] == "python-package");
  CHECK(id["origin"]["path"] == t.dir.string());
}

TEST_CASE("a LibTorch C++ distribution's build-hash and build-version are read") {
  TempDir t("zip");
  t.Write("build-hash", "0123456789abcdef0123456789abcdef01234567\n");
  t.Write("build-version", "2.14.1+cu130\n");
  const auto id = collector::ReadTorchBuildIdentity(t.dir / "lib");
  CHECK(id["git_commit"] == "0123456789abcdef0123456789abcdef01234567");
  CHECK(id["build_version"] == "2.14.1+cu130");
  CHECK(id["cuda_build"] == "13.0");
  CHECK(id["origin"]["kind"] == "libtorch-distribution");
}

TEST_CASE("a LibTorch with neither file is of unknown origin, with no commit") {
  TempDir t("bare");
  const auto id = collector::ReadTorchBuildIdentity(t.dir / "lib");
  CHECK(id["git_commit"].is_null());
  CHECK(id["build_version"].is_null());
  CHECK(id["origin"]["kind"] == "unknown");
}

TEST_CASE("the LibTorch this test runs with names its commit and its version") {
  const fs::path dir = collector::LoadedLibTorchDir();
  REQUIRE(fs::exists(dir / "libtorch_cpu.so"));
  const auto id = collector::ReadTorchBuildIdentity(dir);
  REQUIRE(id["git_commit"].is_string());
  CHECK(id["git_commit"].get<std::string>().size() == 40);
  const std::string full = compat::CompiledTorchVersion();
  const std::string v = full.substr(0, full.rfind('.') + 1);
  REQUIRE(id["build_version"].is_string());
  CHECK(id["build_version"].get<std::string>().rfind(v, 0) == 0);
}
