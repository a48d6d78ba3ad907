// jitdump.h - perf's jitdump files (tools/perf/Documentation/jitdump-
// specification.txt): a JIT runtime (node --perf-prof, a JVM's agent, .NET)
// appends one record per piece of code it compiles to jit-PID.dump, and
// maps the file executable once so that a profiler sees where it is. Where a
// perf map (perf_map.h) is a line of text per function, a jitdump is binary:
// a header, then records, each with its size; a CODE_LOAD record gives the
// code's address, size and name (then the code bytes), a CODE_MOVE moves
// code loaded earlier. Only the names matter here.
//
// The file belongs to the profiled process's user, who may be hostile: every
// size is checked against the record and the data read, names are bounded,
// and the file is read from where the last read stopped, at most
// PerfMapLimits::max_bytes at a time (it only grows, and a long-running
// runtime's dump holds all its code, so it can be large).
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_JITDUMP_H
#define LCPI_LIBPROFILE_ATTRIBUTE_JITDUMP_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "libprofile/attribute/perf_map.h"
#include "libprofile/base/error.h"

namespace lcpi {

// Whether `path` names a jitdump of process `pid`: its last component is
// "jit-PID.dump", as perf and the runtimes name them.
bool IsJitdumpPath(std::string_view path, uint32_t pid);

// Where reading a jitdump stopped: kept by the caller between reads.
struct JitdumpCursor {
  uint64_t offset = 0;  // of the next record; 0: the header first
};

// A CODE_MOVE: code loaded earlier (code_index) is now at [start, start +
// size). Its name is the load's, which the parser does not keep: the caller
// keeps the names it takes (within its budget), and names moves from them.
struct JitdumpMove {
  size_t before = 0;  // it came before names.symbols[before] (order matters: a later record wins)
  uint64_t index = 0;
  uint64_t start = 0;
  uint64_t size = 0;
};

struct JitdumpParse {
  PerfMapParse names;             // the loads; bad records (as bad_lines), truncated
  std::vector<uint64_t> indexes;  // the code_index of each load, as names.symbols
  std::vector<JitdumpMove> moves;
  bool bad_header = false;  // not a jitdump this reader knows (magic, version)
};

// Parses `data`, the bytes of the file from cursor->offset on, and moves
// the cursor past every whole record (a record cut at the end of the data
// is being written: it is read whole the next time). A record whose size
// cannot be right stops the parse (the rest cannot be framed), counted.
JitdumpParse ParseJitdump(std::string_view data, JitdumpCursor* cursor,
                          const PerfMapLimits& limits = {});

// Reads the jitdump at `path` inside a process's root (root_fd, as for the
// perf map: a regular file owned by `uid` or root) from cursor->offset,
// at most limits.max_bytes, and parses it.
Expected<JitdumpParse> ReadJitdump(int root_fd, const std::string& path, uint32_t uid,
                                   JitdumpCursor* cursor, const PerfMapLimits& limits = {});

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_JITDUMP_H
