#include "core/io/shell.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace torchgauge::core {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

CommandOutput RunCapture(const std::string& command, bool merge_stderr) {
  CommandOutput out;
  // Grouped, so the redirection covers a whole command list.
  FILE* pipe = ::popen((merge_stderr ? "{ " + command + "\n} 2>&1" : command).c_str(), "r");
  if (!pipe) return out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.output.append(buf.data(), n);
  int status = ::pclose(pipe);
  out.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

}  // namespace torchgauge::core
