// render_json.cpp - a Document as the stable JSON of docs/tools.md
// ("format": "lcpi-report", "version": 1), byte for byte as version 1 has
// always printed it: the envelope, the facts before the header fields, the
// header fields (top level, or under "a"/"b" for labelled sources), the facts
// after them, every table as an array of row objects, the omitted summary
// and the warnings. Per-event columns become objects keyed by event. The
// envelope is generic: each tool's own top-level keys are the Document's
// facts, so no tool has code here.
#include "libprofile/report/cell_format.h"
#include "libprofile/report/observer_cost.h"
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

constexpr size_t kJsonFormat = static_cast<size_t>(Format::kJson);

// {"cycles": 1, "imiss": 2}: `values` in the order of the header's events.
std::string ByEvent(const Header& h, const std::vector<std::string>& values) {
  std::string out = "{";
  for (size_t e = 0; e < h.events.size() && e < values.size(); ++e) {
    out += (e ? ", " : "") + JsonString(h.events[e].name) + ": " + values[e];
  }
  return out + "}";
}

std::string CountsByEvent(const Header& h, const std::vector<uint64_t>& counts) {
  std::vector<std::string> values;
  for (uint64_t c : counts) values.push_back(std::to_string(c));
  return ByEvent(h, values);
}

// What the profile cost (observer_cost.h): its figures and the header's
// sentence, or "measured": false and the sentence saying so.
std::string CostObject(const Header& h) {
  const std::string text = JsonString(CostSentence(h.cost, WindowsRead(h)));
  const std::optional<CostFigures> f = FiguresOf(h.cost);
  if (!f) return "{\"measured\": false, \"text\": " + text + "}";
  std::string out = "{\"measured\": true, \"percent\": " + Fixed(f->percent, 4) +
                    ", \"ci95_percent\": " + Fixed(f->ci95_percent, 4) +
                    ", \"interrupt_ns_per_sample\": " + Fixed(f->interrupt_ns, 1) +
                    ", \"daemon_ns_per_sample\": " + Fixed(f->daemon_ns, 1);
  if (f->module_ns) out += ", \"module_handler_ns_per_sample\": " + Fixed(*f->module_ns, 1);
  out += ", \"samples_per_s_per_cpu\": " + Fixed(f->rate, 1);
  if (h.cost->stack_samples) out += ", \"stacks_per_s_per_cpu\": " + Fixed(f->stack_rate, 1);
  return out + ", \"text\": " + text + "}";
}

