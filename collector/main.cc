// torchgauge-collect: runs TorchGauge's model suite and writes one JSON
// result per run under results/<build-id>/<platform-id>/. The command line
// is collector/cli.h.
#include "collector/cli.h"

int main(int argc, char** argv) { return torchgauge::collector::RunCli(argc, argv); }
