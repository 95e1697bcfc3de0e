#include "models/rl/rl_env.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace torchgauge::models {
namespace {

constexpr double kPi = 3.14159265358979323846;

double AngleNormalize(double x) { return std::fmod(std::fmod(x + kPi, 2 * kPi) + 2 * kPi, 2 * kPi) - kPi; }

// dm_control's rewards.tolerance with bounds (0, 0): 1 at zero, falling off
// with distance |x| / margin through a Gaussian (value 0.1 at the margin) or a
// clipped quadratic (value 0 at the margin).
double ToleranceGaussian(double x, double margin) {
  const double scale = std::sqrt(-2.0 * std::log(0.1));
  const double d = std::abs(x) / margin * scale;
  return std::exp(-0.5 * d * d);
}
double ToleranceQuadratic(double x, double margin) {
  const double d = std::abs(x) / margin;
  return std::max(0.0, 1.0 - d * d);
}

}  // namespace

// ---------------------------------------------------------------- Pendulum

void PendulumEnv::Reset() {
  std::uniform_real_distribution<double> angle(-kPi, kPi), speed(-1.0, 1.0);
  theta_ = angle(rng_);
  theta_dot_ = speed(rng_);
}

double PendulumEnv::Step(double normalized_action) {
  const double a = std::clamp(normalized_action, -1.0, 1.0);
  // NormalizeContinuousActionSpace maps [-1, 1] linearly onto [-2, 2].
  const double u = std::clamp(a * kMaxTorque, -kMaxTorque, kMaxTorque);
  const double th = AngleNormalize(theta_);
  const double reward = -(th * th + 0.1 * theta_dot_ * theta_dot_ + 0.001 * u * u);
  double new_theta_dot =
      theta_dot_ + (3.0 * kGravity / (2.0 * kLength) * std::sin(theta_) + 3.0 / (kMass * kLength * kLength) * u) * kDt;
  new_theta_dot = std::clamp(new_theta_dot, -kMaxSpeed, kMaxSpeed);
  theta_ += new_theta_dot * kDt;
  theta_dot_ = new_theta_dot;
  return reward;
}

void PendulumEnv::Observe(float* out) const {
  out[0] = static_cast<float>(std::cos(theta_));
  out[1] = static_cast<float>(std::sin(theta_));
  out[2] = static_cast<float>(theta_dot_);
}

double PendulumEnv::Energy() const {
  const double inertia = kMass * kLength * kLength / 3.0;
  return 0.5 * inertia * theta_dot_ * theta_dot_ + kMass * kGravity * (kLength / 2.0) * std::cos(theta_);
}

// ---------------------------------------------------------------- Cart-pole

void CartpoleSwingupEnv::Reset() {
  // dm_control's swing-up: cart at 0.01 * N(0, 1), pole at pi + 0.01 * N(0, 1),
  // velocities 0.01 * N(0, 1).
  std::normal_distribution<double> n(0.0, 0.01);
  x_ = n(rng_);
  theta_ = kPi + n(rng_);
  x_dot_ = n(rng_);
  theta_dot_ = n(rng_);
}

void CartpoleSwingupEnv::SetState(double x, double x_dot, double theta, double theta_dot) {
  x_ = x, x_dot_ = x_dot, theta_ = theta, theta_dot_ = theta_dot;
}

void CartpoleSwingupEnv::PhysicsStep(double force) {
  // Florian (2007), "Correct equations for the dynamics of the cart-pole
  // system", frictionless case; l is the pole's half length.
  const double total = kCartMass + kPoleMass, l = kPoleHalfLength;
  const double s = std::sin(theta_), c = std::cos(theta_);
  const double tmp = (force + kPoleMass * l * theta_dot_ * theta_dot_ * s) / total;
  const double theta_acc = (kGravity * s - c * tmp) / (l * (4.0 / 3.0 - kPoleMass * c * c / total));
  const double x_acc = tmp - kPoleMass * l * theta_acc * c / total;
  // Semi-implicit Euler, MuJoCo's default integrator: velocities first.
  x_dot_ += x_acc * kDt;
  theta_dot_ += theta_acc * kDt;
  x_ += x_dot_ * kDt;
  theta_ += theta_dot_ * kDt;
}

double CartpoleSwingupEnv::Reward(double action) const {
  const double upright = (std::cos(theta_) + 1.0) / 2.0;
  const double centered = (1.0 + ToleranceGaussian(x_, 2.0)) / 2.0;
  const double small_control = (4.0 + ToleranceQuadratic(action, 1.0)) / 5.0;
  const double small_velocity = (1.0 + ToleranceGaussian(theta_dot_, 5.0)) / 2.0;
  return upright * centered * small_control * small_velocity;
}

double CartpoleSwingupEnv::Step(double normalized_action) {
  const double a = std::clamp(normalized_action, -1.0, 1.0);
  double reward = 0;
  for (int i = 0; i < kActionRepeat; ++i) {
    PhysicsStep(kForceGear * a);
    reward += Reward(a);
  }
  return reward;
}

double CartpoleSwingupEnv::Energy() const {
  const double total = kCartMass + kPoleMass, m = kPoleMass, l = kPoleHalfLength;
  const double c = std::cos(theta_);
  return 0.5 * total * x_dot_ * x_dot_ + m * l * c * x_dot_ * theta_dot_ +
         (2.0 / 3.0) * m * l * l * theta_dot_ * theta_dot_ + m * kGravity * l * c;
}

