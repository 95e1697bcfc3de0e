// Hidden models that exercise the harness rather than PyTorch: a tiny
// well-behaved MLP for fast end-to-end tests; models that crash, hang,
// throw and exhaust memory, so that tests can check each failure status is
// recorded while the rest of a suite completes; test_drift, whose steps slow
// down as it runs (the paired pass's interleaving test); test_null, whose step
// does nothing (its median is the harness's own cost per step, as loadgen's
// null SUT measures it); and test_gpu_phases, whose step has a known idle,
// copy and compute phase; test_compiler_breaks, whose forward runs eagerly
// but throws while a compiler traces it (a compiler that breaks on a model);
// test_nan, whose output is NaN (the collector's check of what the steps
// computed).
#include "models/test_models.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <stdexcept>
#include <thread>

#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/cuda.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include "models/workload.h"

namespace torchgauge::models {
namespace {

struct TinyMlpImpl : torch::nn::Module {
  TinyMlpImpl()
      : fc1(register_module("fc1", torch::nn::Linear(64, 128))),
        fc2(register_module("fc2", torch::nn::Linear(128, 10))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1, fc2;
};
TORCH_MODULE(TinyMlp);

enum class Misbehaviour { kNone, kCrash, kHang, kThrow, kOom, kBreaksCompiler, kNonFinite };

class TestWorkload : public LossWorkload {
 public:
  TestWorkload(const WorkloadOptions& opt, Misbehaviour how) : how_(how) {
    net_->to(opt.device);
    inputs_["x"] = torch::randn({opt.batch_size, 64}, torch::TensorOptions(opt.device));
    inputs_["target"] = torch::randint(0, 10, {opt.batch_size}, torch::TensorOptions(opt.device).dtype(torch::kLong));
    samples_per_step_ = opt.batch_size;
    optimizer_ = std::make_unique<torch::optim::SGD>(net_->parameters(), torch::optim::SGDOptions(0.01));
  }
  torch::nn::Module& net() override { return *net_; }
  torch::Tensor Forward() override {
    Misbehave();
    auto out = net_->forward(inputs_["x"]);
    return how_ == Misbehaviour::kNonFinite ? out * std::nan("") : out;
  }
  torch::Tensor Loss(const torch::Tensor& logits) override {
    return torch::nn::functional::cross_entropy(logits, inputs_["target"]);
  }

 private:
  void Misbehave() {
    switch (how_) {
      case Misbehaviour::kNone:
      case Misbehaviour::kNonFinite:
        return;
      case Misbehaviour::kCrash:
        std::raise(SIGKILL);
        return;
      case Misbehaviour::kHang:
        for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
      case Misbehaviour::kThrow:
        throw std::runtime_error("test_throw: deliberate failure inside the step");
      case Misbehaviour::kBreaksCompiler:
        if (torch::jit::tracer::isTracing()) {
          throw std::runtime_error("test_compiler_breaks: deliberate failure while being traced");
        }
        return;
      case Misbehaviour::kOom: {
        // 2^50 floats (4 PiB) cannot be allocated on any machine.
        auto t = torch::empty({int64_t{1} << 50}, torch::TensorOptions(inputs_["x"].device()));
        (void)t;
        return;
      }
    }
  }
  Misbehaviour how_;
  TinyMlp net_;
};

// test_drift: test_tiny whose every step (eager or compiled) first sleeps
// kDriftBaseMs x kDriftGrowth ^ (steps so far in this process), a machine or
// process slowing down as it runs (the exponent stops at kDriftMaxSteps, so a
// long run stays bounded). The growth is by a factor per step, so ten steps
// apart always means the same ratio (1.08^10 = 2.16), however many steps came
// before. Timed eager against compiled in one process, interleaving gives a
// speedup near 1; every eager step before every compiled one makes the
// compiled side look about twice as slow. The sleeps are tens of
// milliseconds long (20 ms growing to about 230 ms over a 32-step run) so that
// a loaded machine's scheduling delays, a few milliseconds per wake-up, stay
// small beside them: at 3 ms, two busy loops on a 2-core machine turned
// back to back's 0.43 into 0.79-0.94.
constexpr double kDriftBaseMs = 20.0;
constexpr double kDriftGrowth = 1.08;
constexpr int64_t kDriftMaxSteps = 64;
class DriftWorkload : public TestWorkload {
 public:
  using TestWorkload::TestWorkload;
  void Step(Mode mode) override {
    const double ms = kDriftBaseMs * std::pow(kDriftGrowth, static_cast<double>(std::min(steps_, kDriftMaxSteps)));
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
    ++steps_;
    TestWorkload::Step(mode);
  }

