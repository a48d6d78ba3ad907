// report_format.cpp - renders the reports: text in aligned columns fitted to
// a width (the terminal's), CSV with one header row, and JSON in the stable
// format documented in docs/tools.md ("format": "lcpi-report", "version": 1).
#include <sys/ioctl.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "libprofile/report/report.h"

namespace lcpi::report {

namespace {

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string Pct(double v) { return Fmt("%.2f", v); }
std::string Hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

double Percent(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// ----- Text tables

struct Column {
  std::string title;
  bool right = true;       // numbers: right-aligned
  bool keep_tail = false;  // text cut to fit keeps its end (paths)
};

using Cells = std::vector<std::string>;

std::string Cut(const std::string& s, size_t width, bool keep_tail) {
  if (s.size() <= width) return s;
  if (width <= 3) return s.substr(0, width);
  return keep_tail ? "..." + s.substr(s.size() - (width - 3)) : s.substr(0, width - 3) + "...";
}

// Columns separated by two spaces; the last one is not padded. When the
// table is wider than `width`, the text columns shrink (the last first),
// down to 12 characters each.
std::string TextTable(const std::vector<Column>& cols, const std::vector<Cells>& rows, int width) {
  std::vector<size_t> w(cols.size());
  for (size_t c = 0; c < cols.size(); ++c) {
    w[c] = cols[c].title.size();
    for (const Cells& r : rows) w[c] = std::max(w[c], r[c].size());
  }
  size_t total = 2 * (cols.size() - 1);
  for (size_t x : w) total += x;
  for (size_t c = cols.size(); c-- > 0 && total > static_cast<size_t>(width);) {
    if (cols[c].right || w[c] <= 12) continue;
    size_t cut = std::min(total - width, w[c] - 12);
    w[c] -= cut;
    total -= cut;
  }
  std::string out;
  auto line = [&](const Cells& cells) {
    std::string l;
    for (size_t c = 0; c < cols.size(); ++c) {
      std::string s = Cut(cells[c], w[c], cols[c].keep_tail);
      if (c) l += "  ";
      if (cols[c].right) {
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
  Cells titles;
  for (const Column& c : cols) titles.push_back(c.title);
  line(titles);
  for (const Cells& r : rows) line(r);
  return out;
}

// ----- CSV

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string Csv(const std::vector<std::string>& header, const std::vector<Cells>& rows) {
  std::string out;
  auto line = [&](const Cells& cells) {
    for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + CsvField(cells[i]);
    out += "\n";
  };
  line(header);
  for (const Cells& r : rows) line(r);
  return out;
}

// ----- JSON

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (ch < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          out += buf;
        } else {
          out += static_cast<char>(ch);
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double v) { return Fmt("%.4f", v); }

// {"cycles": 1, "imiss": 2} over the event columns.
template <class T, class F>
std::string JsonByEvent(const Header& h, const std::vector<T>& values, F format) {
  std::string out = "{";
  for (size_t e = 0; e < h.events.size() && e < values.size(); ++e) {
    out += (e ? ", " : "") + JsonString(h.events[e].name) + ": " + format(values[e]);
  }
  return out + "}";
}

std::string U64(uint64_t v) { return std::to_string(v); }

std::string JsonHeader(const Header& h, const std::string& indent) {
  std::string out;
  out += indent + "\"database\": " + JsonString(h.database) + ",\n";
  out += indent + "\"all_epochs\": " + (h.all_epochs ? "true" : "false") + ",\n";
  out += indent + "\"epochs\": [";
  for (size_t i = 0; i < h.epochs.size(); ++i) {
    const EpochInfo& e = h.epochs[i];
    out += std::string(i ? ", " : "") + "{\"id\": " + std::to_string(e.id) +
           ", \"tag\": " + (e.tag ? JsonString(*e.tag) : "null") +
           ", \"started\": " + std::to_string(e.started) +
           ", \"ended\": " + (e.ended ? std::to_string(*e.ended) : "null") + "}";
  }
  out += "],\n" + indent + "\"events\": [";
  for (size_t i = 0; i < h.events.size(); ++i) {
    const EventInfo& e = h.events[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + JsonString(e.name) +
           ", \"used\": " + JsonString(e.used) + ", \"period\": " + U64(e.period) +
           ", \"samples\": " + U64(i < h.totals.size() ? h.totals[i] : 0) + "}";
  }
  out += "],\n" + indent + "\"stats\": {";
  bool first = true;
  for (const auto& [k, v] : h.stats) {
    out += (first ? "" : ", ") + JsonString(k) + ": " + std::to_string(v);
    first = false;
  }
  out += "},\n";
  out += indent + "\"unknown_percent\": " + JsonNumber(h.unknown_percent) + ",\n";
  out += indent + "\"lost_percent\": " + JsonNumber(h.lost_percent) + ",\n";
  return out;
}

std::string JsonWarnings(const std::vector<std::string>& warnings) {
  std::string out = "[";
  for (size_t i = 0; i < warnings.size(); ++i) out += (i ? ", " : "") + JsonString(warnings[i]);
  return out + "]";
}

// ----- Text headers

std::string EpochText(const Header& h) {
  if (h.all_epochs) {
    std::string ids;
    for (const EpochInfo& e : h.epochs) ids += (ids.empty() ? "" : ", ") + std::to_string(e.id);
    return "all (" + ids + ")";
  }
  if (h.epochs.empty()) return "none";
  const EpochInfo& e = h.epochs.front();
  return std::to_string(e.id) + (e.tag ? " (" + *e.tag + ")" : "") + (e.ended ? "" : ", current");
}

std::string TextHeader(const std::string& title, const Header& h) {
  std::string out = "# " + title + "\n";
  out += "# database: " + h.database + "\n";
  out += "# epoch:    " + EpochText(h) + "\n";
  out += "# events:  ";
  for (size_t e = 0; e < h.events.size(); ++e) {
    const EventInfo& ev = h.events[e];
    out += std::string(e ? "; " : " ") + ev.name;
    if (ev.used != ev.name) out += " (sampled as " + ev.used + ")";
    out += " every " + U64(ev.period) + ": " + U64(h.totals[e]) + " samples";
  }
  out += "\n# unknown:  " + Pct(h.unknown_percent) + "%, lost: " + Pct(h.lost_percent) +
         "% (of the daemon's samples)\n";
  return out;
}

// Event columns of a row: count, %, cum% for each event.
void EventCells(const Header& h, const std::vector<uint64_t>& counts, std::vector<uint64_t>* cum,
                Cells* cells) {
  for (size_t e = 0; e < h.events.size(); ++e) {
    (*cum)[e] += counts[e];
    cells->push_back(U64(counts[e]));
    cells->push_back(Pct(Percent(counts[e], h.totals[e])));
    cells->push_back(Pct(Percent((*cum)[e], h.totals[e])));
  }
}

}  // namespace

int OutputWidth(int requested, int fd) {
  if (requested > 0) return requested;
  struct winsize ws {};
  if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  if (const char* columns = std::getenv("COLUMNS")) {
    int c = std::atoi(columns);
    if (c > 0) return c;
  }
  return 100;
}

std::string RenderProfile(const Profile& p, const RenderOptions& options) {
  const Header& h = p.header;
  std::vector<Cells> rows;
  std::vector<uint64_t> cum(h.events.size(), 0);
  std::vector<std::vector<double>> cum_pct;
  for (const Row& r : p.rows) {
    Cells c;
    EventCells(h, r.counts, &cum, &c);
    std::vector<double> cp;
    for (size_t e = 0; e < h.events.size(); ++e) cp.push_back(Percent(cum[e], h.totals[e]));
    cum_pct.push_back(cp);
    switch (p.view) {
      case View::kImages:
        c.push_back(r.name);
        break;
      case View::kProcedures:
        c.push_back(r.name);
        c.push_back(r.image);
        break;
      case View::kProcesses:
        c.push_back(std::to_string(r.pid));
        c.push_back(r.name);
        break;
    }
    rows.push_back(std::move(c));
  }

  if (options.format == Format::kText) {
    std::vector<Column> cols;
    for (const EventInfo& e : h.events) {
      cols.push_back({e.name});
      cols.push_back({"%"});
      cols.push_back({"cum%"});
    }
    switch (p.view) {
      case View::kImages:
        cols.push_back({"image", false, true});
        break;
      case View::kProcedures:
        cols.push_back({"procedure", false, false});
        cols.push_back({"image", false, true});
        break;
      case View::kProcesses:
        cols.push_back({"pid"});
        cols.push_back({"command", false, false});
        break;
    }
    std::string out;
    if (options.header) {
      std::string title = std::string("lcpiprof: ") + ViewName(p.view) + ", sorted by " +
                          (h.events.empty() ? "-" : h.events[p.sort_column].name);
      out += TextHeader(title, h);
    }
    out += TextTable(cols, rows, options.width);
    if (p.omitted) {
      out += "# " + std::to_string(p.omitted) + " more rows not shown (--top/--keep):";
      for (size_t e = 0; e < h.events.size(); ++e) {
        out += std::string(e ? "," : "") + " " + h.events[e].name + " " + U64(p.omitted_counts[e]) +
               " (" + Pct(Percent(p.omitted_counts[e], h.totals[e])) + "%)";
      }
      out += "\n";
    }
    return out;
  }

  if (options.format == Format::kCsv) {
    std::vector<std::string> head;
    std::vector<Cells> csv;
    switch (p.view) {
      case View::kImages:
        head = {"image", "identity", "kind"};
        break;
      case View::kProcedures:
        head = {"procedure", "image", "identity", "kind", "offset_lo", "offset_hi"};
        break;
      case View::kProcesses:
        head = {"command", "pid"};
        break;
    }
    for (const EventInfo& e : h.events) {
      head.push_back(e.name);
      head.push_back(e.name + "_percent");
      head.push_back(e.name + "_cum_percent");
    }
    std::vector<uint64_t> ccum(h.events.size(), 0);
    for (const Row& r : p.rows) {
      Cells c;
      switch (p.view) {
        case View::kImages:
          c = {r.name, r.identity, r.kind};
          break;
        case View::kProcedures:
          c = {r.name, r.image, r.identity, r.kind, Hex(r.lo), Hex(r.hi)};
          break;
        case View::kProcesses:
          c = {r.name, std::to_string(r.pid)};
          break;
      }
      for (size_t e = 0; e < h.events.size(); ++e) {
        ccum[e] += r.counts[e];
        c.push_back(U64(r.counts[e]));
        c.push_back(Fmt("%.4f", Percent(r.counts[e], h.totals[e])));
        c.push_back(Fmt("%.4f", Percent(ccum[e], h.totals[e])));
      }
      csv.push_back(std::move(c));
    }
    return Csv(head, csv);
  }

  // JSON
  std::string out = "{\n  \"format\": \"lcpi-report\",\n  \"version\": 1,\n";
  out += "  \"tool\": \"lcpiprof\",\n  \"view\": " + JsonString(ViewName(p.view)) + ",\n";
  out += JsonHeader(h, "  ");
  out += "  \"sort\": " +
         (h.events.empty() ? std::string("null") : JsonString(h.events[p.sort_column].name)) +
         ",\n";
  out += "  \"rows\": [";
  for (size_t i = 0; i < p.rows.size(); ++i) {
    const Row& r = p.rows[i];
    out += std::string(i ? "," : "") + "\n    {\"name\": " + JsonString(r.name);
    if (p.view == View::kProcedures) {
      out += ", \"image\": " + JsonString(r.image) +
             ", \"symbol\": " + (r.symbol ? "true" : "false") + ", \"offset_lo\": " + U64(r.lo) +
             ", \"offset_hi\": " + U64(r.hi);
    }
    if (p.view != View::kProcesses) {
      out += ", \"identity\": " + JsonString(r.identity) + ", \"kind\": " + JsonString(r.kind);
    } else {
      out += ", \"pid\": " + std::to_string(r.pid);
    }
    std::vector<double> pct;
    for (size_t e = 0; e < h.events.size(); ++e) pct.push_back(Percent(r.counts[e], h.totals[e]));
    out += ",\n     \"counts\": " + JsonByEvent(h, r.counts, U64);
    out += ", \"percent\": " + JsonByEvent(h, pct, JsonNumber);
    out += ", \"cum_percent\": " + JsonByEvent(h, cum_pct[i], JsonNumber) + "}";
  }
  out += p.rows.empty() ? "],\n" : "\n  ],\n";
  out += "  \"omitted\": {\"rows\": " + std::to_string(p.omitted) +
         ", \"counts\": " + JsonByEvent(h, p.omitted_counts, U64) + "},\n";
  out += "  \"warnings\": " + JsonWarnings(p.warnings) + "\n}\n";
  return out;
}

std::string RenderDiff(const Diff& d, const RenderOptions& options) {
  const bool procs = d.view == View::kProcedures;
  auto signed_pct = [](double v) { return Fmt("%+.2f", v); };
  auto total = [&](const Header& h) {
    for (size_t e = 0; e < h.events.size(); ++e) {
      if (h.events[e].name == d.event) return h.totals[e];
    }
    return uint64_t{0};
  };
  if (options.format == Format::kText) {
    std::vector<Column> cols = {{"A%"}, {"B%"}, {"delta"}, {"A"}, {"B"}, {"status", false}};
    cols.push_back({procs ? "procedure" : "image", false, !procs});
    if (procs) cols.push_back({"image", false, true});
    std::vector<Cells> rows;
    for (const DiffRow& r : d.rows) {
      Cells c = {Pct(r.share_a), Pct(r.share_b), signed_pct(r.delta),
                 U64(r.count_a), U64(r.count_b), r.status,
                 r.name};
      if (procs) c.push_back(r.image);
      rows.push_back(std::move(c));
    }
    std::string out;
    if (options.header) {
      out += std::string("# lcpidiff: ") + ViewName(d.view) + ", event " + d.event +
             ", sorted by the largest change in share\n";
      out += "# A: " + d.a.database + ", epoch " + EpochText(d.a) + ", " + U64(total(d.a)) +
             " samples\n";
      out += "# B: " + d.b.database + ", epoch " + EpochText(d.b) + ", " + U64(total(d.b)) +
             " samples\n";
    }
    out += TextTable(cols, rows, options.width);
    if (d.omitted)
      out += "# " + std::to_string(d.omitted) + " more rows not shown (--top/--keep)\n";
    return out;
  }
  if (options.format == Format::kCsv) {
    std::vector<std::string> head = {procs ? "procedure" : "image"};
    if (procs) head.push_back("image");
    for (const char* s : {"count_a", "count_b", "percent_a", "percent_b", "delta", "status"}) {
      head.push_back(s);
    }
    std::vector<Cells> rows;
    for (const DiffRow& r : d.rows) {
      Cells c = {r.name};
      if (procs) c.push_back(r.image);
      for (const std::string& s : {U64(r.count_a), U64(r.count_b), Fmt("%.4f", r.share_a),
                                   Fmt("%.4f", r.share_b), Fmt("%.4f", r.delta), r.status}) {
        c.push_back(s);
      }
      rows.push_back(std::move(c));
    }
    return Csv(head, rows);
  }
  std::string out = "{\n  \"format\": \"lcpi-report\",\n  \"version\": 1,\n";
  out += "  \"tool\": \"lcpidiff\",\n  \"view\": " + JsonString(ViewName(d.view)) + ",\n";
  out += "  \"event\": " + JsonString(d.event) + ",\n";
  out +=
      "  \"a\": {\n" + JsonHeader(d.a, "    ") + "    \"samples\": " + U64(total(d.a)) + "\n  },\n";
  out +=
      "  \"b\": {\n" + JsonHeader(d.b, "    ") + "    \"samples\": " + U64(total(d.b)) + "\n  },\n";
  out += "  \"rows\": [";
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const DiffRow& r = d.rows[i];
    out += std::string(i ? "," : "") + "\n    {\"name\": " + JsonString(r.name);
    if (procs) out += ", \"image\": " + JsonString(r.image);
    out += ", \"count_a\": " + U64(r.count_a) + ", \"count_b\": " + U64(r.count_b) +
           ", \"percent_a\": " + JsonNumber(r.share_a) +
           ", \"percent_b\": " + JsonNumber(r.share_b) + ", \"delta\": " + JsonNumber(r.delta) +
           ", \"status\": " + JsonString(r.status) + "}";
  }
  out += d.rows.empty() ? "],\n" : "\n  ],\n";
  out += "  \"omitted\": {\"rows\": " + std::to_string(d.omitted) + "},\n";
  out += "  \"warnings\": " + JsonWarnings(d.warnings) + "\n}\n";
  return out;
}

std::string RenderListing(const Listing& l, const RenderOptions& options) {
  const Header& h = l.header;
  auto source_name = [](const std::optional<std::string>& f, int line) {
    return f ? BaseName(*f) + ":" + std::to_string(line) : std::string("??");
  };
  if (options.format == Format::kJson) {
    std::string out = "{\n  \"format\": \"lcpi-report\",\n  \"version\": 1,\n";
    out += "  \"tool\": \"lcpilist\",\n";
    out += JsonHeader(h, "  ");
    out += "  \"procedure\": " + JsonString(l.procedure) +
           ",\n  \"image\": " + JsonString(l.image) +
           ",\n  \"identity\": " + JsonString(l.identity) + ",\n  \"kind\": " + JsonString(l.kind) +
           ",\n  \"lo\": " + U64(l.lo) + ",\n  \"hi\": " + U64(l.hi) +
           ",\n  \"totals\": " + JsonByEvent(h, l.totals, U64) + ",\n  \"instructions\": [";
    for (size_t i = 0; i < l.instructions.size(); ++i) {
      const Instruction& in = l.instructions[i];
      std::vector<double> pct;
      for (size_t e = 0; e < h.events.size(); ++e)
        pct.push_back(Percent(in.counts[e], l.totals[e]));
      out += std::string(i ? "," : "") + "\n    {\"address\": " + U64(in.address) +
             ", \"offset\": " + U64(in.offset) + ", \"size\": " + std::to_string(in.size) +
             ", \"text\": " + JsonString(in.text) +
             ", \"counts\": " + JsonByEvent(h, in.counts, U64) +
             ", \"percent\": " + JsonByEvent(h, pct, JsonNumber);
      if (in.source_file) {
        out += ", \"file\": " + JsonString(*in.source_file) +
               ", \"line\": " + std::to_string(in.source_line);
      }
      out += "}";
    }
    out += l.instructions.empty() ? "],\n" : "\n  ],\n";
    out += "  \"lines\": [";
    for (size_t i = 0; i < l.lines.size(); ++i) {
      const SourceLineRow& r = l.lines[i];
      out += std::string(i ? "," : "") + "\n    {\"file\": " + JsonString(r.file) +
             ", \"line\": " + std::to_string(r.line) + ", \"text\": " + JsonString(r.text) +
             ", \"counts\": " + JsonByEvent(h, r.counts, U64) + "}";
    }
    out += l.lines.empty() ? "],\n" : "\n  ],\n";
    out += "  \"warnings\": " + JsonWarnings(l.warnings) + "\n}\n";
    return out;
  }

  std::vector<Cells> rows;
  std::vector<Column> cols;
  std::vector<std::string> csv_head;
  if (l.by_lines) {
    for (const SourceLineRow& r : l.lines) {
      Cells c;
      for (size_t e = 0; e < h.events.size(); ++e) {
        c.push_back(U64(r.counts[e]));
        c.push_back(Pct(Percent(r.counts[e], l.totals[e])));
      }
      c.push_back(r.file == "??" ? "??" : BaseName(r.file) + ":" + std::to_string(r.line));
      c.push_back(r.text);
      rows.push_back(std::move(c));
    }
  } else {
    for (const Instruction& in : l.instructions) {
      Cells c = {Hex(in.address)};
      for (size_t e = 0; e < h.events.size(); ++e) {
        c.push_back(U64(in.counts[e]));
        c.push_back(Pct(Percent(in.counts[e], l.totals[e])));
      }
      if (options.format == Format::kCsv) c.push_back(source_name(in.source_file, in.source_line));
      c.push_back(in.text);
      rows.push_back(std::move(c));
    }
  }

  if (options.format == Format::kCsv) {
    if (!l.by_lines) csv_head.push_back("address");
    for (const EventInfo& e : h.events) {
      csv_head.push_back(e.name);
      csv_head.push_back(e.name + "_percent");
    }
    if (l.by_lines) {
      csv_head.push_back("line");
      csv_head.push_back("source");
    } else {
      csv_head.push_back("line");
      csv_head.push_back("instruction");
    }
    return Csv(csv_head, rows);
  }

  if (!l.by_lines) cols.push_back({"address"});
  for (const EventInfo& e : h.events) {
    cols.push_back({e.name});
    cols.push_back({"%"});
  }
  if (l.by_lines) {
    cols.push_back({"line", false});
    cols.push_back({"source", false});
  } else {
    cols.push_back({"instruction", false});
  }
  std::string out;
  if (options.header) {
    out += TextHeader("lcpilist: " + l.procedure + " in " + l.image + " (" + l.identity + ")", h);
    out += "# range:    " + Hex(l.lo) + "-" + Hex(l.hi) + ", samples:";
    for (size_t e = 0; e < h.events.size(); ++e) {
      out += std::string(e ? "," : "") + " " + h.events[e].name + " " + U64(l.totals[e]);
    }
    out += "\n";
  }
  std::string table = TextTable(cols, rows, options.width);
  if (!l.source || l.by_lines) return out + table;
  // Interleave: a source line before the first instruction of each run.
  std::istringstream lines(table);
  std::string line;
  std::getline(lines, line);
  out += line + "\n";
  std::string last;
  for (const Instruction& in : l.instructions) {
    std::getline(lines, line);
    std::string where = source_name(in.source_file, in.source_line);
    if (where != last) {
      out += "    " + where + ":  " + in.source_text + "\n";
      last = where;
    }
    out += line + "\n";
  }
  return out;
}

}  // namespace lcpi::report
