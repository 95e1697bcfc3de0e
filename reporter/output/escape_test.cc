#include "reporter/output/escape.h"

#include <doctest/doctest.h>

#include "reporter/output/markdown.h"

using namespace torchgauge::reporter;

TEST_CASE("HtmlEscape escapes markup and quotes") {
  CHECK(HtmlEscape("<script>alert('x')</script> & \"q\"") ==
        "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;");
  CHECK(HtmlEscape("héllo ✓") == "héllo ✓");
}

TEST_CASE("MarkdownEscape neutralises markup, tables and raw HTML") {
  std::string hostile = "<script>alert(1)</script> | *b* [l](javascript:x) `c` ../../etc\nnext";
  std::string md = MarkdownEscape(hostile);
  CHECK(md.find('\n') == std::string::npos);
  std::string html = MarkdownToHtml("| a |\n|---|\n| " + md + " |\n");
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;") != std::string::npos);
  CHECK(html.find("<a ") == std::string::npos);
  CHECK(html.find("<em>") == std::string::npos);
  CHECK(html.find("<code>") == std::string::npos);
  // The pipe stays inside the one cell.
  CHECK(html.find("<td>") == html.rfind("<td>"));
}

TEST_CASE("MarkdownEscape handles backslashes before pipes") {
  std::string html = MarkdownToHtml("| a | b |\n|---|---|\n| " + MarkdownEscape("x\\|y") + " | z |\n");
  CHECK(html.find("x\\|y") != std::string::npos);
  CHECK(html.find("<td>z</td>") != std::string::npos);
}

TEST_CASE("JsonForScript cannot close the script element") {
  std::string s = JsonForScript("{\"a\":\"</script><b>&\xE2\x80\xA8\"}");
  CHECK(s.find('<') == std::string::npos);
  CHECK(s.find('>') == std::string::npos);
  CHECK(s.find('&') == std::string::npos);
  CHECK(s.find("\\u2028") != std::string::npos);
}

TEST_CASE("CSV and TeX escaping") {
  CHECK(CsvField("plain") == "plain");
  CHECK(CsvField("a,\"b\"") == "\"a,\"\"b\"\"\"");
  CHECK(TexEscape("50% of $x_1 & #2") == "50\\% of \\$x\\_1 \\& \\#2");
}

TEST_CASE("SanitizeUtf8 replaces invalid sequences") {
  CHECK(SanitizeUtf8(std::string("a\xFF"
                                 "b")) ==
        "a\xEF\xBF\xBD"
        "b");
  CHECK(SanitizeUtf8("日本") == "日本");
}

TEST_CASE("MarkdownUrlLink: an http(s) URL is a link, in a table cell too; nothing else is") {
  const std::string md = MarkdownUrlLink("https://github.com/pytorch/pytorch/issues/1?a=1&copy=2#x (y)|z");
  const std::string html = MarkdownToHtml("| a |\n|---|\n| " + md + " |\n");
  INFO(html);
  CHECK(html.find("<a href=\"https://github.com/pytorch/pytorch/issues/1?a=1&amp;copy=2#x%20%28y%29%7Cz\">") !=
        std::string::npos);
  CHECK(html.find("<td>") != std::string::npos);
  for (const char* bad : {"javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,<b>", "issue 1"}) {
    const std::string h = MarkdownToHtml(MarkdownUrlLink(bad));
    CHECK_MESSAGE(h.find("<a ") == std::string::npos, bad);
  }
}
