// The build's "Table 1 coverage" page (builds/<build>/table1.{html,md}): the
// paper's Table 1 (core/contract/paper_table1.h) with our state for every model and
// what this build ran of it, and per domain the paper's model count beside
// ours and the distinct ATen operators this build exercised (core/analysis/coverage.h,
// the one coverage computation, over all of the build's platforms).
#pragma once

#include "core/contract/paper_table1.h"
#include "reporter/output/mustache_fwd.h"
#include "reporter/results/aggregate.h"

namespace torchgauge::reporter {

mu::data Table1PageData(const BuildView& v, const core::PaperTable1& table, const PaperTable2& paper);

}  // namespace torchgauge::reporter
