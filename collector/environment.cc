#include "collector/environment.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <ATen/Context.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "collector/cuda_support.h"
#include "core/contract/result.h"
#include "core/contract/version.h"
#include "core/io/json_io.h"
#include "core/io/shell.h"
#include "models/torch_compat.h"

namespace torchgauge::collector {

using nlohmann::json;

namespace {

std::string ReadProcField(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto pos = line.find(':');
      if (pos == std::string::npos) continue;
      std::string v = line.substr(pos + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  }
  return "";
}

// What a read-only query command prints, without trailing blanks; empty if
// it is missing or fails.
std::string RunCommand(const std::string& cmd) {
  std::string out = core::RunCapture(cmd).output;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string Version(long v, bool cudnn) {
  if (v <= 0) return "";
  // CUDA runtime: 13000 -> 13.0 ; cuDNN 9.x: 91000 -> 9.10.0
  std::ostringstream os;
  if (cudnn)
    os << v / 10000 << "." << (v % 10000) / 100 << "." << v % 100;
  else
    os << v / 1000 << "." << (v % 1000) / 10;
  return os.str();
}

std::string Slug(std::string s) {
  std::string out;
  for (char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) || (c == '_' && !out.empty())) {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

std::string Digits(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::isdigit(static_cast<unsigned char>(c))) out += c;
  }
  return out;
}

int64_t StatusKb(const char* key) {
  auto v = ReadProcField("/proc/self/status", key);
  if (v.empty()) return -1;
  return std::stoll(v) * 1024;
}

// The value of `name = '...'` (or "...") in a Python file such as
// torch/version.py; "" where absent or not a string literal (None).
std::string PythonStringAssignment(const std::filesystem::path& file, const std::string& name) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) != 0) continue;
    std::string rest = line.substr(name.size());
    // "cuda: Optional[str] = '13.0'" and "git_version = '...'" alike.
    if (rest.empty() || (rest[0] != ' ' && rest[0] != ':' && rest[0] != '=')) continue;
    auto eq = rest.find('=');
    if (eq == std::string::npos) continue;
    auto q = rest.find_first_of("'\"", eq);
    if (q == std::string::npos) return "";
    auto end = rest.find(rest[q], q + 1);
    if (end == std::string::npos) return "";
    return rest.substr(q + 1, end - q - 1);
  }
  return "";
}

json OrNull(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }

}  // namespace

json ReadTorchBuildIdentity(const std::filesystem::path& lib_dir) {
  namespace fs = std::filesystem;
  json id = {{"git_commit", nullptr},
             {"build_version", nullptr},
             {"cuda_build", nullptr},
             {"hip_build", nullptr},
             {"origin", {{"kind", "unknown"}, {"path", lib_dir.empty() ? json(nullptr) : json(lib_dir.string())}}}};
  if (lib_dir.empty()) return id;
  const fs::path top = lib_dir.parent_path();
  std::error_code ec;
  if (const fs::path py = top / "version.py"; fs::is_regular_file(py, ec)) {
    // A Python package (PyPI wheel or a source build): torch/lib/../version.py.
    id["git_commit"] = OrNull(PythonStringAssignment(py, "git_version"));
    id["build_version"] = OrNull(PythonStringAssignment(py, "__version__"));
    id["cuda_build"] = OrNull(PythonStringAssignment(py, "cuda"));
    id["hip_build"] = OrNull(PythonStringAssignment(py, "hip"));
    id["origin"] = {{"kind", "python-package"}, {"path", top.string()}};
  } else if (fs::is_regular_file(top / "build-hash", ec) || fs::is_regular_file(top / "build-version", ec)) {
    // The LibTorch C++ distribution: libtorch/{build-hash,build-version}.
    id["git_commit"] = OrNull(core::ReadFirstLine(top / "build-hash"));
    const std::string bv = core::ReadFirstLine(top / "build-version");
    id["build_version"] = OrNull(bv);
    // "2.15.0+cu130" -> "13.0"; "+cpu" -> none.
    if (auto plus = bv.find("+cu"); plus != std::string::npos && bv.size() > plus + 4) {
      const std::string d = Digits(bv.substr(plus + 3));
      if (d.size() >= 3) id["cuda_build"] = d.substr(0, d.size() - 1) + "." + d.substr(d.size() - 1);
    }
    id["origin"] = {{"kind", "libtorch-distribution"}, {"path", top.string()}};
  }
  return id;
}