void CartpoleSwingupEnv::Render(uint8_t* rgb) const {
  // A fixed side camera 4 m wide centred on the rail; the hinge sits at
  // mid-height so the full pole is visible up or down.
  constexpr int n = kImageSize;
  constexpr double kMetresPerPixel = 4.0 / n;
  const uint8_t sky[3] = {42, 58, 84}, rail[3] = {190, 195, 205}, cart[3] = {51, 64, 87}, pole[3] = {204, 153, 77};
  auto plane = [&](int ch) { return rgb + static_cast<size_t>(ch) * n * n; };
  for (int ch = 0; ch < 3; ++ch) std::memset(plane(ch), sky[ch], n * n);
  auto put = [&](int row, int col, const uint8_t* color) {
    if (row < 0 || row >= n || col < 0 || col >= n) return;
    for (int ch = 0; ch < 3; ++ch) plane(ch)[row * n + col] = color[ch];
  };
  const int hinge_row = n / 2;
  for (int col = 0; col < n; ++col) put(hinge_row, col, rail);
  // World x to pixel column; the rail wraps visually when the cart leaves the view.
  const double cart_col = n / 2.0 + x_ / kMetresPerPixel;
  const int cart_half_w = static_cast<int>(0.2 / kMetresPerPixel),
            cart_half_h = static_cast<int>(0.1 / kMetresPerPixel);
  for (int r = hinge_row - cart_half_h; r <= hinge_row + cart_half_h; ++r)
    for (int col = static_cast<int>(cart_col) - cart_half_w; col <= static_cast<int>(cart_col) + cart_half_w; ++col)
      put(r, col, cart);
  // The pole as a capsule of radius 0.045 m: colour every pixel whose centre
  // lies within the radius of the hinge-to-tip segment.
  const double len = 2 * kPoleHalfLength / kMetresPerPixel, radius = 0.045 / kMetresPerPixel + 0.5;
  const double tip_col = cart_col + len * std::sin(theta_), tip_row = hinge_row - len * std::cos(theta_);
  const int r0 = static_cast<int>(std::floor(std::min<double>(hinge_row, tip_row) - radius));
  const int r1 = static_cast<int>(std::ceil(std::max<double>(hinge_row, tip_row) + radius));
  const int c0 = static_cast<int>(std::floor(std::min(cart_col, tip_col) - radius));
  const int c1 = static_cast<int>(std::ceil(std::max(cart_col, tip_col) + radius));
  const double dx = tip_col - cart_col, dy = tip_row - hinge_row, len2 = dx * dx + dy * dy;
  for (int r = std::max(r0, 0); r <= std::min(r1, n - 1); ++r) {
    for (int col = std::max(c0, 0); col <= std::min(c1, n - 1); ++col) {
      const double px = col - cart_col, py = r - hinge_row;
      const double t = std::clamp((px * dx + py * dy) / len2, 0.0, 1.0);
      const double ex = px - t * dx, ey = py - t * dy;
      if (ex * ex + ey * ey <= radius * radius) put(r, col, pole);
    }
  }
}

// ---------------------------------------------------------------- Replay buffer

ReplayBuffer::ReplayBuffer(int64_t capacity, std::vector<int64_t> obs_shape, torch::ScalarType obs_dtype,
                           int64_t act_dim, torch::Device device)
    : capacity_(capacity), device_(device) {
  TORCH_CHECK(capacity > 0, "replay buffer capacity must be positive");
  std::vector<int64_t> shape{capacity};
  shape.insert(shape.end(), obs_shape.begin(), obs_shape.end());
  // Pageable host memory, like TorchBench's NumPy arrays: the batch copy to
  // the device is synchronous, as it is there. torch::empty leaves pages
  // untouched until a transition is written.
  auto host = torch::TensorOptions().device(torch::kCPU);
  obs_ = torch::empty(shape, host.dtype(obs_dtype));
  next_obs_ = torch::empty(shape, host.dtype(obs_dtype));
  action_ = torch::empty({capacity, act_dim}, host.dtype(torch::kFloat));
  reward_ = torch::empty({capacity, 1}, host.dtype(torch::kFloat));
  not_done_ = torch::empty({capacity, 1}, host.dtype(torch::kFloat));
}

void ReplayBuffer::Add(const torch::Tensor& obs, const torch::Tensor& action, double reward,
                       const torch::Tensor& next_obs, bool done) {
  obs_[idx_].copy_(obs);
  next_obs_[idx_].copy_(next_obs);
  action_[idx_].copy_(action.reshape({-1}));
  reward_[idx_][0] = reward;
  not_done_[idx_][0] = done ? 0.0 : 1.0;
  idx_ = (idx_ + 1) % capacity_;
  full_ = full_ || idx_ == 0;
}

ReplayBuffer::Batch ReplayBuffer::Sample(int64_t batch_size, torch::ScalarType float_dtype) {
  TORCH_CHECK(size() > 0, "cannot sample from an empty replay buffer");
  auto idx = torch::randint(0, size(), {batch_size}, torch::TensorOptions().dtype(torch::kLong));
  auto to_device = [&](const torch::Tensor& src, bool keep_dtype) {
    auto out = src.index_select(0, idx).to(device_);
    return keep_dtype ? out : out.to(float_dtype);
  };
  const bool pixels = obs_.scalar_type() == torch::kByte;
  Batch b;
  b.obs = to_device(obs_, pixels);
  b.next_obs = to_device(next_obs_, pixels);
  b.action = to_device(action_, false);
  b.reward = to_device(reward_, false);
  b.not_done = to_device(not_done_, false);
  return b;
}

}  // namespace torchgauge::models
