# The comparison reports and the `compare` subcommand (LibTorch-free).
# Included from reporter/CMakeLists.txt:
#   include(${CMAKE_CURRENT_SOURCE_DIR}/compare.cmake)
# then link torchgauge_compare into torchgauge-report and call
# torchgauge::reporter::AddCompareCommand(app) from its main().
add_library(torchgauge_compare STATIC
  ${CMAKE_CURRENT_LIST_DIR}/compare_report.cc
  ${CMAKE_CURRENT_LIST_DIR}/compare_command.cc)
target_link_libraries(torchgauge_compare PUBLIC torchgauge_core CLI11::CLI11)

# Tests of the reports, the golden Markdown and the CLI, with their own main.
torchgauge_add_test(compare_report_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/compare_command_test.cc
  LIBS torchgauge_compare LABELS unit)
