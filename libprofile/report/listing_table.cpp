// listing_table.cpp - lcpilist's report as a Document: the instructions of
// one procedure or range, and its source lines (--lines), each with every
// event's count and share of the range. JSON prints both tables; text and
// CSV the one asked for. With --source, text prints each source line above
// the first instruction of the run it generated.
#include "libprofile/report/cell_format.h"
#include "libprofile/report/percent.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "prog.c:6", or "??" without a source line.
std::string Where(const std::optional<std::string>& file, int line) {
  return file && *file != "??" ? BaseName(*file) + ":" + std::to_string(line) : "??";
}

// The per-event columns of both tables: counts, and shares of the range
// (two decimals in CSV too, as version 1 prints them).
const std::vector<EventColumnKind> kEventKinds = {
    {"counts", "", "", CellType::kCount}, {"percent", "_percent", "%", CellType::kPercent, 2}};

void FillEvents(const Listing& l, const EventColumnIds& ids, const std::vector<uint64_t>& counts,
                TableRow* row) {
  for (size_t e = 0; e < l.header.events.size(); ++e) {
    row->cells[ids[0][e]] = uint64_t{counts[e]};
    row->cells[ids[1][e]] = Percent(counts[e], l.totals[e]);
  }
}

// The columns of each table in the order they are added; the per-event
// columns follow them.
enum InstructionColumn : size_t { kAddress, kOffset, kSize, kInstruction, kFile, kLine, kWhere };
enum SourceLineColumn : size_t { kLineFile, kLineNumber, kLineWhere, kLineText };

// "file" and "line" (JSON), and "prog.c:6" as text and CSV show it.
std::vector<Column> SourceColumns() {
  return {Column("file", CellType::kPath), Column("line", CellType::kInteger),
          Column("line", "line", "where", CellType::kText)};
}

Table InstructionTable(const Listing& l) {
  Table t;
  t.key = "instructions";
  t.columns = {Column("address", CellType::kHex), Column("offset", CellType::kHex),
               Column("size", CellType::kInteger),
               Column("instruction", "instruction", "text", CellType::kText)};
  for (Column& c : SourceColumns()) t.columns.push_back(std::move(c));
  const EventColumnIds events = AddEventColumns(&t, l.header.events, kEventKinds);
  Show(&t, Format::kText, Concat(Concat({kAddress}, EventMajor(events)), {kInstruction}));
  Show(&t, Format::kCsv, Concat(Concat({kAddress}, EventMajor(events)), {kWhere, kInstruction}));
  Show(&t, Format::kJson,
       Concat(Concat({kAddress, kOffset, kSize, kInstruction}, KindMajor(events)), {kFile, kLine}));
  std::string last_where;
  for (const Instruction& in : l.instructions) {
    TableRow row = NewRow(t);
    row.cells[kAddress] = uint64_t{in.address};
    row.cells[kOffset] = uint64_t{in.offset};
    row.cells[kSize] = int64_t{in.size};
    row.cells[kInstruction] = in.text;
    FillEvents(l, events, in.counts, &row);
    if (in.source_file) {
      row.cells[kFile] = *in.source_file;
      row.cells[kLine] = int64_t{in.source_line};
    }
    const std::string here = Where(in.source_file, in.source_line);
    row.cells[kWhere] = here;
    if (l.source && here != last_where) row.text_above = here + ":  " + in.source_text;
    last_where = here;
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table SourceLineTable(const Listing& l) {
  Table t;
  t.key = "lines";
  t.columns = SourceColumns();
  t.columns.push_back(Column("source", "source", "text", CellType::kText));
  const EventColumnIds events = AddEventColumns(&t, l.header.events, kEventKinds);
  Show(&t, Format::kText, Concat(EventMajor(events), {kLineWhere, kLineText}));
  Show(&t, Format::kCsv, Concat(EventMajor(events), {kLineWhere, kLineText}));
  Show(&t, Format::kJson, Concat({kLineFile, kLineNumber, kLineText}, events[0]));
  for (const SourceLineRow& r : l.lines) {
    TableRow row = NewRow(t);
    FillEvents(l, events, r.counts, &row);
    row.cells[kLineFile] = r.file;
    row.cells[kLineNumber] = int64_t{r.line};
    row.cells[kLineWhere] = Where(r.file, r.line);
    row.cells[kLineText] = r.text;
    t.rows.push_back(std::move(row));
  }
  return t;
}

}  // namespace

Document ListingDocument(const Listing& l) {
  const Header& h = l.header;
  Document doc;
  doc.tool = "lcpilist";
  doc.title = "lcpilist: " + l.procedure + " in " + l.image + " (" + l.identity + ")";
  std::string note = "range:    " + Hex(l.lo) + "-" + Hex(l.hi) + ", samples:";
  for (size_t e = 0; e < h.events.size(); ++e) {
    note += std::string(e ? "," : "") + " " + h.events[e].name + " " + std::to_string(l.totals[e]);
  }
  doc.header_notes.push_back(note);
  doc.sources.push_back({h, "", "", 0});
  doc.facts_after = {
      {"procedure", CellType::kText, l.procedure}, {"image", CellType::kPath, l.image},
      {"identity", CellType::kText, l.identity},   {"kind", CellType::kText, ImageKindName(l.kind)},
      {"lo", CellType::kHex, uint64_t{l.lo}},      {"hi", CellType::kHex, uint64_t{l.hi}},
      {"totals", CellType::kCount, l.totals}};
  doc.warnings = l.warnings;
  doc.tables.push_back(InstructionTable(l));
  doc.tables.push_back(SourceLineTable(l));
  doc.shown_table = l.by_lines ? 1 : 0;
  return doc;
}

}  // namespace lcpi::report
