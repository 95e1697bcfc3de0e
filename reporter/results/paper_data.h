// The paper's data the reporter compares with, embedded at build time so an
// installed binary needs no data files: Table 2
// (reporter/results/paper_table2.json). Table 1's model list is core's
// (core/contract/paper_table1.h, models/paper_table1.json).
#pragma once

namespace torchgauge::reporter {
extern const char* const kPaperTable2Json;
}
