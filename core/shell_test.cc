#include "core/shell.h"

#include <doctest/doctest.h>

#include <array>
#include <cstdio>
#include <memory>

using torchgauge::core::ShellQuote;

TEST_CASE("shell quoting survives the shell byte for byte") {
  CHECK(ShellQuote("plain") == "'plain'");
  CHECK(ShellQuote("it's") == "'it'\\''s'");
  for (const std::string s : {std::string("a b"), std::string("$(rm -rf /) `x` \"q\" 'single' \\ ; | & * ?"),
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
