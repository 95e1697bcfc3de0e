# The comparison reports and the `compare` subcommand (LibTorch-free).
# The compare sources are part of torchgauge_reporter (globbed); this adds
# their tests: the reports, the golden Markdown and the CLI.
torchgauge_add_test(compare_report_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/compare_command_test.cc
  LIBS torchgauge_reporter LABELS unit)
