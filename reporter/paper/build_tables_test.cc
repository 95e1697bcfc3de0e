#include "reporter/paper/build_tables.h"

#include <doctest/doctest.h>

#include <string>

#include "reporter/results/aggregate.h"

using namespace torchgauge::reporter;

TEST_CASE("Table 2's export pairs train and eval rows by domain, also for a domain measured in one mode only") {
  PaperTable2 paper;
  PlatformView p;
  p.breakdown_source = BreakdownSource::kHost;
  p.table2_train = {DomainBreakdown{"vision", 2, 0.5, 0.2, 0.3, 0, nullptr},
                    DomainBreakdown{"test", 1, 0.1, 0.1, 0.8, 0, nullptr}};
  p.table2_eval = {DomainBreakdown{"vision", 2, 0.6, 0.1, 0.3, 0, nullptr}};
  const CsvTex t = Table2Table("b", p, paper);
  CHECK(t.csv.find("vision") != std::string::npos);
  CHECK(t.csv.find("test") != std::string::npos);
  p.table2_train.pop_back();
  p.table2_eval.push_back(DomainBreakdown{"test", 1, 0.2, 0.1, 0.7, 0, nullptr});
  CHECK(Table2Table("b", p, paper).csv.find("test") != std::string::npos);
}
