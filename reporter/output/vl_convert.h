// The vl-convert subprocess: reporter/output/vl_render.py run by a Python that has
// vl-convert-python. It renders Vega-Lite specs to SVG and writes the
// offline Vega bundle. The reporter does not link Python; it only runs it.
#pragma once

#include <filesystem>
#include <string>

namespace torchgauge::reporter {

class VlConvert {
 public:
  VlConvert(std::string python, std::filesystem::path helper)
      : python_(std::move(python)), helper_(std::move(helper)) {}
  // Whether the helper runs and finds vl-convert-python.
  bool Available() const;
  // Runs `helper <args>` with `input` on stdin; returns whether it exited 0,
  // with its stderr in `err`. `args` are shell words, already quoted.
  bool Run(const std::string& args, const std::string& input, std::string* err) const;
  const std::string& python() const { return python_; }

 private:
  std::string python_;
  std::filesystem::path helper_;
};

}  // namespace torchgauge::reporter
