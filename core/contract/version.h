// The collector's version, the git commit it was built from and the compiler
// that built it, recorded in every manifest. Defined in a generated file so that a new commit relinks
// rather than recompiles.
#pragma once

namespace torchgauge::core {
const char* Version();
const char* GitSha();
// The C++ compiler and its version ("clang 14.0.6", "gcc 12.2.0"): the
// collector's own code (models, harnesses, timing loop) is compiled by it, so
// two builds of one LibTorch by different compilers are told apart.
const char* Compiler();
}  // namespace torchgauge::core
