#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "core/contract/vocabulary.h"

using namespace torchgauge::core;

namespace {

// Every enumerator round-trips through its name, and the names are distinct.
template <typename E>
void CheckRoundTrip() {
  const auto& t = VocabularyOf<E>::kTable;
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    CHECK(std::string(Name(t.values[i])) == t.names[i]);
    CHECK(Parse<E>(t.names[i]) == t.values[i]);
    for (std::size_t k = i + 1; k < t.names.size(); ++k) CHECK(std::string(t.names[i]) != t.names[k]);
  }
}

}  // namespace

TEST_CASE("vocabularies round-trip") {
  CheckRoundTrip<Mode>();
  CheckRoundTrip<Domain>();
  CheckRoundTrip<Backend>();
  CheckRoundTrip<Precision>();
  CheckRoundTrip<Status>();
  CHECK(std::string(Name(Domain::kReinforcementLearning)) == "rl");
  CHECK(std::string(Name(Precision::kAmpBf16)) == "amp-bf16");
  CHECK(kStatuses.size() == 7);
}

TEST_CASE("Parse names the vocabulary and the valid values") {
  CHECK_FALSE(TryParse<Mode>("Train"));
  CHECK_FALSE(IsName<Backend>(""));
  try {
    Parse<Mode>("infer");
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "unknown mode 'infer' (valid: train, eval)");
  }
  CHECK_THROWS_WITH_AS(Parse<Precision>("fp8"),
                       "unknown precision 'fp8' (valid: fp32, tf32, default, bf16, fp16, amp-bf16, amp-fp16)",
                       std::invalid_argument);
}
