// render_html.cpp - a Document as HTML (see render_html.h): its tables as
// real tables (caption, column and row headers), its sources as a
// description list and tables, and the page around them with an inline
// style sheet. Shares are always written as numbers; bars and shading only
// repeat them.
#include "libprofile/report/render_html.h"
#include "libprofile/report/observer_cost.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "libprofile/base/text.h"
#include "libprofile/report/cell_format.h"
#include "libprofile/report/percent.h"

namespace lcpi::report {

namespace {

constexpr size_t kTextFormat = static_cast<size_t>(Format::kText);

bool Numeric(CellType type) {
  return type != CellType::kText && type != CellType::kName && type != CellType::kPath;
}

bool IsShare(const Column& c) { return c.event && c.key == "percent"; }

// text's column order, the name column first (it heads each row).
std::vector<size_t> HtmlOrder(const Table& t) {
  std::vector<size_t> order = t.order[kTextFormat];
  auto name = std::find_if(order.begin(), order.end(),
                           [&](size_t c) { return t.columns[c].key == "name"; });
  if (name != order.end()) std::rotate(order.begin(), name, name + 1);
  return order;
}

std::string Heading(int level, const std::string& id, const std::string& text) {
  const std::string h = "h" + std::to_string(level);
  return "<" + h + (id.empty() ? "" : " id=\"" + id + "\"") + ">" + text + "</" + h + ">\n";
}

std::string ShareCell(const std::string& value, double share, HtmlShares shares, bool head) {
  const std::string tag = head ? "th scope=\"row\"" : "td";
  const std::string end = head ? "th" : "td";
  const double clamped = std::clamp(share, 0.0, 100.0);
  switch (shares) {
    case HtmlShares::kPlain:
      break;
    case HtmlShares::kBars:
      return "<" + tag + " class=\"n share\">" + value +
             "<span class=\"bar\" aria-hidden=\"true\"><span style=\"width:" + Fixed(clamped, 2) +
             "%\"></span></span></" + end + ">";
    case HtmlShares::kHeat:
      if (clamped <= 0) break;
      // Alpha grows with the square root, so that 1 % already shows and
      // 100 % stays light enough for black text (contrast above 7:1).
      return "<" + tag + " class=\"n heat\" style=\"background-color:rgba(214,69,0," +
             Fixed(0.6 * std::sqrt(clamped / 100.0), 3) + ")\">" + value + "</" + end + ">";
  }
  return "<" + tag + " class=\"n\">" + value + "</" + end + ">";
}

std::string EpochTitle(const EpochInfo& e) {
  return std::to_string(e.id) + (e.tag ? " (" + *e.tag + ")" : "");
}

// What the text header's event line says of how event e was sampled, beyond
// its period: "precise_ip 2" (above 0 only) and MultiplexNote's "multiplexed:
// scaled by 1.60, running 62.5% of enabled"; "" when neither. The events
// table gains a notes column only when some event has one, so a page of
// plain events keeps its four columns.
std::string EventNote(const Header& h, size_t e) {
  std::string note;
  if (e < h.precise.size() && h.precise[e] > 0) note = "precise_ip " + std::to_string(h.precise[e]);
  if (const std::string scaled = MultiplexNote(h, e); !scaled.empty())
    note += std::string(note.empty() ? "" : "; ") + scaled;
  return note;
}

// The epochs, events and shares of one source.
std::string SourceBody(const Header& h) {
  std::string out = "<dl class=\"facts\">\n";
  out += "<dt>Database</dt><dd><code>" + HtmlEscape(h.database) + "</code></dd>\n";
  std::string epochs;
  if (h.all_epochs) epochs = "all: ";
  for (size_t i = 0; i < h.epochs.size(); ++i)
    epochs += (i ? ", " : "") + HtmlEscape(EpochTitle(h.epochs[i]));
  if (h.epochs.empty()) epochs += "none";
  out += "<dt>Epochs</dt><dd>" + epochs + "</dd>\n";
  if (!h.epochs.empty()) {
    int64_t first = h.epochs.front().started, last = 0;
    bool current = false;
    for (const EpochInfo& e : h.epochs) {
      first = std::min(first, e.started);
      if (e.ended) {
        last = std::max(last, *e.ended);
      } else {
        current = true;
      }
    }
    out += "<dt>Time span</dt><dd>" + HtmlTime(first) + " to " +
           (current ? std::string("now (the epoch is current)") : HtmlTime(last)) + "</dd>\n";
  }
  out += "<dt>Unknown</dt><dd>" + Fixed(h.unknown_percent, 2) +
         " % of the daemon's samples (no image known for them)</dd>\n";
  out += "<dt>Lost</dt><dd>" + Fixed(h.lost_percent, 2) +
         " % of the daemon's samples (lost or dropped before they were counted)</dd>\n";
  out += "<dt>Cost</dt><dd>" + HtmlEscape(CostSentence(h.cost, WindowsRead(h))) + "</dd>\n";
  if (h.throttled_percent > 0) {
    out += "<dt>Throttled</dt><dd>about " + Fixed(h.throttled_percent, 2) +
           " % of the samples asked for were never taken: perf throttled the events "
           "(estimated by lcpi.ko)</dd>\n";
  }
  out += "</dl>\n";
  std::vector<std::string> notes;
  for (size_t e = 0; e < h.events.size(); ++e) notes.push_back(EventNote(h, e));
  const bool any_note =
      std::any_of(notes.begin(), notes.end(), [](const std::string& n) { return !n.empty(); });
  out +=
      "<table class=\"events\">\n<caption>Events</caption>\n<thead><tr>"
      "<th scope=\"col\">event</th><th scope=\"col\">sampled as</th>"
      "<th scope=\"col\" class=\"n\">mean period</th>"
      "<th scope=\"col\" class=\"n\">samples</th>" +
      std::string(any_note ? "<th scope=\"col\">notes</th>" : "") + "</tr></thead>\n<tbody>\n";
  for (size_t e = 0; e < h.events.size(); ++e) {
    const EventInfo& ev = h.events[e];
    std::string used = HtmlEscape(ev.used);
    if (ev.used != ev.name) used = "<strong>" + used + "</strong> (a fallback)";
    out += "<tr><th scope=\"row\">" + HtmlEscape(ev.name) + "</th><td>" + used +
           "</td><td class=\"n\">" + std::to_string(ev.period) + "</td><td class=\"n\">" +
           std::to_string(e < h.totals.size() ? h.totals[e] : 0) + "</td>" +
           (any_note ? "<td>" + HtmlEscape(notes[e]) + "</td>" : "") + "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (!h.epochs.empty()) {
    out +=
        "<table class=\"epochs\">\n<caption>Epochs</caption>\n<thead><tr>"
        "<th scope=\"col\">epoch</th><th scope=\"col\">tag</th><th scope=\"col\">started</th>"
        "<th scope=\"col\">ended</th></tr></thead>\n<tbody>\n";
    for (const EpochInfo& e : h.epochs) {
      out += "<tr><th scope=\"row\">" + std::to_string(e.id) + "</th><td>" +
             (e.tag ? HtmlEscape(*e.tag) : std::string()) + "</td><td>" + HtmlTime(e.started) +
             "</td><td>" + (e.ended ? HtmlTime(*e.ended) : std::string("current")) + "</td></tr>\n";
    }
    out += "</tbody>\n</table>\n";
  }
  return out;
}

const char* const kStyle = R"(
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, "DejaVu Sans", sans-serif; color: #1a1a1a; background: #fff;
  margin: 0 auto; max-width: 78rem; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: .2rem 0 .4rem; }
h2 { font-size: 1.3rem; margin: 2rem 0 .5rem; padding-bottom: .2rem; border-bottom: 2px solid #d0d7de; }
h3 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; }
a { color: #0b4f9c; }
a:focus, tr:focus-within { outline: 3px solid #0b4f9c; outline-offset: 1px; }
code, .code td, .code th { font-family: "DejaVu Sans Mono", monospace; font-size: .9rem; }
nav ul { display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; padding: 0; list-style: none; margin: .3rem 0; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .5rem 0 1rem; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
table { border-collapse: collapse; margin: .4rem 0 1rem; }
caption { text-align: left; font-weight: 600; padding: .2rem 0; caption-side: top; }
th, td { padding: .18rem .6rem; border-bottom: 1px solid #e3e6ea; vertical-align: top; text-align: left; }
thead th { border-bottom: 2px solid #8c959f; background: #f3f5f7; }
tbody th { font-weight: normal; }
.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.path, th.path, td.name, th.name { overflow-wrap: anywhere; max-width: 34rem; }
h3 code, caption { overflow-wrap: anywhere; }
div.scroll { overflow-x: auto; }
.bar { display: inline-block; width: 6rem; height: .75rem; margin-left: .5rem;
  background: #e8ebef; border: 1px solid #8c959f; vertical-align: -.05rem; }
.bar > span { display: block; height: 100%; background: #1f5fa8; }
.heat { font-weight: 600; }
tr.src td { background: #f6f8fa; color: #24292f; font-style: italic; padding-top: .35rem; }
.note { color: #3d444d; }
.omitted { color: #3d444d; font-style: italic; }
ul.warnings li { color: #7a3400; }
figure { margin: .5rem 0 1rem; }
svg.flame { display: block; height: auto; max-width: 100%; }
svg.flame rect { stroke: #fff; stroke-width: .5; }
svg.flame text { font-size: 13px; }
figcaption { font-weight: 600; margin-bottom: .3rem; }
svg text { font: 12px system-ui, "DejaVu Sans", sans-serif; fill: #1a1a1a; }
)";

}  // namespace

std::string HtmlEscape(std::string_view text) {
  // The text report's display string (Printable), then HTML's own five.
  return HtmlEscapePrintable(Printable(text));
}

std::string HtmlEscapePrintable(std::string_view shown) {
  std::string out;
  out.reserve(shown.size());
  for (char ch : shown) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string HtmlTime(int64_t unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  char buf[64];
  if (!gmtime_r(&t, &tm) || std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm) == 0)
    return std::to_string(unix_seconds);
  return buf;
}

std::string HtmlTable(const Document& doc, size_t index, const std::string& caption,
                      HtmlShares shares) {
  const Table& t = doc.tables[index];
  const std::vector<size_t> order = HtmlOrder(t);
  const bool code = t.key != "rows";  // lcpilist's instructions and lines
  std::string out = std::string("<table") + (code ? " class=\"code\"" : "") + ">\n<caption>" +
                    HtmlEscape(caption) + "</caption>\n<thead><tr>";
  for (size_t c : order) {
    const Column& col = t.columns[c];
    std::string title = col.title;
    // Text's "%" and "cum%" headings name their event in HTML.
    if (col.event && col.title != col.name && !doc.sources.empty()) {
      const auto& events = doc.sources.front().header.events;
      if (*col.event < events.size()) title = events[*col.event].name + " " + col.title;
    }
    out += std::string("<th scope=\"col\"") + (Numeric(col.type) ? " class=\"n\"" : "") + ">" +
           HtmlEscape(title) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const TableRow& row : t.rows) {
    if (!row.text_above.empty()) {
      out += "<tr class=\"src\"><td colspan=\"" + std::to_string(order.size()) + "\">" +
             HtmlEscape(row.text_above) + "</td></tr>\n";
    }
    out += "<tr>";
    for (size_t i = 0; i < order.size(); ++i) {
      const Column& col = t.columns[order[i]];
      const Cell& cell = row.cells[order[i]];
      // A text cell's own bytes, escaped once (HtmlEscape is Printable and
      // HTML's five; CellText's display string would be escaped twice).
      const std::string value = HtmlEscape(std::holds_alternative<std::string>(cell)
                                               ? std::get<std::string>(cell)
                                               : CellText(col, cell, Format::kText));
      const bool head = i == 0;
      if (IsShare(col) && std::holds_alternative<double>(cell)) {
        out += ShareCell(value, std::get<double>(cell), shares, head);
        continue;
      }
      std::string cls = Numeric(col.type)             ? "n"
                        : col.type == CellType::kPath ? "path"
                        : col.type == CellType::kName ? "name"
                                                      : "";
      std::string attrs = cls.empty() ? "" : " class=\"" + cls + "\"";
      out += head ? "<th scope=\"row\"" + attrs + ">" + value + "</th>"
                  : "<td" + attrs + ">" + value + "</td>";
    }
    out += "</tr>\n";
  }
  out += "</tbody>\n</table>\n";
  if (doc.omitted && doc.omitted->rows > 0 && index == doc.shown_table) {
    out += "<p class=\"omitted\">" + std::to_string(doc.omitted->rows) +
           " more rows not shown (--top/--keep)";
    if (doc.omitted->counts && !doc.sources.empty()) {
      const Header& h = doc.sources.front().header;
      const std::vector<uint64_t>& counts = *doc.omitted->counts;
      out += ":";
      for (size_t e = 0; e < h.events.size() && e < counts.size(); ++e) {
        out += std::string(e ? "," : "") + " " + HtmlEscape(h.events[e].name) + " " +
               std::to_string(counts[e]) + " (" + Fixed(Percent(counts[e], h.totals[e]), 2) + " %)";
      }
    }
    out += ".</p>\n";
  }
  return out;
}

std::string HtmlSources(const Document& doc, int level) {
  std::string out;
  for (const Source& s : doc.sources) {
    if (!s.label.empty()) {
      out += Heading(level, "", HtmlEscape(s.label)) + "<p>" + std::to_string(s.samples) +
             " samples of the compared event.</p>\n";
    }
    out += SourceBody(s.header);
  }
  for (const std::string& note : doc.header_notes)
    out += "<p class=\"note\">" + HtmlEscape(note) + "</p>\n";
  return out;
}

std::string HtmlWarnings(const std::vector<std::string>& warnings, int level) {
  if (warnings.empty()) return "";
  std::string out = Heading(level, "warnings", "Warnings") + "<ul class=\"warnings\">\n";
  for (const std::string& w : warnings) out += "<li>" + HtmlEscape(w) + "</li>\n";
  return out + "</ul>\n";
}

std::string HtmlPage(const std::string& title, const std::string& body) {
  return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "style-src 'unsafe-inline'\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
         HtmlEscape(title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n" + body +
         "</body>\n</html>\n";
}

std::string RenderHtml(const Document& doc) {
  const HtmlShares shares = doc.tool == "lcpilist" ? HtmlShares::kHeat : HtmlShares::kBars;
  std::string body = "<main>\n<h1>" + HtmlEscape(doc.title) + "</h1>\n";
  body += "<section aria-labelledby=\"sources\">\n" + Heading(2, "sources", "Sources") +
          HtmlSources(doc, 3) + "</section>\n";
  body += "<section aria-labelledby=\"report\">\n" + Heading(2, "report", "Report") +
          HtmlTable(doc, doc.shown_table, doc.title, shares) + "</section>\n";
  body += HtmlWarnings(doc.warnings, 2);
  return HtmlPage(doc.title, body + "</main>\n");
}

}  // namespace lcpi::report
