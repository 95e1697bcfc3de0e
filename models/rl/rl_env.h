// Small continuous-control environments simulated on the host CPU for the RL
// workloads (soft_actor_critic, drq), plus their host-side replay buffer.
//
// The paper attributes the RL domain's GPU idleness to the environment, "a
// component not based on PyTorch" (section 3.1). TorchBench steps Gym's
// Pendulum-v1 (soft_actor_critic) and a mock of dm_control's cartpole_swingup
// (drq) in Python on the CPU; we step the same physics in plain C++ inside
// the timed Step(), so the device waits on the host exactly where it would.
//
// Both environments are deterministic given their seed (std::mt19937_64 for
// resets only) and never touch torch, so their cost is pure host time.
#pragma once

#include <torch/types.h>

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace torchgauge::models {

// Gym's Pendulum-v1 (gymnasium/envs/classic_control/pendulum.py): a uniform
// rod of mass m = 1 and length l = 1 on a frictionless pivot under g = 10,
// torque limited to |u| <= 2, speed clipped to |theta_dot| <= 8, dt = 0.05,
// integrated with semi-implicit Euler. theta = 0 is upright. Observation is
// (cos theta, sin theta, theta_dot); reward is
// -(angle_normalize(theta)^2 + 0.1 theta_dot^2 + 0.001 u^2). Resets draw
// theta ~ U[-pi, pi], theta_dot ~ U[-1, 1].
// Actions arrive normalised to [-1, 1] and are rescaled to the torque range,
// as TorchBench's NormalizeContinuousActionSpace wrapper does.
class PendulumEnv {
 public:
  static constexpr int kObsDim = 3;
  static constexpr int kActDim = 1;
  static constexpr double kGravity = 10.0, kMass = 1.0, kLength = 1.0, kDt = 0.05;
  static constexpr double kMaxSpeed = 8.0, kMaxTorque = 2.0;

  explicit PendulumEnv(uint64_t seed) : rng_(seed) {}

  void Reset();
  void SetState(double theta, double theta_dot) { theta_ = theta, theta_dot_ = theta_dot; }
  // Applies a normalised action in [-1, 1] (clipped) for one dt; returns the reward.
  double Step(double normalized_action);
  void Observe(float* out) const;

  double theta() const { return theta_; }
  double theta_dot() const { return theta_dot_; }
  // Mechanical energy of the rod: kinetic (I = m l^2 / 3) plus potential of
  // its centre of mass at l/2, which the dynamics conserve when u = 0.
  double Energy() const;

 private:
  std::mt19937_64 rng_;
  double theta_ = 0, theta_dot_ = 0;
};

// The cart-pole of dm_control's cartpole_swingup task (suite/cartpole.py and
// cartpole.xml): cart mass 1, a uniform pole of mass 0.1 and length 1 hinged
// on the cart, g = 9.81, actuator force = 10 * u with u in [-1, 1], physics
// timestep 0.01 with MuJoCo's default semi-implicit Euler. The swing-up task
// starts with the pole hanging down (theta = pi, theta = 0 upright) and the
// cart near the centre, with small noise. DrQ's config uses action_repeat 4,
// so one environment step is four physics steps. Joint damping and the rail's
// collision walls are left out (the equations are Florian 2007's frictionless
// cart-pole); the reward follows dm_control's smooth swing-up reward
// (upright * centred * small_control * small_velocity).
//
// Render() rasterises the scene from a fixed camera into an 84x84 RGB image,
// channels first, like dm_control's pixel observations used by DrQ.
class CartpoleSwingupEnv {
 public:
  static constexpr int kImageSize = 84;
  static constexpr int kChannels = 3;
  static constexpr int kActDim = 1;
  static constexpr double kGravity = 9.81, kCartMass = 1.0, kPoleMass = 0.1, kPoleHalfLength = 0.5;
  static constexpr double kForceGear = 10.0, kDt = 0.01;
  static constexpr int kActionRepeat = 4;

  explicit CartpoleSwingupEnv(uint64_t seed) : rng_(seed) {}

  void Reset();
  void SetState(double x, double x_dot, double theta, double theta_dot);
  // One environment step: kActionRepeat physics steps with the clipped action
  // held; returns the summed reward.
  double Step(double normalized_action);
  // One physics step with the given cart force in newtons (no reward).
  void PhysicsStep(double force);
  // Writes kChannels x kImageSize x kImageSize bytes.
  void Render(uint8_t* rgb) const;

  double x() const { return x_; }
  double theta() const { return theta_; }
  // Total mechanical energy (cart + pole), conserved when the force is zero.
  double Energy() const;

 private:
  double Reward(double action) const;
  std::mt19937_64 rng_;
  double x_ = 0, x_dot_ = 0, theta_ = 0, theta_dot_ = 0;
};

// A replay buffer on the host, as in TorchBench (NumPy arrays for
// soft_actor_critic and drq): transitions are written in place into
// preallocated pageable tensors; Sample() gathers a batch on the host and
// copies it to the device, the host-to-device traffic of every real
// off-policy learner.
// Observations keep their dtype (float states, uint8 pixels).
class ReplayBuffer {
 public:
  ReplayBuffer(int64_t capacity, std::vector<int64_t> obs_shape, torch::ScalarType obs_dtype, int64_t act_dim,
               torch::Device device);

  void Add(const torch::Tensor& obs, const torch::Tensor& action, double reward, const torch::Tensor& next_obs,
           bool done);
  int64_t size() const { return full_ ? capacity_ : idx_; }

  struct Batch {
    torch::Tensor obs, action, reward, next_obs, not_done;
  };
  // Uniform indices with replacement, drawn from the CPU generator.
  Batch Sample(int64_t batch_size, torch::ScalarType float_dtype);

 private:
  int64_t capacity_;
  torch::Device device_;
  torch::Tensor obs_, next_obs_, action_, reward_, not_done_;
  int64_t idx_ = 0;
  bool full_ = false;
};

}  // namespace torchgauge::models
