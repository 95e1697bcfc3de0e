// The paper's data the reporter compares with, embedded at build time so an
// installed binary needs no data files: Table 2
// (reporter/data/paper_table2.json) and the model list of Table 1
// (reporter/data/paper_models.json).
#pragma once

namespace torchgauge::reporter {
extern const char* const kPaperTable2Json;
extern const char* const kPaperModelsJson;
}