std::string HeaderFields(const Header& h, const std::string& indent) {
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
  out += "],\n";
  // --since/--until, only when given: unix seconds, as "started" and "ended".
  if (h.range.since) out += indent + "\"since\": " + std::to_string(*h.range.since) + ",\n";
  if (h.range.until) out += indent + "\"until\": " + std::to_string(*h.range.until) + ",\n";
  out += indent + "\"events\": [";
  for (size_t i = 0; i < h.events.size(); ++i) {
    const EventInfo& e = h.events[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + JsonString(e.name) +
           ", \"used\": " + JsonString(e.used) + ", \"period\": " + std::to_string(e.period);
    // Only when above 0 (the PMU's plain interrupt, with skid): precise_ip.
    if (i < h.precise.size() && h.precise[i] > 0)
      out += ", \"precise\": " + std::to_string(h.precise[i]);
    out += ", \"samples\": " + std::to_string(i < h.totals.size() ? h.totals[i] : 0);
    // Only when the PMU multiplexed the event: the scale its counts (and
    // samples) were multiplied by, and the share of the time it ran.
    if (i < h.scale.size() && h.scale[i] != 1.0) {
      out += ", \"scale\": " + Fixed(h.scale[i], 4) + ", \"running_percent\": " +
             Fixed(100.0 * static_cast<double>(h.time_running[i]) /
                       static_cast<double>(h.time_enabled[i]),
                   4);
    }
    // Only when the epochs read differ: every period they used.
    if (i < h.periods.size() && !h.periods[i].empty()) {
      out += ", \"periods\": [";
      for (size_t p = 0; p < h.periods[i].size(); ++p)
        out += (p ? ", " : "") + std::to_string(h.periods[i][p]);
      out += "]";
    }
    out += "}";
  }
  out += "],\n" + indent + "\"stats\": {";
  bool first = true;
  for (const auto& [k, v] : h.stats) {
    out += (first ? "" : ", ") + JsonString(k) + ": " + std::to_string(v);
    first = false;
  }
  out += "},\n";
  out += indent + "\"unknown_percent\": " + Fixed(h.unknown_percent, 4) + ",\n";
  out += indent + "\"lost_percent\": " + Fixed(h.lost_percent, 4) + ",\n";
  out += indent + "\"cost\": " + CostObject(h) + ",\n";
  return out;
}

std::string SourceFields(const Source& s) {
  if (s.label.empty()) return HeaderFields(s.header, "  ");
  return "  " + JsonString(s.key) + ": {\n" + HeaderFields(s.header, "    ") +
         "    \"samples\": " + std::to_string(s.samples) + "\n  },\n";
}

std::string FactField(const Header& h, const Fact& f) {
  const auto* counts = std::get_if<std::vector<uint64_t>>(&f.value);
  Column as{f.key, f.key, f.key, f.type};
  return "  " + JsonString(f.key) + ": " +
         (counts ? CountsByEvent(h, *counts) : CellText(as, f.value, Format::kJson)) + ",\n";
}

// One row: its JSON columns in order; consecutive per-event columns with the
// same key make one object; absent cells are left out.
std::string RowObject(const Header& h, const Table& table, const TableRow& row) {
  const std::vector<size_t>& order = table.order[kJsonFormat];
  std::string out = "{";
  bool first = true, events_seen = false;
  for (size_t i = 0; i < order.size();) {
    const Column& column = table.columns[order[i]];
    std::string value;
    if (column.event) {
      std::vector<std::string> values;
      for (; i < order.size() && table.columns[order[i]].event &&
             table.columns[order[i]].key == column.key;
           ++i) {
        values.push_back(CellText(table.columns[order[i]], row.cells[order[i]], Format::kJson));
      }
      value = ByEvent(h, values);
    } else {
      const Cell& cell = row.cells[order[i++]];
      if (std::holds_alternative<std::monostate>(cell)) continue;
      value = CellText(column, cell, Format::kJson);
    }
    if (!first) {
      out += column.event && !events_seen && table.json_events_on_new_line ? ",\n     " : ", ";
    }
    events_seen = events_seen || column.event.has_value();
    out += JsonString(column.key) + ": " + value;
    first = false;
  }
  return out + "}";
}

std::string TableField(const Header& h, const Table& table) {
  std::string out = "  " + JsonString(table.key) + ": [";
  for (size_t r = 0; r < table.rows.size(); ++r) {
    out += std::string(r ? "," : "") + "\n    " + RowObject(h, table, table.rows[r]);
  }
  return out + (table.rows.empty() ? "],\n" : "\n  ],\n");
}

std::string Warnings(const std::vector<std::string>& warnings) {
  std::string out = "[";
  for (size_t i = 0; i < warnings.size(); ++i) out += (i ? ", " : "") + JsonString(warnings[i]);
  return out + "]";
}

}  // namespace

std::string RenderJson(const Document& doc) {
  const Header& first = doc.sources.front().header;
  std::string out = "{\n  \"format\": \"lcpi-report\",\n  \"version\": 1,\n";
  out += "  \"tool\": " + JsonString(doc.tool) + ",\n";
  for (const Fact& f : doc.facts_before) out += FactField(first, f);
  for (const Source& s : doc.sources) out += SourceFields(s);
  for (const Fact& f : doc.facts_after) out += FactField(first, f);
  for (const Table& t : doc.tables) out += TableField(first, t);
  if (doc.omitted) {
    out += "  \"omitted\": {\"rows\": " + std::to_string(doc.omitted->rows);
    if (doc.omitted->counts) out += ", \"counts\": " + CountsByEvent(first, *doc.omitted->counts);
    out += "},\n";
  }
  return out + "  \"warnings\": " + Warnings(doc.warnings) + "\n}\n";
}

}  // namespace lcpi::report