std::filesystem::path LoadedLibTorchDir() {
  Dl_info info{};
  // Any function defined in libtorch_cpu.so.
  if (dladdr(reinterpret_cast<void*>(&at::get_num_threads), &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : p.parent_path();
}

bool CudaAvailable() { return torch::cuda::is_available(); }
std::string BestDevice() { return CudaAvailable() ? "cuda" : "cpu"; }

namespace {

json LibTorchInfo(bool rocm) {
  const auto& hooks = at::detail::getCUDAHooks();
  json lt = ReadTorchBuildIdentity(LoadedLibTorchDir());
  lt["version"] = compat::CompiledTorchVersion();
  lt["cuda_available"] = CudaAvailable();
  lt["cuda_runtime"] = nullptr;
  lt["cudnn"] = nullptr;
  lt["hip_runtime"] = nullptr;
  lt["miopen"] = nullptr;
  if (hooks.hasCUDART() && !rocm) {
    lt["cuda_runtime"] = Version(hooks.versionCUDART(), false);
    if (long v = hooks.versionCuDNN(); v > 0) lt["cudnn"] = Version(v, true);
  }
  if (rocm) {
    lt["hip_runtime"] = std::to_string(hooks.versionCUDART());
    if (long v = hooks.versionMIOpen(); v > 0) lt["miopen"] = std::to_string(v);
  }
  return lt;
}

// What the runtime and nvidia-smi/rocm-smi say about the GPU, or the CPU as the device.
json DeviceInfo(const std::string& device, bool rocm) {
  json dev;
  if (device == "cuda" && CudaAvailable()) {
    // Device properties come from the runtime through LibTorch; the driver
    // version and memory from nvidia-smi/rocm-smi when present (read-only).
    dev["vendor"] = rocm ? "AMD" : "NVIDIA";
    std::string name =
        RunCommand(rocm ? "rocm-smi --showproductname 2>/dev/null | grep -m1 'Card series' | sed 's/.*: //'"
                        : "nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null");
    dev["name"] = name.empty() ? (rocm ? "AMD GPU" : "NVIDIA GPU") : name;
    std::string cc = RunCommand("nvidia-smi --query-gpu=compute_cap --format=csv,noheader -i 0 2>/dev/null");
    dev["compute_capability"] = cc.empty() || rocm ? json(nullptr) : json(cc);
    dev["gcn_arch"] = nullptr;
    std::string mem = RunCommand("nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits -i 0 2>/dev/null");
    dev["memory_bytes"] = mem.empty() ? json(nullptr) : json(std::stoll(mem) * 1024 * 1024);
    std::string driver = RunCommand("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null");
    dev["driver"] = driver.empty() ? json(nullptr) : json(driver);
    auto props = CudaProps();
    if (name.empty()) dev["name"] = props.name;
    if (!rocm && cc.empty()) dev["compute_capability"] = props.capability;
    if (rocm) dev["gcn_arch"] = props.arch;
    dev["multiprocessor_count"] = props.multiprocessor_count;
    if (mem.empty()) dev["memory_bytes"] = props.memory_bytes;
  } else {
    dev["vendor"] = "CPU";
    dev["name"] = ReadProcField("/proc/cpuinfo", "model name");
    if (dev["name"] == "") dev["name"] = "unknown CPU";
    dev["compute_capability"] = nullptr;
    dev["gcn_arch"] = nullptr;
    dev["multiprocessor_count"] = nullptr;
    dev["memory_bytes"] = nullptr;
    dev["driver"] = nullptr;
  }
  return dev;
}

json CpuInfo() {
  json cpu;
  cpu["model"] = ReadProcField("/proc/cpuinfo", "model name");
  if (cpu["model"] == "") cpu["model"] = "unknown";
  cpu["logical_cores"] = std::max(1u, std::thread::hardware_concurrency());
  cpu["torch_threads"] = at::get_num_threads();
  auto mem = ReadProcField("/proc/meminfo", "MemTotal");
  cpu["memory_bytes"] = mem.empty() ? json(nullptr) : json(std::stoll(mem) * 1024);
  return cpu;
}

json HostInfo() {
  utsname u{};
  uname(&u);
  char host[256] = {0};
  gethostname(host, sizeof host - 1);
  std::string os = ReadProcField("/etc/os-release", "PRETTY_NAME");
  if (os.empty()) {
    std::ifstream in("/etc/os-release");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("PRETTY_NAME=", 0) == 0) os = line.substr(12);
    }
    os.erase(std::remove(os.begin(), os.end(), '"'), os.end());
  }
  return {{"hostname", host},
          {"os", os.empty() ? std::string(u.sysname) : os},
          {"kernel", std::string(u.release)},
          {"arch", std::string(u.machine)}};
}

}  // namespace

