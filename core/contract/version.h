// The collector's version and the git commit it was built from, recorded in
// every manifest. Defined in a generated file so that a new commit relinks
// rather than recompiles.
#pragma once

namespace torchgauge::core {
const char* Version();
const char* GitSha();
}  // namespace torchgauge::core
