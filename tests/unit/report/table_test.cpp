// table_test.cpp - the table model and its three renderers on Documents
// built by hand, without a database: how each format writes each cell type,
// per-format column orders, per-event JSON objects, absent cells, a row's
// text_above line, the omitted summary, and CSV quoting. The views' own
// Documents are pinned by the golden files (report_test.cpp, tools.cmake).
#include <catch2/catch.hpp>

#include "libprofile/report/cell_format.h"
#include "libprofile/report/table.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;

Header TwoEvents() {
  Header h;
  h.database = "/db";
  h.epochs.push_back({7, std::string("base"), 100, 200});
  h.events.push_back({1, "cycles", "cpu-clock", 1000});
  h.events.push_back({2, "imiss", "imiss", 10});
  h.totals = {200, 10};
  return h;
}

// One table: a name, an address, a JSON-only size, and count and share per
// event; text puts the numbers first, CSV and JSON the name.
Document Sample() {
  Document doc;
  doc.tool = "test";
  doc.title = "test: a table";
  doc.sources.push_back({TwoEvents(), "", "", 0});
  doc.facts_before.push_back({"view", CellType::kText, std::string("things")});
  doc.facts_after.push_back({"sort", CellType::kText, Cell{}});
  Table t;
  t.key = "rows";
  t.columns = {Column("name", CellType::kPath), Column("at", CellType::kHex),
               Column("size", CellType::kInteger)};
  const EventColumnIds ev = AddEventColumns(
      &t, doc.sources[0].header.events,
      {{"counts", "", "", CellType::kCount}, {"percent", "_percent", "%", CellType::kPercent}});
  Show(&t, Format::kText, Concat(EventMajor(ev), {1, 0}));
  Show(&t, Format::kCsv, Concat({0, 1}, EventMajor(ev)));
  Show(&t, Format::kJson, Concat({0, 1, 2}, KindMajor(ev)));
  TableRow a = NewRow(t);
  a.cells[0] = std::string("/a/long/path, \"quoted\"");
  a.cells[1] = uint64_t{0x1f};
  a.cells[2] = int64_t{3};
  a.cells[ev[0][0]] = uint64_t{150};
  a.cells[ev[0][1]] = uint64_t{10};
  a.cells[ev[1][0]] = 75.0;
  a.cells[ev[1][1]] = 100.0;
  a.text_above = "above a";
  TableRow b = NewRow(t);  // no size: absent in JSON
  b.cells[0] = std::string("b");
  b.cells[1] = uint64_t{0x20};
  b.cells[ev[0][0]] = uint64_t{50};
  b.cells[ev[0][1]] = uint64_t{0};
  b.cells[ev[1][0]] = 25.0;
  b.cells[ev[1][1]] = 0.0;
  t.rows = {a, b};
  doc.tables.push_back(std::move(t));
  doc.omitted = Omitted{2, std::vector<uint64_t>{20, 0}};
  doc.warnings = {"careful"};
  return doc;
}

TEST_CASE("each format writes each cell type its own way") {
  const Column percent("p", CellType::kPercent), delta("d", CellType::kDelta),
      hex("h", CellType::kHex), text("t", CellType::kText), flag("b", CellType::kBool);
  CHECK(CellText(percent, 12.345678, Format::kText) == "12.35");
  CHECK(CellText(percent, 12.345678, Format::kCsv) == "12.3457");
  CHECK(CellText(percent, 12.345678, Format::kJson) == "12.3457");
  CHECK(CellText(delta, 1.5, Format::kText) == "+1.50");
  CHECK(CellText(delta, 1.5, Format::kCsv) == "1.5000");
  CHECK(CellText(hex, uint64_t{255}, Format::kText) == "0xff");
  CHECK(CellText(hex, uint64_t{255}, Format::kCsv) == "0xff");
  CHECK(CellText(hex, uint64_t{255}, Format::kJson) == "255");
  CHECK(CellText(text, std::string("a\"b"), Format::kJson) == "\"a\\\"b\"");
  CHECK(CellText(flag, true, Format::kJson) == "true");
  CHECK(CellText(text, Cell{}, Format::kText).empty());
  CHECK(CellText(text, Cell{}, Format::kJson) == "null");
  Column short_csv("p", CellType::kPercent);
  short_csv.csv_decimals = 2;
  CHECK(CellText(short_csv, 12.345678, Format::kCsv) == "12.35");
}

TEST_CASE("text: header, the text columns in their order, text_above, omitted") {
  CHECK(RenderText(Sample(), 200, true) ==
        "# test: a table\n"
        "# database: /db\n"
        "# epoch:    7 (base)\n"
        "# events:   cycles (sampled as cpu-clock) every 1000: 200 samples; imiss every 10: 10 "
        "samples\n"
        "# unknown:  0.00%, lost: 0.00% (of the daemon's samples)\n"
        "# cost:     lcpi cost not measured in this window (no estimate stored)\n"
        "cycles      %  imiss       %    at  name\n"
        "    above a\n"
        "   150  75.00     10  100.00  0x1f  /a/long/path, \"quoted\"\n"
        "    50  25.00      0    0.00  0x20  b\n"
        "# 2 more rows not shown (--top/--keep): cycles 20 (10.00%), imiss 0 (0.00%)\n");
}

