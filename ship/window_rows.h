// window_rows.h - one closed window of the profile database as the rows
// ClickHouse takes (TabSeparated, columns as fleet_schema.h lists them):
// counts per image identity, event and offset with the event's period,
// process rows with their cgroup and its labels, the window's statistics
// and cost (fleet_window_facts.h), and an image's symbols.
#ifndef LCPI_SHIP_WINDOW_ROWS_H
#define LCPI_SHIP_WINDOW_ROWS_H

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "libprofile/base/error.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::ship {

// The columns each body fills, after "INSERT INTO db.TABLE ".
inline constexpr const char* kCountColumns =
    "(host, window_id, attempt, started, identity, event, used, period, offset, count)";
inline constexpr const char* kProcessColumns =
    "(host, window_id, attempt, started, pid, comm, cgroup, unit, container, pod, identity, "
    "event, count)";
inline constexpr const char* kFactColumns = "(host, window_id, attempt, started, name, value)";
inline constexpr const char* kImageColumns = "(identity, kind, path, host, symbols)";
inline constexpr const char* kSymbolColumns = "(identity, host, offset, size, name)";
inline constexpr const char* kWindowColumns =
    "(host, window_id, attempt, kind, tag, started, ended, shipped, count_rows, process_rows, "
    "samples)";

struct WindowRows {
  std::string counts, processes, facts;  // TabSeparated bodies
  uint64_t count_rows = 0, process_rows = 0, samples = 0;
  std::set<int64_t> image_ids;  // the images the window names
};

// Reads `window` (closed) in one snapshot of `db`.
Expected<WindowRows> ReadWindow(ProfileDb& db, const EpochInfo& window, const std::string& host,
                                uint64_t attempt);

// The procedures of `image` as rows of `symbols` (*rows counts them): the
// symbols lcpid stored (kernel, modules, JIT code, the vDSO), or the ELF
// file's, read from lcpid's image cache or the image's path when it is the
// profiled build (report::ImageSymbolizer); none otherwise, with a warning.
// Sent as `host`'s; at most fleet::kMaxSymbolsPerImage (the first by
// offset, with a warning).
std::string SymbolRows(ProfileDb& db, const ImageInfo& image, const std::string& host,
                       uint64_t* rows, std::vector<std::string>* warnings);

// The `windows` row that commits `window` under `attempt`.
std::string WindowRow(const EpochInfo& window, const std::string& host, uint64_t attempt,
                      int64_t now, const WindowRows& rows);

}  // namespace lcpi::ship

#endif  // LCPI_SHIP_WINDOW_ROWS_H
