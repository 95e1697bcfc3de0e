// The paper's Table 2 (reporter/data/paper_table2.json), embedded at build
// time so an installed binary needs no data files.
#pragma once

namespace torchgauge::reporter {
extern const char* const kPaperTable2Json;
}