TEST_CASE("text: a path cut to fit keeps its head and its end") {
  const std::string text = RenderText(Sample(), 50, false);
  INFO(text);
  CHECK(text.find("  /a/lo...uoted\"\n") != std::string::npos);
}

// A path cut from the front only lets its owner choose what is shown:
// /home/evil/aaa.../usr/lib/x86_64-linux-gnu/libc.so.6 read as the system's
// libc. Cut in the middle, the head says whose it is.
TEST_CASE("text: a long path is cut in the middle, never inside an escape") {
  Document doc = Sample();
  Table& t = doc.tables[0];
  t.rows[0].cells[0] =
      "/home/evil/" + std::string(200, 'a') + "/usr/lib/x86_64-linux-gnu/libc.so.6";
  const std::string out = RenderText(doc, 70, false);
  CHECK(out.find("  /home/evil/aa") != std::string::npos);
  CHECK(out.find("...") != std::string::npos);
  CHECK(out.find("libc.so.6\n") != std::string::npos);
  // Escapes (\xNN, four bytes) are kept whole or dropped whole, for every
  // width the cut may land on.
  t.rows[0].cells[0] = "/h/" + std::string(40, '\x01') + "/libc.so.6";
  for (int width = 50; width < 90; ++width) {
    const std::string narrow = RenderText(doc, width, false);
    const size_t at = narrow.find("  /h/");
    REQUIRE(at != std::string::npos);
    const std::string line = narrow.substr(at + 2, narrow.find('\n', at) - at - 2);
    INFO("width " << width << ": " << line);
    const size_t dots = line.find("...");
    REQUIRE(dots != std::string::npos);
    // The head: "/h/" then whole escapes; the tail: whole escapes then
    // "/libc.so.6", or a part of "/libc.so.6".
    std::string head = line.substr(0, dots), tail = line.substr(dots + 3);
    CHECK(head.starts_with("/h/"));
    head.erase(0, 3);
    while (head.starts_with("\\x01")) head.erase(0, 4);
    CHECK(head.empty());
    bool escapes = false;
    while (tail.starts_with("\\x01")) tail.erase(0, 4), escapes = true;
    CHECK(std::string_view("/libc.so.6").ends_with(tail));
    if (escapes) CHECK(tail == "/libc.so.6");
  }
}

TEST_CASE("CSV: the CSV columns in their order, quoted where needed") {
  CHECK(RenderCsv(Sample()) ==
        "name,at,cycles,cycles_percent,imiss,imiss_percent\n"
        "\"/a/long/path, \"\"quoted\"\"\",0x1f,150,75.0000,10,100.0000\n"
        "b,0x20,50,25.0000,0,0.0000\n");
}

TEST_CASE("CSV: a name's bytes are escaped once, as in the text report") {
  // A command of escape sequences (reliability_test's evil_name) printed
  // \x5cx1b in CSV: the cell escaped, then the field escaped the backslash.
  Document doc = Sample();
  doc.tables[0].rows[1].cells[0] = std::string("\x1b[2J\rpwn\a");
  const std::string csv = RenderCsv(doc);
  CHECK(csv.find("\n\\x1b[2J\\x0dpwn\\x07,0x20,") != std::string::npos);
  CHECK(csv.find("x5c") == std::string::npos);
}

TEST_CASE("JSON: facts, header, per-event objects, absent cells left out") {
  CHECK(RenderJson(Sample()) ==
        "{\n"
        "  \"format\": \"lcpi-report\",\n"
        "  \"version\": 1,\n"
        "  \"tool\": \"test\",\n"
        "  \"view\": \"things\",\n"
        "  \"database\": \"/db\",\n"
        "  \"all_epochs\": false,\n"
        "  \"epochs\": [{\"id\": 7, \"tag\": \"base\", \"started\": 100, \"ended\": 200}],\n"
        "  \"events\": [{\"name\": \"cycles\", \"used\": \"cpu-clock\", \"period\": 1000, "
        "\"samples\": 200}, {\"name\": \"imiss\", \"used\": \"imiss\", \"period\": 10, "
        "\"samples\": 10}],\n"
        "  \"stats\": {},\n"
        "  \"unknown_percent\": 0.0000,\n"
        "  \"lost_percent\": 0.0000,\n"
        "  \"cost\": {\"measured\": false, \"text\": \"lcpi cost not measured in this window (no "
        "estimate stored)\"},\n"
        "  \"sort\": null,\n"
        "  \"rows\": [\n"
        "    {\"name\": \"/a/long/path, \\\"quoted\\\"\", \"at\": 31, \"size\": 3, \"counts\": "
        "{\"cycles\": 150, \"imiss\": 10}, \"percent\": {\"cycles\": 75.0000, \"imiss\": "
        "100.0000}},\n"
        "    {\"name\": \"b\", \"at\": 32, \"counts\": {\"cycles\": 50, \"imiss\": 0}, "
        "\"percent\": {\"cycles\": 25.0000, \"imiss\": 0.0000}}\n"
        "  ],\n"
        "  \"omitted\": {\"rows\": 2, \"counts\": {\"cycles\": 20, \"imiss\": 0}},\n"
        "  \"warnings\": [\"careful\"]\n"
        "}\n");
}

