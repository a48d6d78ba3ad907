// html_test.cpp - the HTML renderer (render_html.cpp) on Documents built by
// hand: every text from the database is escaped (a process chooses its own
// name: "<script>" and "&" must arrive as text), tables are real tables
// (caption, column and row headers), shares are written as numbers beside
// their bars and shading, and the page is self-contained (a lang, a CSP, no
// script, no URL). The page in a browser: tests/integration/html.cmake.
#include <catch2/catch.hpp>

#include "libprofile/report/render_html.h"
#include "libprofile/report/table.h"

namespace {

using namespace lcpi;
using namespace lcpi::report;

const std::string kHostile = "<script>alert('x')</script> & \"co\"";
const std::string kEscaped = "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;co&quot;";

Header HostileHeader() {
  Header h;
  h.database = "/tmp/<b>db</b>&.db";
  h.epochs.push_back({3, kHostile, 1700000000, std::nullopt});
  h.events.push_back({1, "cycles", "cpu-clock", 1000});
  h.totals = {400};
  return h;
}

// A procedures-like table: a hostile procedure and image path, and shares.
Document Procedures() {
  Document doc;
  doc.tool = "lcpiprof";
  doc.title = "lcpiprof: procedures of " + kHostile;
  doc.sources.push_back({HostileHeader(), "", "", 0});
  doc.warnings.push_back("cannot read " + kHostile);
  Table t;
  t.key = "rows";
  t.columns = {Column("procedure", "procedure", "name", CellType::kText),
               Column("image", CellType::kPath)};
  const EventColumnIds ev = AddEventColumns(
      &t, doc.sources[0].header.events,
      {{"counts", "", "", CellType::kCount}, {"percent", "_percent", "%", CellType::kPercent}});
  Show(&t, Format::kText, Concat(EventMajor(ev), {0, 1}));
  TableRow row = NewRow(t);
  row.cells[0] = kHostile;
  row.cells[1] = std::string("/opt/" + kHostile + "/bin");
  row.cells[ev[0][0]] = uint64_t{300};
  row.cells[ev[1][0]] = 75.0;
  row.text_above = "evil.c:1:  " + kHostile;
  t.rows.push_back(std::move(row));
  doc.tables.push_back(std::move(t));
  doc.omitted = Omitted{2, std::vector<uint64_t>{100}};
  return doc;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("HtmlEscape turns markup characters into references") {
  CHECK(HtmlEscape(kHostile) == kEscaped);
  CHECK(HtmlEscape("a&amp;b") == "a&amp;amp;b");
  CHECK(HtmlEscape("plain text 1.5 %") == "plain text 1.5 %");
}

TEST_CASE("HTML page: every text from the database is escaped") {
  const std::string page = RenderHtml(Procedures());
  // No markup from the data: the only '<script' would be the hostile one.
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("</script>") == std::string::npos);
  CHECK(page.find("alert('x')") == std::string::npos);
  CHECK(page.find("<b>db</b>") == std::string::npos);
  // The procedure, the path, the source line, the tag, the warning and the
  // title all arrive as text.
  CHECK(Count(page, kEscaped) >= 6);
  CHECK(page.find("/tmp/&lt;b&gt;db&lt;/b&gt;&amp;.db") != std::string::npos);
  CHECK(page.find("evil.c:1:  " + kEscaped) != std::string::npos);
}

TEST_CASE("HTML page: a cell's control bytes are escaped once, as in the text report") {
  Document doc = Procedures();
  doc.tables[0].rows[0].cells[0] = std::string("\x1b[2J\rpwn\a");
  const std::string page = RenderHtml(doc);
  CHECK(page.find("<th scope=\"row\">\\x1b[2J\\x0dpwn\\x07</th>") != std::string::npos);
  CHECK(page.find("x5c") == std::string::npos);
}

TEST_CASE("HTML page: real tables, self-contained, shares as text") {
  const std::string page = Render(Procedures(), RenderOptions{Format::kHtml, 100, true});
  CHECK(page.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(page.find("Content-Security-Policy\" content=\"default-src 'none'") != std::string::npos);
  CHECK(page.find("://") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("<caption>") != std::string::npos);
  // The name column comes first and heads its row; the share keeps its value.
  CHECK(page.find("<thead><tr><th scope=\"col\">procedure</th><th scope=\"col\" "
                  "class=\"n\">cycles</th><th scope=\"col\" class=\"n\">cycles %</th>") !=
        std::string::npos);
  CHECK(page.find("<tr><th scope=\"row\">" + kEscaped +
                  "</th><td class=\"n\">300</td>"
                  "<td class=\"n share\">75.00<span class=\"bar\" aria-hidden=\"true\">"
                  "<span style=\"width:75.00%\"></span></span></td>") != std::string::npos);
  CHECK(page.find("<tr class=\"src\"><td colspan=\"4\">") != std::string::npos);
  CHECK(page.find("2 more rows not shown (--top/--keep): cycles 100 (25.00 %).") !=
        std::string::npos);
  CHECK(page.find("<strong>cpu-clock</strong> (a fallback)") != std::string::npos);
  CHECK(page.find("2023-11-14 22:13:20 UTC to now") != std::string::npos);
  // Headings in order: h1, then h2s, no level skipped.
  CHECK(page.find("<h1>") < page.find("<h2"));
  CHECK(page.find("<h3") == std::string::npos);
}

TEST_CASE("HTML heat: the shade grows with the share, the value stays") {
  const Document doc = Procedures();
  const std::string heat = HtmlTable(doc, 0, "c", HtmlShares::kHeat);
  CHECK(heat.find("<td class=\"n heat\" style=\"background-color:rgba(214,69,0,0.520)\">75.00"
                  "</td>") != std::string::npos);
  const std::string plain = HtmlTable(doc, 0, "c", HtmlShares::kPlain);
  CHECK(plain.find("<td class=\"n\">75.00</td>") != std::string::npos);
}

TEST_CASE("ParseFormat knows html") {
  auto f = ParseFormat("html");
  REQUIRE(f);
  CHECK(*f == Format::kHtml);
}
