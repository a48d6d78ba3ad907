// table.cpp - the helpers the Documents of the views are built with: adding
// columns (per event too), choosing each format's columns, empty rows.
#include "libprofile/report/table.h"

namespace lcpi::report {

namespace {

size_t AddColumn(Table* table, Column column) {
  table->columns.push_back(std::move(column));
  return table->columns.size() - 1;
}

}  // namespace

void Show(Table* table, Format format, std::vector<size_t> columns) {
  table->order[static_cast<size_t>(format)] = std::move(columns);
}

TableRow NewRow(const Table& table) {
  TableRow row;
  row.cells.resize(table.columns.size());
  return row;
}

EventColumnIds AddEventColumns(Table* table, const std::vector<EventInfo>& events,
                               const std::vector<EventColumnKind>& kinds) {
  EventColumnIds ids(kinds.size());
  for (size_t k = 0; k < kinds.size(); ++k) {
    for (size_t e = 0; e < events.size(); ++e) {
      const EventColumnKind& kind = kinds[k];
      Column c;
      c.title = kind.title.empty() ? events[e].name : kind.title;
      c.name = events[e].name + kind.suffix;
      c.key = kind.key;
      c.type = kind.type;
      c.event = e;
      c.csv_decimals = kind.csv_decimals;
      ids[k].push_back(AddColumn(table, std::move(c)));
    }
  }
  return ids;
}

std::vector<size_t> EventMajor(const EventColumnIds& ids) {
  std::vector<size_t> out;
  const size_t events = ids.empty() ? 0 : ids.front().size();
  for (size_t e = 0; e < events; ++e) {
    for (const std::vector<size_t>& kind : ids) out.push_back(kind[e]);
  }
  return out;
}

std::vector<size_t> KindMajor(const EventColumnIds& ids) {
  std::vector<size_t> out;
  for (const std::vector<size_t>& kind : ids) out.insert(out.end(), kind.begin(), kind.end());
  return out;
}

std::vector<size_t> Concat(std::vector<size_t> a, const std::vector<size_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace lcpi::report