TEST_CASE("JSON: labelled sources go under their keys with their samples") {
  Document doc = Sample();
  doc.sources = {{TwoEvents(), "A", "a", 10}};
  doc.omitted = Omitted{0, std::nullopt};
  const std::string json = RenderJson(doc);
  CHECK(json.find("  \"a\": {\n    \"database\": \"/db\",\n") != std::string::npos);
  CHECK(json.find("    \"samples\": 10\n  },\n") != std::string::npos);
  CHECK(json.find("  \"omitted\": {\"rows\": 0},\n") != std::string::npos);
  CHECK(RenderText(doc, 100, true).find("# A: /db, epoch 7 (base), 10 samples\n") !=
        std::string::npos);
}

TEST_CASE("an empty table renders in every format") {
  Document doc = Sample();
  doc.tables[0].rows.clear();
  doc.omitted.reset();
  CHECK(RenderCsv(doc) == "name,at,cycles,cycles_percent,imiss,imiss_percent\n");
  CHECK(RenderJson(doc).find("  \"rows\": [],\n  \"warnings\"") != std::string::npos);
  CHECK(RenderText(doc, 100, false) == "cycles  %  imiss  %  at  name\n");
}

}  // namespace

// docs/tools.md, "Names in reports": JSON and CSV show the text report's
// display string (Printable), each in its own quoting.
TEST_CASE("JSON strings are the display string: valid UTF-8, valid escapes") {
  using lcpi::report::JsonString;
  CHECK(JsonString("plain") == "\"plain\"");
  // 0xff and DEL: \xNN in the text report, so "\\xNN" in JSON (never the
  // bare byte, and never \x7f, which JSON does not have).
  CHECK(JsonString("a\xff\x7f"
                   "b") == "\"a\\\\xff\\\\x7fb\"");
  // A backslash is \x5c in the text report (so an escape is never
  // ambiguous), so "\\x5c" in JSON: JSON's own rule, nothing more.
  CHECK(JsonString("q\"b\\s") == "\"q\\\"b\\\\x5cs\"");
  CHECK(JsonString("evil\n 1 fake\xc2\x9b") == "\"evil\\\\x0a 1 fake\\\\xc2\\\\x9b\"");
}

TEST_CASE("CSV fields: RFC 4180 quoting, formula prefixes of text neutralised") {
  using lcpi::report::CsvField;
  CHECK(CsvField("libc.so.6", true) == "libc.so.6");
  CHECK(CsvField("a,b", true) == "\"a,b\"");
  CHECK(CsvField("say \"hi\"", true) == "\"say \"\"hi\"\"\"");
  for (const char* formula : {"=cmd|' /C calc'!A0", "+1+2", "-2+3", "@SUM(A1)"}) {
    CHECK(CsvField(formula, true) == std::string("'") + formula);
  }
  CHECK(CsvField("=1,2", true) == "\"'=1,2\"");
  // A newline cannot start a row of its own; a tab is escaped, not a prefix.
  CHECK(CsvField("a\nb", true) == "a\\x0ab");
  CHECK(CsvField("\tx", true) == "\\x09x");
  // Numbers are not text: a negative delta stays a number.
  CHECK(CsvField("-1.25", false) == "-1.25");
}

TEST_CASE("text: a line is a row, whatever the names and header fields hold") {
  Document doc = Sample();
  doc.sources[0].header.database = "/db\n# forged";
  doc.sources[0].header.epochs[0].tag = "tag\n# forged";
  doc.header_notes = {"note\n# forged"};
  Table& t = doc.tables[0];
  t.rows[0].cells[0] = std::string("evil\n 77777  99.99  fake-line");
  t.rows[0].text_above = "src\n 1 fake";
  const std::string out = RenderText(doc, 200, true);
  CHECK(out.find("\n# forged") == std::string::npos);
  CHECK(out.find("\n 77777") == std::string::npos);
  CHECK(out.find("\n 1 fake") == std::string::npos);
  CHECK(out.find("evil\\x0a 77777  99.99  fake-line") != std::string::npos);
  CHECK(out.find("# database: /db\\x0a# forged") != std::string::npos);
  // A path cut to fit is cut between UTF-8 characters, never inside one.
  t.rows[0].cells[0] = std::string("/\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
  const std::string narrow = RenderText(doc, 30, false);
  CHECK(narrow.find("...\xa9") == std::string::npos);
  CHECK(narrow.find("...\xc3\xa9") != std::string::npos);
}
