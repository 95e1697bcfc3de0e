#include "reporter/load.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/hash.h"
#include "core/json_io.h"
#include "core/layout.h"
#include "reporter/parallel.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace torchgauge::reporter {

std::string Problem::ToString() const {
  std::string out = file;
  if (!field.empty()) out += ": field '" + field + "'";
  return out + ": " + message;
}

bool Problem::operator<(const Problem& o) const {
  return std::tie(file, field, message) < std::tie(o.file, o.field, o.message);
}

size_t LoadedResults::ProblemCount() const {
  size_t n = problems.size();
  for (const auto& b : builds) n += b.problems.size();
  return n;
}

namespace {

std::string JoinMessages(const std::vector<Problem>& problems) {
  std::string out = std::to_string(problems.size()) + " problem(s) in the results (--strict):";
  for (const auto& p : problems) out += "\n  " + p.ToString();
  return out;
}

Problem FromFileError(const core::FileError& e) {
  // FileError's what() is "file: field 'x': message"; keep the parts apart.
  std::string msg = e.what();
  std::string prefix = e.file().string();
  if (!e.field().empty()) prefix += ": field '" + e.field() + "'";
  prefix += ": ";
  if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
  return {e.file().string(), e.field(), msg};
}

// Reads a whole file; faster than iostreams for many small files.
std::string ReadAll(const fs::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw core::FileError(path, "", std::string("cannot open: ") + std::strerror(errno));
  std::string out;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      throw core::FileError(path, "", std::string("read failed: ") + std::strerror(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

json ParseFile(const fs::path& path) {
  std::string text = ReadAll(path);
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    // Parse again with exceptions for the position and reason.
    try {
      (void)json::parse(text);
    } catch (const json::exception& e) {
      // Not only parse_error: a number too large for a double (1e999) is out_of_range.
      throw core::FileError(path, "", std::string("not valid JSON (truncated or malformed): ") + e.what());
    }
    throw core::FileError(path, "", "not valid JSON");
  }
  return j;
}

std::string Str(const json& j, const char* key, const fs::path& file, const std::string& parent, bool required) {
  std::string name = parent.empty() ? key : parent + "." + key;
  if (!j.contains(key) || j.at(key).is_null()) {
    if (required) throw core::FileError(file, name, "missing required field");
    return "";
  }
  if (!j.at(key).is_string()) throw core::FileError(file, name, "must be a string");
  return j.at(key).get<std::string>();
}

const json& Obj(const json& j, const char* key, const fs::path& file) {
  if (!j.contains(key)) throw core::FileError(file, key, "missing required field");
  if (!j.at(key).is_object()) throw core::FileError(file, key, "must be an object");
  return j.at(key);
}

void NonNegative(double v, const fs::path& file, const std::string& field) {
  if (!(v >= 0)) throw core::FileError(file, field, "must be >= 0");
}
template <typename T>
void NonNegative(const std::optional<T>& v, const fs::path& file, const std::string& field) {
  if (v) NonNegative(static_cast<double>(*v), file, field);
}

void CheckRanges(const core::RunResult& r, const fs::path& file) {
  if (r.timing) {
    const auto& t = *r.timing;
    for (size_t i = 0; i < t.samples_ms.size(); ++i) {
      NonNegative(t.samples_ms[i], file, "timing.samples_ms[" + std::to_string(i) + "]");
    }
    NonNegative(t.median_ms, file, "timing.median_ms");
    NonNegative(t.min_ms, file, "timing.min_ms");
    NonNegative(t.max_ms, file, "timing.max_ms");
    NonNegative(t.mean_ms, file, "timing.mean_ms");
    NonNegative(t.stdev_ms, file, "timing.stdev_ms");
    NonNegative(t.iqr_ms, file, "timing.iqr_ms");
    NonNegative(t.cov, file, "timing.cov");
    NonNegative(t.throughput_per_s, file, "timing.throughput_per_s");
    if (t.repetitions < 1) throw core::FileError(file, "timing.repetitions", "must be >= 1");
    if (t.clock != "steady_clock" && t.clock != "cuda_event") {
      throw core::FileError(file, "timing.clock", "must be steady_clock or cuda_event");
    }
  }
  if (r.memory) {
    NonNegative(r.memory->cpu_peak_rss_bytes, file, "memory.cpu_peak_rss_bytes");
    NonNegative(r.memory->gpu_peak_allocated_bytes, file, "memory.gpu_peak_allocated_bytes");
    NonNegative(r.memory->gpu_peak_reserved_bytes, file, "memory.gpu_peak_reserved_bytes");
  }
  if (r.gpu_breakdown) {
    const auto& g = *r.gpu_breakdown;
    if (g.iterations < 1) throw core::FileError(file, "gpu_breakdown.iterations", "must be >= 1");
    NonNegative(g.wall_ms, file, "gpu_breakdown.wall_ms");
    NonNegative(g.active_ms, file, "gpu_breakdown.active_ms");
    NonNegative(g.data_movement_ms, file, "gpu_breakdown.data_movement_ms");
    NonNegative(g.idle_ms, file, "gpu_breakdown.idle_ms");
    NonNegative(g.kernel_count, file, "gpu_breakdown.kernel_count");
    const std::pair<double, const char*> fractions[] = {{g.active_fraction, "gpu_breakdown.active_fraction"},
                                                        {g.data_movement_fraction, "gpu_breakdown.data_movement_fraction"},
                                                        {g.idle_fraction, "gpu_breakdown.idle_fraction"}};
    for (const auto& [v, name] : fractions) {
      if (!(v >= 0 && v <= 1)) throw core::FileError(file, name, "must be within [0, 1]");
    }
    for (size_t i = 0; i < g.top_kernels.size(); ++i) {
      NonNegative(g.top_kernels[i].total_ms, file, "gpu_breakdown.top_kernels[" + std::to_string(i) + "].total_ms");
    }
  }
  if (r.flops) {
    NonNegative(r.flops->profiler_flops_per_iter, file, "flops.profiler_flops_per_iter");
    NonNegative(r.flops->analytic_flops_per_iter, file, "flops.analytic_flops_per_iter");
    NonNegative(r.flops->achieved_tflops_profiler, file, "flops.achieved_tflops_profiler");
    NonNegative(r.flops->achieved_tflops_analytic, file, "flops.achieved_tflops_analytic");
  }
}

struct RunJob {
  fs::path file;
  size_t build = 0, platform = 0;
  std::optional<core::RunResult> result;
  std::optional<Problem> problem;
};

}  // namespace

StrictError::StrictError(std::vector<Problem> problems)
    : std::runtime_error(JoinMessages(problems)), problems_(std::move(problems)) {}

Manifest ManifestFromJson(const json& j, const fs::path& file) {
  core::CheckSchema(j, file, "torchgauge.manifest", core::kManifestSchemaVersion);
  Manifest m;
  m.present = true;
  m.build_id = Str(j, "build_id", file, "", true);
  m.platform_id = Str(j, "platform_id", file, "", true);
  if (!core::IsSafeId(m.build_id)) throw core::FileError(file, "build_id", "not a safe id");
  if (!core::IsSafeId(m.platform_id)) throw core::FileError(file, "platform_id", "not a safe id");
  m.started_at = Str(j, "started_at", file, "", true);
  m.finished_at = Str(j, "finished_at", file, "", false);
  const json& col = Obj(j, "collector", file);
  m.collector_version = Str(col, "version", file, "collector", true);
  m.git_sha = Str(col, "git_sha", file, "collector", true);
  const json& lt = Obj(j, "libtorch", file);
  m.libtorch_version = Str(lt, "version", file, "libtorch", true);
  m.cuda_runtime = Str(lt, "cuda_runtime", file, "libtorch", false);
  m.hip_runtime = Str(lt, "hip_runtime", file, "libtorch", false);
  const json& dev = Obj(j, "device", file);
  m.vendor = Str(dev, "vendor", file, "device", true);
  if (m.vendor != "NVIDIA" && m.vendor != "AMD" && m.vendor != "CPU") {
    throw core::FileError(file, "device.vendor", "must be NVIDIA, AMD or CPU");
  }
  m.device_name = Str(dev, "name", file, "device", true);
  m.driver = Str(dev, "driver", file, "device", false);
  const json& cpu = Obj(j, "cpu", file);
  m.cpu_model = Str(cpu, "model", file, "cpu", true);
  if (!cpu.contains("logical_cores") || !cpu.at("logical_cores").is_number_integer() ||
      cpu.at("logical_cores").get<int64_t>() < 1) {
    throw core::FileError(file, "cpu.logical_cores", "must be an integer >= 1");
  }
  m.logical_cores = cpu.at("logical_cores").get<int>();
  const json& host = Obj(j, "host", file);
  m.hostname = Str(host, "hostname", file, "host", true);
  m.os = Str(host, "os", file, "host", true);
  const json& suite = Obj(j, "suite", file);
  m.suite = Str(suite, "name", file, "suite", true);
  if (j.contains("interrupted")) {
    if (!j.at("interrupted").is_boolean()) throw core::FileError(file, "interrupted", "must be a boolean");
    m.interrupted = j.at("interrupted").get<bool>();
  }
  return m;
}

core::RunResult LoadRunFile(const fs::path& file, const std::string& build_id, const std::string& platform_id) {
  json j = ParseFile(file);
  core::RunResult r;
  try {
    r = core::RunResultFromJson(j, file);
  } catch (const core::FileError&) {
    throw;
  } catch (const std::exception& e) {
    throw core::FileError(file, "", std::string("does not match the run result schema: ") + e.what());
  }
  if (r.build_id != build_id) {
    throw core::FileError(file, "build_id", "'" + r.build_id + "' does not match its directory '" + build_id + "'");
  }
  if (r.platform_id != platform_id) {
    throw core::FileError(file, "platform_id",
                          "'" + r.platform_id + "' does not match its directory '" + platform_id + "'");
  }
  if (!core::IsSafeId(r.model.id)) throw core::FileError(file, "model.id", "not a safe id");
  core::RunKey key{r.model.id, r.mode, r.backend, r.precision};
  if (file.filename().string() != key.FileStem() + ".json") {
    throw core::FileError(file, "", "file name does not match its run key (expected " + key.FileStem() + ".json)");
  }
  CheckRanges(r, file);
  return r;
}

bool BuildBefore(const std::string& started_a, const std::string& id_a, const std::string& started_b,
                 const std::string& id_b) {
  return std::tie(started_a, id_a) < std::tie(started_b, id_b);
}

std::vector<std::string> ListBuildIds(const fs::path& root, std::vector<Problem>* problems) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!it->is_directory(ec)) continue;
    if (name.starts_with(".")) continue;
    if (!core::IsSafeId(name)) {
      if (problems) problems->push_back({it->path().string(), "", "directory name is not a safe build id; skipped"});
      continue;
    }
    ids.push_back(name);
  }
  if (ec && problems) problems->push_back({root.string(), "", "cannot list: " + ec.message()});
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<std::string> ListPlatformIds(const fs::path& root, const std::string& build_id,
                                         std::vector<Problem>* problems) {
  std::vector<std::string> ids;
  std::error_code ec;
  for (fs::directory_iterator it(root / build_id, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (!it->is_directory(ec) || name.starts_with(".")) continue;
    if (!core::IsSafeId(name)) {
      if (problems) problems->push_back({it->path().string(), "", "directory name is not a safe platform id; skipped"});
      continue;
    }
    ids.push_back(name);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::vector<fs::path> ListRunFiles(const fs::path& platform_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (fs::directory_iterator it(core::RunsDir(platform_dir), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().extension() == ".json" && !it->path().filename().string().starts_with(".")) {
      files.push_back(it->path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

namespace {
void AddStat(core::Fingerprint& f, const fs::path& file) {
  f.Add(file.filename().string());
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) {
    f.Add(int64_t{-1}).Add(int64_t{errno});
    return;
  }
  f.Add(static_cast<int64_t>(st.st_size)).Add(static_cast<int64_t>(st.st_ino));
  f.Add(static_cast<int64_t>(st.st_mtim.tv_sec)).Add(static_cast<int64_t>(st.st_mtim.tv_nsec));
}
}  // namespace

std::string InputFingerprint(const fs::path& root, const std::string& build_id) {
  core::Fingerprint f;
  f.Add(build_id);
  std::vector<Problem> problems;
  for (const auto& pid : ListPlatformIds(root, build_id, &problems)) {
    fs::path dir = core::PlatformDir(root, build_id, pid);
    f.Add(pid);
    AddStat(f, core::ManifestPath(dir));
    std::vector<fs::path> files = ListRunFiles(dir);
    f.Add(static_cast<int64_t>(files.size()));
    for (const auto& file : files) AddStat(f, file);
  }
  // Unsafe names are reported on the build page, so they are inputs too.
  for (const auto& p : problems) f.Add(p.file);
  return f.Hex();
}

LoadedResults LoadResults(const fs::path& root, const LoadOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw std::runtime_error(root.string() + ": not a results directory");
  LoadedResults out;
  std::vector<RunJob> jobs;
  for (const auto& build_id : ListBuildIds(root, &out.problems)) {
    if (!options.only_builds.empty() && !options.only_builds.count(build_id)) continue;
    BuildResults b;
    b.id = build_id;
    for (const auto& pid : ListPlatformIds(root, build_id, &b.problems)) {
      PlatformResults p;
      fs::path dir = core::PlatformDir(root, build_id, pid);
      fs::path mpath = core::ManifestPath(dir);
      try {
        p.manifest = ManifestFromJson(ParseFile(mpath), mpath);
        if (p.manifest.build_id != build_id) throw core::FileError(mpath, "build_id", "does not match its directory");
        if (p.manifest.platform_id != pid) throw core::FileError(mpath, "platform_id", "does not match its directory");
      } catch (const core::FileError& e) {
        p.problems.push_back(FromFileError(e));
        p.manifest = Manifest{};
      } catch (const std::exception& e) {
        p.problems.push_back({mpath.string(), "", e.what()});
        p.manifest = Manifest{};
      }
      p.manifest.build_id = build_id;
      p.manifest.platform_id = pid;
      for (auto& f : ListRunFiles(dir)) jobs.push_back({f, out.builds.size(), b.platforms.size(), {}, {}});
      b.platforms.push_back(std::move(p));
    }
    out.builds.push_back(std::move(b));
  }

  // Parse in parallel; each job writes only its own slot.
  ParallelFor(jobs.size(), ThreadCount(options.threads, jobs.size()), [&](size_t i, int) {
    RunJob& job = jobs[i];
    const auto& b = out.builds[job.build];
    try {
      job.result = LoadRunFile(job.file, b.id, b.platforms[job.platform].manifest.platform_id);
    } catch (const core::FileError& e) {
      job.problem = FromFileError(e);
    } catch (const std::exception& e) {
      job.problem = Problem{job.file.string(), "", e.what()};
    }
  });

  for (auto& job : jobs) {
    auto& p = out.builds[job.build].platforms[job.platform];
    if (job.result) p.runs.push_back(std::move(*job.result));
    if (job.problem) p.problems.push_back(std::move(*job.problem));
  }
  for (auto& b : out.builds) {
    for (auto& p : b.platforms) {
      std::sort(p.runs.begin(), p.runs.end(), [](const core::RunResult& x, const core::RunResult& y) {
        return std::tie(x.model.id, x.mode, x.backend, x.precision, x.batch_size) <
               std::tie(y.model.id, y.mode, y.backend, y.precision, y.batch_size);
      });
      std::sort(p.problems.begin(), p.problems.end());
      b.problems.insert(b.problems.end(), p.problems.begin(), p.problems.end());
      if (p.manifest.present && (b.started_at.empty() || p.manifest.started_at < b.started_at)) {
        b.started_at = p.manifest.started_at;
      }
    }
    std::sort(b.problems.begin(), b.problems.end());
  }
  std::sort(out.builds.begin(), out.builds.end(), [](const BuildResults& a, const BuildResults& b) {
    return BuildBefore(a.started_at, a.id, b.started_at, b.id);
  });
  std::sort(out.problems.begin(), out.problems.end());
  if (options.strict && out.ProblemCount() > 0) {
    std::vector<Problem> all = out.problems;
    for (const auto& b : out.builds) all.insert(all.end(), b.problems.begin(), b.problems.end());
    throw StrictError(std::move(all));
  }
  return out;
}

}  // namespace torchgauge::reporter
