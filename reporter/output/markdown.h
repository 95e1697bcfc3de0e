// GitHub-flavoured Markdown helpers: rendering to HTML with cmark-gfm (tables,
// strikethrough) and truncating a document to GitHub's comment limit.
#pragma once

#include <string>

namespace torchgauge::reporter {

inline constexpr size_t kGitHubCommentLimit = 65536;

// Renders GFM to an HTML fragment. Raw HTML blocks pass through: the page
// templates use them for chart containers; every value from a result file is
// Markdown-escaped before it gets here, so none can form raw HTML.
std::string MarkdownToHtml(const std::string& markdown);

// Returns `markdown` unchanged when it has fewer than `limit` characters
// (bytes, which bounds characters). Otherwise cuts at the last line break that
// leaves room for a note linking to `full_url`, so tables end on a whole row.
std::string TruncateMarkdown(const std::string& markdown, size_t limit, const std::string& full_url);

}  // namespace torchgauge::reporter
