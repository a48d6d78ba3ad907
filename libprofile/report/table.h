// table.h - the one model every report is rendered from. lcpiprof's views,
// lcpilist (per instruction or per source line) and lcpidiff each turn their
// data into a Document: what the report states about its sources (the
// Headers), tables of typed columns and typed cells, and what --top/--keep
// left out. Text, CSV, JSON and HTML are renderers over a Document
// (render_text.cpp, render_csv.cpp, render_json.cpp, render_html.cpp); a new
// format is one more renderer, not one more function per view.
//
// Where the formats of version 1 differ (column order between text and
// CSV/JSON, columns only some formats show, JSON's per-event objects,
// lcpilist's source lines between instructions in text), the difference is
// data here: each table lists its columns per format, and a row may carry a
// line that text prints above it.
#ifndef LCPI_LIBPROFILE_REPORT_TABLE_H
#define LCPI_LIBPROFILE_REPORT_TABLE_H

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "libprofile/report/report.h"

namespace lcpi::report {

// What a cell holds, and so how each format prints it.
enum class CellType {
  kText,     // free text (a status, an instruction): cut to fit, keeps its head
  kName,     // a procedure or command: cut to fit, keeps its head and its end
  kPath,     // a path: text that, cut to fit, keeps its end
  kCount,    // samples: an unsigned integer
  kPercent,  // a share: text 2 decimals, CSV and JSON 4 (Column::csv_decimals)
  kDelta,    // a change in points: text signed ("+1.25"), CSV and JSON as kPercent
  kHex,      // an address or offset: text and CSV "0x1f", JSON a decimal integer
  kInteger,  // any other integer (a pid, a size, a line number)
  kBool,     // true or false
};

// A value, or nothing: an absent cell is empty in text and CSV and leaves its
// key out of a JSON row. Counts per event (Fact only) are a JSON object.
using Cell = std::variant<std::monostate, std::string, uint64_t, int64_t, double, bool,
                          std::vector<uint64_t>>;

struct Column {
  Column() = default;
  Column(std::string title, std::string name, std::string key, CellType type)
      : title(std::move(title)), name(std::move(name)), key(std::move(key)), type(type) {}
  // Most columns go by one name in every format.
  Column(const std::string& name, CellType type) : Column(name, name, name, type) {}

  std::string title;  // text heading ("cycles", "%", "cum%")
  std::string name;   // CSV heading ("cycles_percent")
  std::string key;    // JSON key ("percent")
  CellType type = CellType::kText;
  // A per-event column holds one event's values; JSON gathers the columns
  // that share a key, in a row's order, into one object keyed by event:
  // "counts": {"cycles": 10, "imiss": 2}.
  std::optional<size_t> event;  // index into the document's first Header events
  int csv_decimals = 4;         // kPercent, kDelta in CSV
};

struct TableRow {
  std::vector<Cell> cells;  // one per Column
  // Text only: a line printed above the row, indented (lcpilist --source:
  // "prog.c:6:  s += i;" before the first instruction of each source line).
  std::string text_above;
};

struct Table {
  std::string key;  // JSON: the array's key ("rows", "instructions", "lines")
  std::vector<Column> columns;
  // The columns each format shows, in its order (indexes into columns),
  // indexed by Format (text, CSV, JSON; HTML shows text's columns).
  std::array<std::vector<size_t>, 3> order;
  std::vector<TableRow> rows;
  // JSON: start the per-event objects of a row on a line of their own
  // (lcpiprof's rows, as version 1 prints them).
  bool json_events_on_new_line = false;
};

// A top-level JSON field other than a header or a table ("view", "sort",
// lcpilist's "lo"/"hi"/"totals"); an absent value is null.
struct Fact {
  std::string key;
  CellType type = CellType::kText;
  Cell value;
};

// One source of the numbers. A report of one database has one, unlabelled:
// text prints its "# database/epoch/events/unknown" lines, JSON its fields at
// the top level. lcpidiff has two, labelled "A" and "B": text prints one line
// each with its samples of the compared event, JSON an object under "a"/"b"
// that adds "samples".
struct Source {
  Header header;
  std::string label;     // "" or "A", "B"
  std::string key;       // labelled: the JSON key ("a", "b")
  uint64_t samples = 0;  // labelled: the samples of the compared event
};

// What --top/--keep cut: the rows and, when summed, their counts per event
// of the first source (lcpiprof; lcpidiff states the rows only).
struct Omitted {
  size_t rows = 0;
  std::optional<std::vector<uint64_t>> counts;
};

struct Document {
  std::string tool;  // "lcpiprof", "lcpilist", "lcpidiff"
  // Text: the first header line after "# ", and the lines after the sources'.
  std::string title;
  std::vector<std::string> header_notes;
  std::vector<Source> sources;
  // JSON: the fields around the headers: after "tool" and before the header
  // fields, then after them (in this order).
  std::vector<Fact> facts_before, facts_after;
  std::vector<Table> tables;  // JSON prints them all, in order
  size_t shown_table = 0;     // the one text and CSV print
  std::optional<Omitted> omitted;
  std::vector<std::string> warnings;
};

// Each view as a Document (profile_table.cpp, diff_table.cpp, listing_table.cpp).
Document ProfileDocument(const Profile& profile);
Document DiffDocument(const Diff& diff);
Document ListingDocument(const Listing& listing);
Document EpochListDocument(const EpochList& list);  // epoch_list.cpp

// The renderers; Render picks one by options.format.
std::string RenderText(const Document& doc, int width, bool header);
std::string RenderCsv(const Document& doc);
std::string RenderJson(const Document& doc);
// A self-contained HTML page of the document (render_html.cpp; html_page.h
// composes lcpiprof's page of several documents).
std::string RenderHtml(const Document& doc);
std::string Render(const Document& doc, const RenderOptions& options);

// ----- Building tables (table.cpp)

// Shows `columns` (indexes) in `format`, in this order.
void Show(Table* table, Format format, std::vector<size_t> columns);
// A row of absent cells, one per column of `table`, to fill by index.
TableRow NewRow(const Table& table);

// A kind of per-event column: one column per event, e.g. the counts
// (key "counts", CSV "cycles", text "cycles") or the shares (key "percent",
// CSV "cycles_percent", text "%").
struct EventColumnKind {
  std::string key;     // JSON object key
  std::string suffix;  // CSV heading: the event's name and this
  std::string title;   // text heading; empty: the event's name
  CellType type = CellType::kCount;
  int csv_decimals = 4;
};
// Adds the columns of each kind for each event; [kind][event] is an index.
using EventColumnIds = std::vector<std::vector<size_t>>;
EventColumnIds AddEventColumns(Table* table, const std::vector<EventInfo>& events,
                               const std::vector<EventColumnKind>& kinds);
// Their indexes event by event (text and CSV: "cycles, %, imiss, %") or kind
// by kind (JSON, one object per kind: "counts", then "percent").
std::vector<size_t> EventMajor(const EventColumnIds& ids);
std::vector<size_t> KindMajor(const EventColumnIds& ids);
// `a` then `b`.
std::vector<size_t> Concat(std::vector<size_t> a, const std::vector<size_t>& b);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_TABLE_H
