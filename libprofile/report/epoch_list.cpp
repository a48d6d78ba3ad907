// epoch_list.cpp - lcpiprof --epochs: every stored epoch and window, with its
// kind, tag (and the span it belongs to), times, samples and stored rows, as
// a Document (text, CSV, JSON, HTML like every report).
#include <sys/stat.h>

#include "libprofile/base/saturating.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/report/table.h"
#include "libprofile/store/retention.h"

namespace lcpi::report {

Expected<EpochList> BuildEpochList(ProfileDb& db) {
  EpochList list;
  auto header = BeginReport(db, "all", {}, {});
  if (!header) return header.error();
  SnapshotGuard snapshot(db);
  list.header = std::move(*header);
  auto sizes = db.EpochSizes();
  if (!sizes) return sizes.error();
  struct stat st;
  if (::stat(db.path().c_str(), &st) == 0) list.file_bytes = static_cast<uint64_t>(st.st_size);
  uint64_t total_rows = 0;
  for (const EpochSize& s : *sizes) total_rows = SaturatingAdd(total_rows, s.rows);
  const auto spans = SpanTags(list.header.epochs);
  auto size = sizes->begin();
  for (size_t i = 0; i < list.header.epochs.size(); ++i) {
    const EpochInfo& e = list.header.epochs[i];
    EpochListRow row;
    row.epoch = e;
    row.span = spans[i];
    while (size != sizes->end() && size->epoch_id < e.id) ++size;
    if (size != sizes->end() && size->epoch_id == e.id) {
      row.samples = size->samples;
      row.rows = size->rows;
    }
    if (total_rows > 0) {
      row.approx_bytes =
          static_cast<uint64_t>(static_cast<double>(list.file_bytes) *
                                static_cast<double>(row.rows) / static_cast<double>(total_rows));
    }
    list.rows.push_back(std::move(row));
  }
  return list;
}

Document EpochListDocument(const EpochList& list) {
  enum { kId, kKind, kTag, kSpan, kStarted, kEnded, kStartedAt, kEndedAt, kSamples, kRows, kBytes };
  Document doc;
  doc.tool = "lcpiprof";
  doc.title = "lcpiprof --epochs: the epochs and windows stored";
  doc.sources.push_back({list.header, "", "", 0});
  doc.header_notes.push_back(
      "size:     " + std::to_string(list.file_bytes) +
      " bytes on disk; approx_bytes shares it out by rows (a guide, not a measurement)");
  doc.facts_before.push_back({"view", CellType::kText, std::string("epochs")});
  Table t;
  t.key = "rows";  // "epochs" is the header's
  t.columns = {Column("id", CellType::kInteger),
               Column("kind", CellType::kText),
               Column("tag", CellType::kText),
               Column("span", CellType::kText),
               Column("started", "started_unix", "started", CellType::kInteger),
               Column("ended", "ended_unix", "ended", CellType::kInteger),
               Column("started", "started", "started_utc", CellType::kText),
               Column("ended", "ended", "ended_utc", CellType::kText),
               Column("samples", CellType::kCount),
               Column("rows", CellType::kCount),
               Column("~bytes", "approx_bytes", "approx_bytes", CellType::kCount)};
  t.order = {
      {{kId, kKind, kStartedAt, kEndedAt, kSamples, kRows, kBytes, kSpan},
       {kId, kKind, kTag, kSpan, kStartedAt, kEndedAt, kStarted, kEnded, kSamples, kRows, kBytes},
       {kId, kKind, kTag, kSpan, kStarted, kEnded, kStartedAt, kEndedAt, kSamples, kRows, kBytes}}};
  for (const EpochListRow& r : list.rows) {
    const EpochInfo& e = r.epoch;
    TableRow row;
    row.cells.resize(t.columns.size());
    row.cells[kId] = e.id;
    row.cells[kKind] = std::string(EpochKindName(e.kind));
    if (e.tag) row.cells[kTag] = *e.tag;
    if (r.span) row.cells[kSpan] = *r.span;
    row.cells[kStarted] = e.started;
    row.cells[kStartedAt] = FormatUtc(e.started);
    if (e.ended) {
      row.cells[kEnded] = *e.ended;
      row.cells[kEndedAt] = FormatUtc(*e.ended);
    } else {
      row.cells[kEndedAt] = std::string("current");
    }
    row.cells[kSamples] = r.samples;
    row.cells[kRows] = r.rows;
    row.cells[kBytes] = r.approx_bytes;
    t.rows.push_back(std::move(row));
  }
  doc.tables.push_back(std::move(t));
  doc.warnings = list.warnings;
  return doc;
}

}  // namespace lcpi::report
