#include "reporter/output/vl_convert.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/io/shell.h"

namespace torchgauge::reporter {

bool VlConvert::Available() const {
  std::string cmd = core::ShellQuote(python_) + " " + core::ShellQuote(helper_.string()) + " check >/dev/null 2>&1";
  return std::system(cmd.c_str()) == 0;
}

bool VlConvert::Run(const std::string& args, const std::string& input, std::string* err) const {
  char tmpl[] = "/tmp/torchgauge-vl-XXXXXX";
  int fd = ::mkstemp(tmpl);
  if (fd < 0) return false;
  ::close(fd);
  { std::ofstream(tmpl, std::ios::binary) << input; }
  std::string errfile = std::string(tmpl) + ".err";
  std::string cmd = core::ShellQuote(python_) + " " + core::ShellQuote(helper_.string()) + " " + args + " <" +
                    core::ShellQuote(tmpl) + " 2>" + core::ShellQuote(errfile);
  int rc = std::system(cmd.c_str());
  std::ifstream ef(errfile);
  std::stringstream ss;
  ss << ef.rdbuf();
  *err = ss.str();
  std::remove(tmpl);
  std::remove(errfile.c_str());
  return rc == 0;
}

}  // namespace torchgauge::reporter
