#include "reporter/output/markdown.h"

#include <doctest/doctest.h>

using namespace torchgauge::reporter;

TEST_CASE("MarkdownToHtml renders GFM tables") {
  std::string html = MarkdownToHtml("| a | b |\n|---|--:|\n| 1 | 2 |\n");
  CHECK(html.find("<table>") != std::string::npos);
  CHECK(html.find("<td align=\"right\">2</td>") != std::string::npos);
}

TEST_CASE("TruncateMarkdown keeps short text and cuts long text on a line") {
  CHECK(TruncateMarkdown("short\n", 100, "x") == "short\n");
  std::string long_md;
  for (int i = 0; i < 5000; ++i) long_md += "| row " + std::to_string(i) + " | value |\n";
  std::string cut = TruncateMarkdown(long_md, kGitHubCommentLimit, "https://example.org/b/index.html");
  CHECK(cut.size() < kGitHubCommentLimit);
  CHECK(cut.find("[full report](https://example.org/b/index.html)") != std::string::npos);
  // Cut on a whole row.
  auto note = cut.find("\n\n---");
  CHECK(cut.substr(0, note).back() == '|');
}
