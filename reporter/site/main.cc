// torchgauge-report: see cli.h.
#include "reporter/site/cli.h"

int main(int argc, char** argv) { return torchgauge::reporter::RunCli(argc, argv); }
