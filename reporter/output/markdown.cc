#include "reporter/output/markdown.h"

#include <cstdlib>
#include <mutex>
#include <stdexcept>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm.h>

namespace torchgauge::reporter {

namespace {
std::once_flag g_extensions_once;
}

std::string MarkdownToHtml(const std::string& markdown) {
  std::call_once(g_extensions_once, [] { cmark_gfm_core_extensions_ensure_registered(); });
  const int options = CMARK_OPT_UNSAFE | CMARK_OPT_GITHUB_PRE_LANG;
  cmark_parser* parser = cmark_parser_new(options);
  for (const char* name : {"table", "strikethrough"}) {
    cmark_syntax_extension* ext = cmark_find_syntax_extension(name);
    if (ext) cmark_parser_attach_syntax_extension(parser, ext);
  }
  cmark_parser_feed(parser, markdown.data(), markdown.size());
  cmark_node* doc = cmark_parser_finish(parser);
  char* html = cmark_render_html(doc, options, cmark_parser_get_syntax_extensions(parser));
  std::string out = html ? html : "";
  cmark_get_default_mem_allocator()->free(html);
  cmark_node_free(doc);
  cmark_parser_free(parser);
  return out;
}

std::string TruncateMarkdown(const std::string& markdown, size_t limit, const std::string& full_url) {
  if (markdown.size() < limit) return markdown;
  const std::string note =
      "\n\n---\n\n**This summary was truncated to fit GitHub's comment limit.** See the [full report](" + full_url +
      ").\n";
  size_t budget = limit > note.size() + 1 ? limit - note.size() - 1 : 0;
  size_t cut = markdown.rfind('\n', budget);
  if (cut == std::string::npos) cut = 0;
  return markdown.substr(0, cut) + note;
}

}  // namespace torchgauge::reporter
