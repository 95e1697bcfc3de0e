#include "core/io/shell.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>

using torchgauge::core::ShellQuote;

TEST_CASE("shell quoting survives the shell byte for byte") {
  CHECK(ShellQuote("plain") == "'plain'");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  for (const std::string& s : {std::string("a b"), std::string("$(rm -rf /) `x` \"q\" 'single' \\ ; | & * ?"),
                               std::string(""), std::string("ünïcödé")}) {
    std::unique_ptr<FILE, int (*)(FILE*)> p(popen(("printf %s " + ShellQuote(s)).c_str(), "r"), pclose);
    REQUIRE(p);
    std::string got;
    std::array<char, 256> buf{};
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) got.append(buf.data(), n);
    CHECK(got == s);
  }
}

TEST_CASE("RunCapture: output, exit code, stderr on request, binary-safe") {
  using torchgauge::core::RunCapture;
  auto a = RunCapture("printf 'a\\nb'; exit 3");
  CHECK(a.exit_code == 3);
  CHECK(a.output == "a\nb");
  CHECK(RunCapture("echo out; echo err >&2").output == "out\n");
  CHECK(RunCapture("echo out; echo err >&2", true).output == "out\nerr\n");
  CHECK(RunCapture("printf 'x\\000y'").output == std::string("x\0y", 3));
  CHECK(RunCapture("kill -9 $$").exit_code == -1);
}
