// render_text.cpp - a Document as text for a terminal: "#" header lines (the
// title, what each source states, notes), the shown table in columns aligned
// and fitted to a width, and a last "#" line for the rows --top/--keep cut.
// Every text from the database or a file is Printable (base/text.h), so a
// line is a row.
#include <algorithm>
#include <optional>

#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/report/cell_format.h"
#include "libprofile/report/observer_cost.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

constexpr size_t kTextFormat = static_cast<size_t>(Format::kText);
// Text columns cut to fit the width keep at least this many characters.
constexpr size_t kNarrowest = 12;

bool RightAligned(CellType type) {
  return type != CellType::kText && type != CellType::kName && type != CellType::kPath;
}

// Columns separated by two spaces; the last one is not padded. When the
// table is wider than `width`, the text columns shrink (the last first),
// down to kNarrowest characters each. A row's text_above line comes first.
std::string TextTable(const Table& table, int width) {
  const std::vector<size_t>& order = table.order[kTextFormat];
  std::vector<const Column*> cols;
  for (size_t c : order) cols.push_back(&table.columns[c]);
  std::vector<std::vector<std::string>> cells;
  for (const TableRow& row : table.rows) {
    std::vector<std::string> line;
    for (size_t c : order) line.push_back(CellText(table.columns[c], row.cells[c], Format::kText));
    cells.push_back(std::move(line));
  }
  std::vector<size_t> w(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    w[c] = cols[c]->title.size();
    for (const auto& line : cells) w[c] = std::max(w[c], line[c].size());
  }
  size_t total = cols.empty() ? 0 : 2 * (cols.size() - 1);
  for (size_t x : w) total += x;
  for (size_t c = cols.size(); c-- > 0 && total > static_cast<size_t>(width);) {
    if (RightAligned(cols[c]->type) || w[c] <= kNarrowest) continue;
    size_t cut = std::min(total - width, w[c] - kNarrowest);
    w[c] -= cut;
    total -= cut;
  }
  std::string out;
  auto print = [&](const std::vector<std::string>& line) {
    std::string l;
    for (size_t c = 0; c < cols.size(); ++c) {
      const bool both_ends = cols[c]->type == CellType::kPath || cols[c]->type == CellType::kName;
      std::string s = CutText(line[c], w[c], both_ends);
      if (c) l += "  ";
      if (RightAligned(cols[c]->type)) {
        l += std::string(w[c] - s.size(), ' ') + s;
      } else if (c + 1 < cols.size()) {
        l += s + std::string(w[c] - s.size(), ' ');
      } else {
        l += s;
      }
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  std::vector<std::string> titles;
  for (const Column* c : cols) titles.push_back(c->title);
  print(titles);
  for (size_t r = 0; r < table.rows.size(); ++r) {
    if (!table.rows[r].text_above.empty())
      out += "    " + Printable(table.rows[r].text_above) + "\n";
    print(cells[r]);
  }
  return out;
}

std::string EpochText(const Header& h) {
  if (h.all_epochs) {
    std::string ids;
    for (const EpochInfo& e : h.epochs) ids += (ids.empty() ? "" : ", ") + std::to_string(e.id);
    return "all (" + ids + ")";
  }
  if (h.epochs.empty()) return "none";
  if (h.epochs.size() > 1) {  // a tag's span or a time range: summed
    std::string ids;
    for (const EpochInfo& e : h.epochs) ids += (ids.empty() ? "" : ", ") + std::to_string(e.id);
    const EpochInfo& first = h.epochs.front();
    return std::to_string(h.epochs.size()) + " summed (" + ids + ")" +
           (first.tag ? ", from " + Printable(*first.tag) : "") +
           (h.epochs.back().ended ? "" : ", current");
  }
  const EpochInfo& e = h.epochs.front();
  return std::to_string(e.id) + (e.tag ? " (" + Printable(*e.tag) + ")" : "") +
         (e.ended ? "" : ", current");
}

// An unlabelled source: its database, epoch(s), events and shares.
std::string SourceLines(const Header& h) {
  std::string out = "# database: " + Printable(h.database) + "\n";
  out += "# epoch:    " + EpochText(h) + "\n";
  if (!h.range.empty() && !h.epochs.empty()) {
    // What the summed epochs cover: whole windows, so maybe more than asked.
    const EpochInfo& last = h.epochs.back();
    out += "# time:     " + FormatUtc(h.epochs.front().started) + " to " +
           (last.ended ? FormatUtc(*last.ended) : std::string("now")) +
           " (asked: " + (h.range.since ? FormatUtc(*h.range.since) : std::string("the start")) +
           " to " + (h.range.until ? FormatUtc(*h.range.until) : std::string("now")) + ")\n";
  }
  out += "# events:  ";
  for (size_t e = 0; e < h.events.size(); ++e) {
    const EventInfo& ev = h.events[e];
    out += std::string(e ? "; " : " ") + Printable(ev.name);
    if (ev.used != ev.name) out += " (sampled as " + Printable(ev.used) + ")";
    out += " every " + std::to_string(ev.period);
    if (e < h.precise.size() && h.precise[e] > 0)
      out += ", precise_ip " + std::to_string(h.precise[e]);
    if (e < h.periods.size() && !h.periods[e].empty()) {
      std::string all;
      for (uint64_t p : h.periods[e]) all += (all.empty() ? "" : ", ") + std::to_string(p);
      out += " (the newest epoch's; these epochs used " + all + ")";
    }
    out += ": " + std::to_string(h.totals[e]) + " samples";
    if (const std::string note = MultiplexNote(h, e); !note.empty()) out += " (" + note + ")";
  }
  out += "\n# unknown:  " + Fixed(h.unknown_percent, 2) + "%, lost: " + Fixed(h.lost_percent, 2) +
         "% (of the daemon's samples)";
  if (h.throttled_percent > 0)
    out += "; throttled: about " + Fixed(h.throttled_percent, 2) + "% never taken (estimated)";
  out += "\n# cost:     " + CostSentence(h.cost, WindowsRead(h)) + "\n";
  return out;
}

// A labelled source (lcpidiff's A and B), on one line.
std::string SourceLine(const Source& s) {
  return "# " + Printable(s.label) + ": " + Printable(s.header.database) + ", epoch " +
         EpochText(s.header) + ", " + std::to_string(s.samples) + " samples\n";
}

std::string OmittedLine(const Document& doc) {
  if (!doc.omitted || doc.omitted->rows == 0) return "";
  std::string out =
      "# " + std::to_string(doc.omitted->rows) + " more rows not shown (--top/--keep)";
  if (doc.omitted->counts) {
    const Header& h = doc.sources.front().header;
    const std::vector<uint64_t>& counts = *doc.omitted->counts;
    out += ":";
    for (size_t e = 0; e < h.events.size(); ++e) {
      out += std::string(e ? "," : "") + " " + Printable(h.events[e].name) + " " +
             std::to_string(counts[e]) + " (" + Fixed(Percent(counts[e], h.totals[e]), 2) + "%)";
    }
  }
  return out + "\n";
}

}  // namespace

std::string RenderText(const Document& doc, int width, bool header) {
  std::string out;
  if (header) {
    out += "# " + Printable(doc.title) + "\n";
    for (const Source& s : doc.sources)
      out += s.label.empty() ? SourceLines(s.header) : SourceLine(s);
    for (const std::string& note : doc.header_notes) out += "# " + Printable(note) + "\n";
  }
  out += TextTable(doc.tables[doc.shown_table], width);
  return out + OmittedLine(doc);
}

}  // namespace lcpi::report