json CollectorIdentity() {
  return {{"version", core::Version()}, {"git_sha", core::GitSha()}, {"compiler", core::Compiler()}};
}

json DescribeEnvironment(const std::string& device) {
  const bool rocm = at::detail::getCUDAHooks().hasROCM();
  json env;
  env["libtorch"] = LibTorchInfo(rocm);
  env["device"] = DeviceInfo(device, rocm);
  env["cpu"] = CpuInfo();
  env["host"] = HostInfo();
  return env;
}

json ReadClocks(const std::string& device) {
  if (device != "cuda") return nullptr;
  std::string q = RunCommand(
      "nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,pstate,power.draw,temperature.gpu "
      "--format=csv,noheader,nounits -i 0 2>/dev/null");
  if (q.empty()) return nullptr;
  std::vector<std::string> f;
  std::stringstream ss(q);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    f.push_back(item);
  }
  if (f.size() < 6) return nullptr;
  auto num = [](const std::string& s) -> json {
    try {
      return std::stod(s);
    } catch (...) {
      return nullptr;
    }
  };
  return {{"sm_clock_mhz", num(f[0])}, {"sm_clock_max_mhz", num(f[1])}, {"mem_clock_mhz", num(f[2])}, {"pstate", f[3]},
          {"power_draw_w", num(f[4])}, {"temperature_c", num(f[5])},    {"at", core::NowUtc()}};
}

std::string AutoPlatformId(const json& env, const core::RunSettings& settings) {
  // Built in steps: GCC 12 reports `"-" + std::string` at -O2
  // (-Wstringop-overflow, a false positive fixed in 13).
  std::string suffix;
  if (settings.threads > 0) {
    suffix = '-';
    suffix += std::to_string(settings.threads);
    suffix += 't';
  }
  // A counted run's figures are instructions, not times; a capped ISA runs
  // other kernels: neither is compared with plain timed runs.
  if (settings.measure == "counted") {
    suffix += "-counted";
  } else if (!settings.cpu_isa.empty()) {
    suffix += '-';
    suffix += settings.cpu_isa;
  }
  const auto& dev = env.at("device");
  if (dev.at("vendor") == "CPU") {
    return "cpu-" + Slug(env.at("host").value("arch", "unknown")) + "-" +
           std::to_string(env.at("cpu").at("logical_cores").get<int>()) + "c" + suffix;
  }
  std::string id = Slug(dev.at("vendor").get<std::string>() + " " + dev.at("name").get<std::string>());
  // The vendor often repeats inside the name ("nvidia-nvidia-h100...").
  const std::string vendor = Slug(dev.at("vendor").get<std::string>());
  if (id.rfind(vendor + "-" + vendor + "-", 0) == 0) id = id.substr(vendor.size() + 1);
  const auto& lt = env.at("libtorch");
  if (lt.at("cuda_runtime").is_string()) id += "-cu" + Digits(lt.at("cuda_runtime").get<std::string>());
  if (lt.at("hip_runtime").is_string()) id += "-rocm";
  return id.substr(0, 100 - suffix.size()) + suffix;
}

std::string AutoBuildId(const json& env) {
  std::string v = env.at("libtorch").at("version");
  const auto& lt = env.at("libtorch");
  if (lt.at("cuda_runtime").is_string()) v += "-cu" + Digits(lt.at("cuda_runtime").get<std::string>());
  std::string date = core::NowUtc().substr(0, 10);
  date.erase(std::remove(date.begin(), date.end(), '-'), date.end());
  return v + "-" + date;
}

int64_t CurrentRssBytes() { return StatusKb("VmRSS"); }
int64_t PeakRssBytes() { return StatusKb("VmHWM"); }

bool ResetPeakRss(const std::string& clear_refs) {
  std::ofstream out(clear_refs);
  if (!out) return false;
  out << "5";
  return static_cast<bool>(out.flush());
}

}  // namespace torchgauge::collector
