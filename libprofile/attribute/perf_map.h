// perf_map.h - perf's JIT map files, /tmp/perf-PID.map: one line per piece
// of generated code, "START SIZE name" (START and SIZE in hex, with or
// without 0x), written by the runtime (node --perf-basic-prof, the JVM's
// perf-map-agent, Python 3.12's -X perf, ...) as it compiles.
//
// The file belongs to the profiled process's user, who may be hostile: its
// size and line count are bounded, lines that do not parse are counted and
// skipped, and names are kept as they are (the tools escape them when they
// print them).
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_PERF_MAP_H
#define LCPI_LIBPROFILE_ATTRIBUTE_PERF_MAP_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

struct PerfMapSymbol {
  uint64_t start = 0;
  uint64_t size = 0;
  std::string name;
};

struct PerfMapLimits {
  uint64_t max_bytes = 64ull << 20;  // a large Node service writes a few MB
  size_t max_lines = 1000000;
  size_t max_name = 4096;  // longer names are cut here
};

struct PerfMapParse {
  std::vector<PerfMapSymbol> symbols;  // in file order: a later line wins
  uint64_t bad_lines = 0;              // did not parse: skipped
  bool truncated = false;              // stopped at a limit
};

// Whether a JIT code range is one the store can hold and user code can
// have: not empty, and its end (start + size) below 2^63 (the store keeps
// signed 64-bit offsets; "0 8000000000000000 name" once stopped every merge).
// Both parsers, maps and jitdumps, drop and count a range that is not.
constexpr bool StorableRange(uint64_t start, uint64_t size) {
  constexpr uint64_t kTop = 1ull << 63;
  return size > 0 && start < kTop && size < kTop - start;
}

// Parses the text of a map file. A line is "START SIZE NAME" with one or
// more blanks between fields; the name is the rest of the line (it may hold
// blanks); empty lines are ignored, and so is a last line without its
// newline (the runtime is still writing it); a zero size, a range that
// reaches 2^63 (no user-space code does: StorableRange) or an empty name
// makes a line bad.
PerfMapParse ParsePerfMap(std::string_view text, const PerfMapLimits& limits = {});

// Opens a file a JIT runtime wrote (its perf map, its jitdump), `path` as
// the process sees it, under its root directory (root_fd: see
// OpenRegularFileInRoot): a regular file owned by `uid` (the process's
// user) or root, as perf itself requires; a file planted by another user,
// or a hard link to someone else's file, is refused (kPermission). Its size
// in *size; the caller closes the descriptor.
Expected<int> OpenJitFile(int root_fd, const std::string& path, uint32_t uid, uint64_t* size);

// Reads and parses the map file of `pid` under a process's root directory
// (OpenJitFile), reading at most limits.max_bytes.
Expected<PerfMapParse> ReadPerfMap(int root_fd, uint32_t pid, uint32_t uid,
                                   const PerfMapLimits& limits = {});

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_PERF_MAP_H
