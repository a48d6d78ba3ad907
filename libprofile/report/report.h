// report.h - the reports of the analysis tools (lcpiprof, lcpilist, lcpidiff)
// as library calls: each Build* reads a ProfileDb opened read-only and returns
// plain data; each Render* turns that data into one table model (table.h)
// and renders it as text (aligned to a width), CSV or JSON. The tools are
// thin command lines around these, and the tests call them directly.
//
// Counts are stored per (epoch, image, event, file offset). Procedures are
// found from the image on disk for user images (ElfImage: file offset ->
// link-time address -> symbol) and from the symbols the daemon stored for the
// kernel and modules (ProfileDb::Symbols, offsets from the image base).
// Samples that no symbol covers are never dropped: they are grouped into
// ranges named "<image>+0x<first>-0x<last>" (or "<image>+0x<offset>").
//
// Nothing here writes to the database. Problems that still allow an answer
// (an image missing on disk, or rebuilt since it was profiled) are returned
// as warnings for the caller to print; problems that do not are Errors.
#ifndef LCPI_LIBPROFILE_REPORT_REPORT_H
#define LCPI_LIBPROFILE_REPORT_REPORT_H

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/store/profile_db.h"
#include "libprofile/store/stat_names.h"

namespace lcpi::report {

// kLabels: the process rows grouped by a label of their cgroup (lcpiprof
// --by unit|container|pod|cgroup; base/cgroup_label.h).
enum class View { kImages, kProcedures, kProcesses, kLabels };
// kHtml: a page (render_html.cpp); kPprof: lcpiprof's binary profile.proto
// (pprof_profile.h), not a renderer.
enum class Format { kText, kCsv, kJson, kHtml, kPprof };

const char* ViewName(View view);  // "images", "procedures", "processes", "labels"
// "text", "csv", "json", "html", "pprof"; kInvalidArgument otherwise.
Expected<Format> ParseFormat(const std::string& name);

// --since/--until as unix seconds (libprofile/base/time_spec.h reads them);
// an unset bound is open.
struct TimeRange {
  std::optional<int64_t> since, until;
  bool empty() const { return !since && !until; }
};

// What every report states about where its numbers come from.
struct Header {
  std::string database;           // the path given to Open
  bool all_epochs = false;        // --epoch all, no time range
  std::vector<EpochInfo> epochs;  // the epochs read, summed, oldest first
  TimeRange range;                // --since/--until, as given
  std::vector<EventInfo> events;  // the event columns, in order
  std::vector<uint64_t> totals;   // samples per event column (all images)
  // Per event column: the distinct periods of the epochs read, ascending,
  // when there is more than one (the configuration changed between them);
  // else empty. events[i].period is the newest epoch's.
  std::vector<std::vector<uint64_t>> periods;
  // Per event column: the perf_event_attr.precise_ip the newest epoch read
  // sampled it with (0: the PMU's plain interrupt, with skid), and the
  // distinct levels of the epochs read, ascending, when they differ.
  std::vector<int> precise;
  std::vector<std::vector<int>> precise_levels;
  // Per event column: ns enabled and running summed over the epochs read
  // (0 and 0: not known, e.g. epochs older than schema 4), and the scale
  // their counts were multiplied by: enabled/running when the PMU
  // multiplexed the event (running < enabled), else 1. totals and every count
  // a report shows are scaled (ScaleCount); the stored counts are raw.
  std::vector<uint64_t> time_enabled, time_running;
  std::vector<double> scale;
  std::map<std::string, int64_t> stats;  // ProfileDb::Stats of the epoch(s)
  // Shares in percent of the daemon's samples: unknown / (attributed +
  // unknown); lost = (lost + dropped) / (attributed + unknown + lost +
  // dropped). Zero when the statistics are empty.
  double unknown_percent = 0;
  double lost_percent = 0;
  // The samples perf's throttling kept from being taken (lcpi.ko's
  // throttled_lost_estimate) in percent of those and the daemon's samples:
  // the share of the samples asked for that never were. Zero when perf did
  // not throttle, or the source does not estimate (the perf source).
  double throttled_percent = 0;
  // What sampling cost in the epochs read (window_costs, summed; none
  // before schema 7 or the first calibration: observer_cost.h), and the
  // identities of lcpid's executable in them (observer_images, ascending):
  // the reports' [lcpi: observer] line.
  std::optional<WindowCost> cost;
  std::vector<std::string> observer_images;
  // A fleet report's header holds one span for all the windows it read
  // (fleet_profile.h): how many they were. 0: as many as epochs.
  size_t fleet_windows = 0;
};

// How many epochs or windows the header's figures sum.
inline size_t WindowsRead(const Header& h) {
  return h.fleet_windows > 0 ? h.fleet_windows : h.epochs.size();
}

// Reads the epoch selection: "" (the newest; with a time range, every
// epoch), "all", a decimal id (that epoch or window alone) or a tag (its
// span: the tagged epoch and the windows after it, up to the next epoch),
// then keeps the epochs that overlap `range`; their counts are summed.
// kNotFound "no such epoch", or no epoch in the range. Each event's used
// name and period are those of the newest selected epoch that recorded them
// (the events row for epochs older than schema 3). `events` limits the event
// columns (by name); empty means every event with samples in the epoch(s).
Expected<Header> ReadHeader(ProfileDb& db, const std::string& epoch, const TimeRange& range,
                            const std::vector<std::string>& events);
// ReadHeader in a read snapshot of `db` begun here, so that every query of
// one report sees the same data; the caller ends the snapshot on success
// (SnapshotGuard), and on an error it is already ended.
Expected<Header> BeginReport(ProfileDb& db, const std::string& epoch, const TimeRange& range,
                             const std::vector<std::string>& events);
// The epochs the ProfileDb queries read for a header.
EpochSet QueryEpoch(const Header& header);
// The unknown, lost and throttled shares of a header from its stats (a
// local report's epochs, or the fleet's windows: fleet_profile.h).
void SetSampleShares(Header& h);
// The statistics those shares and the throttling warning read: all a
// fleet header asks of its windows (fleet_window_facts.h).
inline constexpr const char* kShareStats[] = {"attributed",
                                              "unknown",
                                              "lost",
                                              "dropped",
                                              kPendingDroppedStat,
                                              kRefusedStat,
                                              "quarantined.samples",
                                              "throttled_lost_estimate",
                                              "throttle_events"};

// enabled/running when running < enabled (the PMU multiplexed the event),
// else 1: also when not known (0, 0) or never running (running 0: no
// samples to scale).
double MultiplexScale(uint64_t time_enabled, uint64_t time_running);
// count * header.scale[e], rounded to the nearest integer (a row's count is
// rounded on its own: rows may not add up to the scaled total exactly).
uint64_t ScaleCount(const Header& header, size_t e, uint64_t count);
// How event column e was scaled, as the text header and the HTML events
// table say it: "multiplexed: scaled by 1.60, running 62.5% of enabled";
// "" when it was not.
std::string MultiplexNote(const Header& header, size_t e);
// What a reader must know about how the events were sampled, one line each:
// per event column the PMU multiplexed, "event cycles multiplexed: counts
// scaled by 1.60 (running 62.5% of enabled)"; per event whose epochs read
// were sampled at different precise_ip, "event cycles: the epochs read were
// sampled at precise_ip 0 and 3; their skid differs". None when neither.
std::vector<std::string> EventWarnings(const Header& header);
// Appends the warnings of `from` that `to` does not hold yet: a report of
// parts (lcpidiff's two sides, the HTML page's views) says each once.
void AddWarnings(const std::vector<std::string>& from, std::vector<std::string>* to);

// ----- lcpiprof

// --label KEY=VALUE: the processes whose cgroup's KEY label (unit,
// container, pod, cgroup: CgroupLabelKeys) is VALUE; VALUE "" keeps those
// without one. A container also matches a prefix of its id of 12 digits or
// more (docker's short id).
struct LabelFilter {
  std::string key, value;
};
// kInvalidArgument: no '=', or not a label key.
Expected<LabelFilter> ParseLabel(const std::string& text);

struct ProfOptions {
  View view = View::kImages;
  std::string epoch;                // "" newest, "all", id or tag
  TimeRange range;                  // --since/--until
  std::vector<std::string> events;  // empty: all present
  std::string sort;                 // event to sort by; empty: the first column
  double keep_percent = 0;          // keep rows with at least this share of the sort event
  size_t top = 0;                   // at most this many rows; 0: all
  // lcpi's own samples stay where they fell instead of on the [lcpi:
  // observer] line (observer.h), as lcpiprof --fleet shows them (its hosts'
  // observer pids are not shipped yet)
  bool observer_inline = false;
  // Procedures view: only images whose path contains one of these, or whose
  // identity equals one. kNotFound when one matches no image.
  std::vector<std::string> images;
  // kLabels: the label to group by; kProcesses: a label column to show.
  // Needs a key of CgroupLabelKeys (kInvalidArgument otherwise).
  std::string by;
  // The image, process and label views count only the process rows of
  // processes whose cgroup matches every one (the image view then sums
  // process rows: exact, as they are kept per process and image). The
  // procedure view refuses them (kInvalidArgument): counts per offset are
  // stored per image, not per process.
  std::vector<LabelFilter> labels;
};

struct Row {
  std::string name;                   // image path, procedure name, or process name
  std::string image;                  // procedures: the image path
  std::string identity;               // images, procedures: the image identity
  ImageKind kind = ImageKind::kUser;  // images, procedures
  int64_t image_id = 0;
  uint32_t pid = 0;  // processes
  // processes: samples of lcpid's own pid in the windows where it was
  // lcpid's (ProcessTotal::observer)
  bool observer = false;
  std::string label;             // labels: the value grouped by; processes: the `by` column
  bool symbol = true;            // procedures: false for an image+0x range
  uint64_t lo = 0, hi = 0;       // procedures: offsets of the symbol [lo, hi), or first/last sample
  std::vector<uint64_t> counts;  // per event column
};

struct Profile {
  View view = View::kImages;
  std::string by;                   // ProfOptions::by
  std::vector<LabelFilter> labels;  // ProfOptions::labels
  Header header;
  size_t sort_column = 0;                // index into header.events
  std::vector<Row> rows;                 // sorted, after --top/--keep
  size_t omitted = 0;                    // rows cut by --top/--keep
  std::vector<uint64_t> omitted_counts;  // their samples per event
  std::vector<std::string> warnings;
};

Expected<Profile> BuildProfile(ProfileDb& db, const ProfOptions& options);

// ----- lcpidiff

struct DiffOptions {
  View view = View::kImages;  // images or procedures
  std::string epoch_a, epoch_b;
  TimeRange range_a, range_b;
  std::string event;       // empty: the first event present in both
  double keep_points = 0;  // keep rows whose share changed by at least this many points
  size_t top = 0;
  std::vector<std::string> images;
  // lcpidiff --callers SYM / --callees SYM: the immediate callers (callees)
  // of SYM in A's and B's call stacks, as shares of the stack samples
  // through SYM (BuildCallersDiff, callers.h). The view and event are unused.
  std::string symbol;
  bool callees = false;
};

struct DiffRow {
  std::string name;   // image path or procedure
  std::string image;  // procedures: image path
  uint64_t count_a = 0, count_b = 0;
  double share_a = 0, share_b = 0;  // percent of the event's samples
  double delta = 0;                 // share_b - share_a, in points
  std::string status;               // "", "new" (absent in A) or "vanished" (absent in B)
};

struct Diff {
  View view = View::kImages;
  Header a, b;
  std::string event;
  std::vector<DiffRow> rows;  // by |delta|, largest first
  size_t omitted = 0;
  std::vector<std::string> warnings;
  // A diff of callers (callees) of `symbol`; through_a/b: A's and B's stack
  // samples through it, of which the shares are.
  std::string symbol;
  bool callees = false;
  uint64_t through_a = 0, through_b = 0;
};

// Rows keyed by (image, name) with their counts: each row's shares of
// total_a and total_b, its delta and status, then sorted by the largest
// change and cut by options' --top and --keep into diff->rows.
void FinishDiff(std::map<std::pair<std::string, std::string>, DiffRow> rows, uint64_t total_a,
                uint64_t total_b, const DiffOptions& options, Diff* diff);

// A and B may be the same database (two epochs) or two databases.
Expected<Diff> BuildDiff(ProfileDb& db_a, ProfileDb& db_b, const DiffOptions& options);
// What BuildDiff and BuildFleetDiff (fleet_profile.h) share: A built with
// A's epoch and time range, B with B's, each by `build` (side_b false for
// A), and the two compared; kInvalidArgument for a view other than images
// or procedures.
using BuildSide = std::function<Expected<Profile>(const ProfOptions& side, bool side_b)>;
Expected<Diff> BuildDiffWith(const DiffOptions& options, const BuildSide& build);

// ----- lcpilist

struct ListOptions {
  std::string epoch;
  TimeRange range;
  std::vector<std::string> events;
  std::string procedure;  // a procedure name, or
  std::string image;      // with procedure: restricts the images searched
  // --range IMAGE:START-END (addresses as lcpilist prints them: link-time
  // addresses for user images, offsets for the kernel, modules, unknown)
  bool has_range = false;
  uint64_t range_lo = 0, range_hi = 0;
  bool source = false;  // interleave source lines
  bool lines = false;   // aggregate per source line
  // Read source files with the caller's own rights, not only those
  // everyone may read (listing_source.cpp says why).
  bool source_any = false;
};

// Parses "IMAGE:START-END" (hex with or without 0x); the image is before the
// last ':'. kInvalidArgument when malformed or START >= END.
Expected<void> ParseRange(const std::string& text, ListOptions* options);

struct Instruction {
  uint64_t address = 0;  // as printed
  uint64_t offset = 0;   // file offset (the key of the counts)
  uint32_t size = 0;
  std::string text;  // "mov eax, 1"; "(no code)" when the bytes are unavailable
  std::vector<uint64_t> counts;
  std::optional<std::string> source_file;  // with --source or --lines
  int source_line = 0;
  std::string source_text;  // with --source: the line from the source file, when readable
};

struct SourceLineRow {
  std::string file;
  int line = 0;
  std::string text;  // the line from the source file, when readable
  std::vector<uint64_t> counts;
};

struct Listing {
  Header header;
  std::string procedure;  // name, or the range as given
  std::string image, identity;
  ImageKind kind = ImageKind::kUser;
  uint64_t lo = 0, hi = 0;       // printed addresses [lo, hi)
  std::vector<uint64_t> totals;  // samples in the range per event column
  std::vector<Instruction> instructions;
  std::vector<SourceLineRow> lines;  // with ListOptions::lines
  bool source = false, by_lines = false;
  std::vector<std::string> warnings;
};

Expected<Listing> BuildListing(ProfileDb& db, const ListOptions& options);

// ----- lcpiprof --epochs: what is stored (epoch_list.cpp)

struct EpochListRow {
  EpochInfo epoch;
  std::optional<std::string> span;  // the tag of the span it is in (its own, or its epoch's)
  uint64_t samples = 0;             // all events
  uint64_t rows = 0;                // stored counts and process counts
  // The database's size shared out by rows: a rough guide to what dropping
  // this epoch would free, not a measurement.
  uint64_t approx_bytes = 0;
};

struct EpochList {
  Header header;  // every epoch (ReadHeader "all")
  uint64_t file_bytes = 0;
  std::vector<EpochListRow> rows;  // oldest first
  std::vector<std::string> warnings;
};

Expected<EpochList> BuildEpochList(ProfileDb& db);

// ----- Rendering (render.cpp; the model and its renderers: table.h)

struct RenderOptions {
  Format format = Format::kText;
  int width = 100;     // text: the terminal width
  bool header = true;  // text: print the "#" header lines
};

std::string RenderProfile(const Profile& profile, const RenderOptions& options);
std::string RenderDiff(const Diff& diff, const RenderOptions& options);
std::string RenderListing(const Listing& listing, const RenderOptions& options);
std::string RenderEpochList(const EpochList& list, const RenderOptions& options);

// The width for text output: `requested` when > 0, else the terminal width
// of `fd` (TIOCGWINSZ), else $COLUMNS, else 100.
int OutputWidth(int requested, int fd);

// "a:b" -> "a:b" with every occurrence of `from` replaced by `to` (tests and
// golden files).
std::string ReplaceAll(std::string text, const std::string& from, const std::string& to);

}  // namespace lcpi::report

#endif  // LCPI_LIBPROFILE_REPORT_REPORT_H
