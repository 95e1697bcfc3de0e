// Escaping for every output context. Every string that comes from a result
// file passes through one of these before it reaches a page, a table or a
// script block; templates never see raw input.
#pragma once

#include <string>
#include <string_view>

namespace torchgauge::reporter {

// &, <, >, ", ' as entities.
std::string HtmlEscape(std::string_view s);
// Inline GitHub-flavoured Markdown (paragraphs and table cells): backslash-
// escapes the punctuation that could start markup (including | for tables and
// < and & so no raw HTML or entity survives), and folds line breaks to spaces
// so a value can never start a block.
std::string MarkdownEscape(std::string_view s);
// A URL a person gave (a triage --link) as Markdown: a link to itself when
// it is http(s), its destination percent-encoded where a character could
// end the destination, a table cell or an HTML attribute; anything else
// (javascript:, a bare word) as MarkdownEscape text, never a link.
std::string MarkdownUrlLink(std::string_view url);
// JSON text made safe to sit inside <script type="application/json">: <, >, &
// and U+2028/U+2029 become \u escapes, which JSON parsers read back unchanged.
std::string JsonForScript(std::string_view json_text);
// RFC 4180 field: quoted when it holds a comma, quote or line break.
std::string CsvField(std::string_view s);
// LaTeX text mode.
std::string TexEscape(std::string_view s);
// Replaces invalid UTF-8 sequences with U+FFFD so every output stays valid text.
std::string SanitizeUtf8(std::string_view s);

}  // namespace torchgauge::reporter
