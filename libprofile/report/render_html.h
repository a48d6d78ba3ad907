// render_html.h - the pieces of an HTML report, over the table model: a
// Document's sources, tables and warnings as HTML, and the page around them
// (inline CSS only: no script, no request of any kind, which the page's
// Content-Security-Policy also forbids). RenderHtml (table.h) is a page of
// one Document; html_page.cpp composes lcpiprof's page of several.
//
// Every text that comes from the database or a file (paths, command and
// procedure names, instructions, source lines, warnings) goes through
// HtmlEscape: a process chooses its own name. Internal to report.
#ifndef LCPI_LIBPROFILE_REPORT_RENDER_HTML_H
#define LCPI_LIBPROFILE_REPORT_RENDER_HTML_H

#include <string>
#include <string_view>

#include "libprofile/report/table.h"

namespace lcpi::report {

// Printable(text) (base/text.h: what the text report shows), then & < > " '
// as character references: safe in element content and in quoted
// attribute values.
std::string HtmlEscape(std::string_view text);

// HTML's five only, of text that is Printable already (a label cut by
// CutText): Printable again would escape its backslashes twice.
std::string HtmlEscapePrintable(std::string_view shown);

// How a table's shares (the per-event columns keyed "percent") are drawn,
// always beside their value as text.
enum class HtmlShares {
  kPlain,  // the value only
  kBars,   // a bar whose width is the share (lcpiprof's rows)
  kHeat,   // the cell shaded by the share (lcpilist's instructions)
};

// Table `index` of `doc` as a <table> with a <caption>, column headers
// (<th scope="col">) and the first column as row headers, in text's column
// order with the name column first; a row's text_above (lcpilist's source
// lines) as a row of its own. Then the rows --top/--keep cut, if any.
std::string HtmlTable(const Document& doc, size_t index, const std::string& caption,
                      HtmlShares shares);

// What each source states (database, epochs with their times, events with
// what each was sampled as, its period and samples, the unknown and lost
// shares), with headings of `level` for labelled sources (lcpidiff's A, B).
std::string HtmlSources(const Document& doc, int level);

// The warnings as a list under a heading of `level`; "" when there are none.
std::string HtmlWarnings(const std::vector<std::string>& warnings, int level);

// "2026-11-23 15:00:31 UTC".
std::string HtmlTime(int64_t unix_seconds);

// A whole page: doctype, lang, charset, the CSP, the style sheet, `title`
// (escaped here) and `body` (HTML already).
std::string HtmlPage(const std::string& title, const std::string& body);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_RENDER_HTML_H