 private:
  int64_t steps_ = 0;
};

// test_null: a step that does nothing at all, in either mode, so that the
// collector's median for it is what the harness itself adds around every
// step (tests/harness_overhead_bench.cc).
class NullWorkload : public Workload {
 public:
  explicit NullWorkload(const WorkloadOptions& opt) {
    inputs_["x"] = torch::zeros({1}, torch::TensorOptions(opt.device));
    samples_per_step_ = 1;
  }
  torch::nn::Module& net() override { return net_; }
  torch::Tensor Forward() override { return inputs_["x"]; }
  torch::Tensor TrainStep() override { return inputs_["x"]; }
  void Step(Mode) override {}
  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string("test_null has no computation to compile");
  }

 private:
  torch::nn::Module net_;
};

// test_gpu_phases (eval only): each step waits for the device, busy-waits
// on the host for kHostMs (the device idles), copies kCopyFloats from pinned
// host memory to the device (data movement), then runs kMatmuls matrix
// products (active). On CPU the same phases run on the host.
class GpuPhasesWorkload : public Workload {
 public:
  explicit GpuPhasesWorkload(const WorkloadOptions& opt) : device_(opt.device) {
    using namespace gpu_phases;
    auto dev = torch::TensorOptions(opt.device);
    host_ = torch::rand({kCopyFloats}, torch::TensorOptions().pinned_memory(opt.device.is_cuda()));
    inputs_["buffer"] = torch::empty({kCopyFloats}, dev);
    inputs_["a"] = torch::randn({kN, kN}, dev);
    inputs_["b"] = torch::randn({kN, kN}, dev);
    samples_per_step_ = 1;
  }
  torch::nn::Module& net() override { return net_; }
  torch::Tensor Forward() override {
    using namespace gpu_phases;
    if (device_.is_cuda()) torch::cuda::synchronize();
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(kHostMs);
    while (std::chrono::steady_clock::now() < until) {
    }
    inputs_["buffer"].copy_(host_);
    torch::Tensor out;
    for (int i = 0; i < kMatmuls; ++i) out = torch::mm(inputs_["a"], inputs_["b"]);
    return out;
  }
  torch::Tensor TrainStep() override { throw std::logic_error("test_gpu_phases is eval only"); }
  std::optional<std::string> CompiledForwardUnsupported(Mode) const override {
    return std::string("its host wait is a phase of the step, and a traced graph would drop it");
  }
  std::optional<double> AnalyticFlops(Mode) const override {
    using namespace gpu_phases;
    return 2.0 * kN * kN * kN * kMatmuls;
  }

 private:
  torch::Device device_;
  torch::Tensor host_;
  torch::nn::Module net_;
};

ModelInfo Make(const std::string& id, Misbehaviour how) {
  ModelInfo info;
  info.id = id;
  info.paper_name = id;
  info.domain = Domain::kTest;
  info.task = "harness test";
  info.reference = "none (harness test model)";
  info.default_batch = {8, 8};
  info.smoke_batch = {8, 8};
  info.hidden = true;
  info.create = [how](const WorkloadOptions& opt) { return std::make_unique<TestWorkload>(opt, how); };
  return info;
}

}  // namespace

void AddTestModels(std::vector<ModelInfo>& out) {
  out.push_back(Make("test_tiny", Misbehaviour::kNone));
  out.push_back(Make("test_crash", Misbehaviour::kCrash));
  out.push_back(Make("test_hang", Misbehaviour::kHang));
  out.push_back(Make("test_throw", Misbehaviour::kThrow));
  out.push_back(Make("test_oom", Misbehaviour::kOom));
  out.push_back(Make("test_compiler_breaks", Misbehaviour::kBreaksCompiler));
  out.push_back(Make("test_nan", Misbehaviour::kNonFinite));
  ModelInfo drift = Make("test_drift", Misbehaviour::kNone);
  drift.create = [](const WorkloadOptions& opt) { return std::make_unique<DriftWorkload>(opt, Misbehaviour::kNone); };
  out.push_back(std::move(drift));
  ModelInfo null_model = Make("test_null", Misbehaviour::kNone);
  null_model.task = "harness test: a step that does nothing";
  null_model.default_batch = {1, 1};
  null_model.smoke_batch = {1, 1};
  null_model.create = [](const WorkloadOptions& opt) { return std::make_unique<NullWorkload>(opt); };
  out.push_back(std::move(null_model));
  ModelInfo phases = Make(gpu_phases::kModelId, Misbehaviour::kNone);
  phases.task = "harness test: known idle, copy and compute phases";
  phases.default_batch = {1, 1};
  phases.smoke_batch = {1, 1};
  phases.supports_train = false;
  phases.unsupported_reason = "test_gpu_phases measures inference-style phases only";
  phases.create = [](const WorkloadOptions& opt) { return std::make_unique<GpuPhasesWorkload>(opt); };
  out.push_back(phases);
}

}  // namespace torchgauge::models
