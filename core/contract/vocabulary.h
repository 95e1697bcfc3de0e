// The closed vocabularies of the result contract: run mode, model domain,
// backend, precision and run status. Each is an enum with its one table of
// JSON names; the name lists (kModes, kDomains, ...) that checks, CLI choices
// and the reporter iterate over come from these tables, so a new backend or
// domain is added here and nowhere else (schemas/*.schema.json excepted: it
// is the contract as published). LibTorch-free: models include this header,
// core never includes models.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace torchgauge::core {

enum class Mode { kTrain, kEval };

// The paper's six domains (section 2.1), plus a hidden domain for the
// harness's own test models.
enum class Domain { kVision, kNlp, kRecommendation, kReinforcementLearning, kSpeech, kOther, kTest };

// cudagraph is part of the vocabulary so that a request for it is recorded
// as unsupported with a reason rather than refused.
// kInductorFrozen: Inductor with freezing (eval only): the weights folded
// and prepacked into the AOTInductor package, as the HUD's CPU runs compile.
enum class Backend { kEager, kTorchScript, kCudaGraph, kInductor, kInductorFrozen };

enum class Precision { kFp32, kTf32, kDefault, kBf16, kFp16, kAmpBf16, kAmpFp16 };

// kMissing is written only by `torchgauge-collect merge --allow-missing`: a
// planned run that the shard owing it never produced (killed, cancelled, never
// started). Like every status but ok it is a failure to readers.
enum class Status { kOk, kUnsupported, kError, kTimeout, kOom, kCrashed, kMissing };

// One vocabulary: its enumerators and their names, position for position,
// and what the vocabulary is called in error messages.
template <typename E, std::size_t N>
struct Vocabulary {
  const char* what;
  std::array<E, N> values;
  std::array<const char*, N> names;
};

inline constexpr Vocabulary<Mode, 2> kModeVocabulary{"mode", {Mode::kTrain, Mode::kEval}, {"train", "eval"}};
inline constexpr Vocabulary<Domain, 7> kDomainVocabulary{
    "domain",
    {Domain::kVision, Domain::kNlp, Domain::kRecommendation, Domain::kReinforcementLearning, Domain::kSpeech,
     Domain::kOther, Domain::kTest},
    {"vision", "nlp", "recommendation", "rl", "speech", "other", "test"}};
inline constexpr Vocabulary<Backend, 5> kBackendVocabulary{
    "backend",
    {Backend::kEager, Backend::kTorchScript, Backend::kCudaGraph, Backend::kInductor, Backend::kInductorFrozen},
    {"eager", "torchscript", "cudagraph", "inductor", "inductor_frozen"}};
inline constexpr Vocabulary<Precision, 7> kPrecisionVocabulary{
    "precision",
    {Precision::kFp32, Precision::kTf32, Precision::kDefault, Precision::kBf16, Precision::kFp16, Precision::kAmpBf16,
     Precision::kAmpFp16},
    {"fp32", "tf32", "default", "bf16", "fp16", "amp-bf16", "amp-fp16"}};
inline constexpr Vocabulary<Status, 7> kStatusVocabulary{
    "status",
    {Status::kOk, Status::kUnsupported, Status::kError, Status::kTimeout, Status::kOom, Status::kCrashed,
     Status::kMissing},
    {"ok", "unsupported", "error", "timeout", "oom", "crashed", "missing"}};

// Whether `backend` runs an AOTInductor package (with or without freezing).
inline bool IsInductorBackend(std::string_view backend) {
  return backend == "inductor" || backend == "inductor_frozen";
}

// The name lists, in enum order.
inline constexpr const auto& kModes = kModeVocabulary.names;
inline constexpr const auto& kDomains = kDomainVocabulary.names;
inline constexpr const auto& kBackends = kBackendVocabulary.names;
inline constexpr const auto& kPrecisions = kPrecisionVocabulary.names;
inline constexpr const auto& kStatuses = kStatusVocabulary.names;

template <typename E>
struct VocabularyOf;
template <>
struct VocabularyOf<Mode> {
  static constexpr const auto& kTable = kModeVocabulary;
};
template <>
struct VocabularyOf<Domain> {
  static constexpr const auto& kTable = kDomainVocabulary;
};
template <>
struct VocabularyOf<Backend> {
  static constexpr const auto& kTable = kBackendVocabulary;
};
template <>
struct VocabularyOf<Precision> {
  static constexpr const auto& kTable = kPrecisionVocabulary;
};
template <>
struct VocabularyOf<Status> {
  static constexpr const auto& kTable = kStatusVocabulary;
};

// "a, b, c": the valid names, for error messages and help texts.
std::string JoinNames(std::span<const char* const> names, const char* separator = ", ");

template <typename E>
constexpr const char* Name(E value) {
  const auto& t = VocabularyOf<E>::kTable;
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    if (t.values[i] == value) return t.names[i];
  }
  return "?";  // unreachable for a valid enumerator
}

template <typename E>
std::optional<E> TryParse(std::string_view name) {
  const auto& t = VocabularyOf<E>::kTable;
  for (std::size_t i = 0; i < t.names.size(); ++i) {
    if (name == t.names[i]) return t.values[i];
  }
  return std::nullopt;
}

// Throws std::invalid_argument: "unknown mode 'x' (valid: train, eval)".
template <typename E>
E Parse(std::string_view name) {
  if (auto v = TryParse<E>(name)) return *v;
  const auto& t = VocabularyOf<E>::kTable;
  throw std::invalid_argument("unknown " + std::string(t.what) + " '" + std::string(name) +
                              "' (valid: " + JoinNames(t.names) + ")");
}

// True when `name` is in the vocabulary of E.
template <typename E>
bool IsName(std::string_view name) {
  return TryParse<E>(name).has_value();
}

}  // namespace torchgauge::core
