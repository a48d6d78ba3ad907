// jitdump.cpp - parsing and reading jit-PID.dump, bounded and incremental.
#include "libprofile/attribute/jitdump.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "libprofile/base/regular_file.h"

namespace lcpi {
namespace {

// The specification's layout (all fields in the writer's byte order; the
// magic tells it: one of the other order is refused).
constexpr uint32_t kMagic = 0x4A695444;  // "JiTD"
constexpr uint32_t kHeaderMin = 40;      // magic .. flags
constexpr uint32_t kPrefix = 16;         // id, total_size, timestamp
constexpr uint32_t kCodeLoad = 0;  // + pid, tid, vma, code_addr, code_size, code_index, name, code
constexpr uint32_t kCodeMove = 1;  // + pid, tid, vma, old_addr, new_addr, code_size, code_index
constexpr uint32_t kLoadFixed = kPrefix + 40;
constexpr uint32_t kMoveFixed = kPrefix + 48;

template <typename T>
T At(std::string_view data, size_t offset) {
  T v;
  std::memcpy(&v, data.data() + offset, sizeof v);
  return v;
}

}  // namespace

bool IsJitdumpPath(std::string_view path, uint32_t pid) {
  size_t slash = path.rfind('/');
  std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  return name == "jit-" + std::to_string(pid) + ".dump";
}

JitdumpParse ParseJitdump(std::string_view data, JitdumpCursor* cursor,
                          const PerfMapLimits& limits) {
  JitdumpParse out;
  size_t at = 0;
  if (cursor->offset == 0) {
    if (data.size() < kHeaderMin) return out;  // not written yet
    const uint32_t header_size = At<uint32_t>(data, 8);
    if (At<uint32_t>(data, 0) != kMagic || At<uint32_t>(data, 4) != 1 || header_size < kHeaderMin) {
      out.bad_header = true;
      return out;
    }
    if (data.size() < header_size) return out;
    at = header_size;
  }
  while (data.size() - at >= kPrefix) {
    const uint32_t id = At<uint32_t>(data, at);
    const uint32_t size = At<uint32_t>(data, at + 4);
    if (size < kPrefix) {
      out.names.bad_lines++;  // cannot be framed: the rest is unreadable
      out.names.truncated = true;
      break;
    }
    if (data.size() - at < size) break;  // being written
    std::string_view rec = data.substr(at, size);
    if (id == kCodeLoad) {
      const size_t name_end = rec.size() >= kLoadFixed ? rec.find('\0', kLoadFixed) : rec.npos;
      const uint64_t addr = rec.size() >= kLoadFixed ? At<uint64_t>(rec, kPrefix + 16) : 0;
      const uint64_t code_size = rec.size() >= kLoadFixed ? At<uint64_t>(rec, kPrefix + 24) : 0;
      if (name_end == rec.npos || name_end == kLoadFixed || !StorableRange(addr, code_size)) {
        out.names.bad_lines++;
      } else if (out.names.symbols.size() >= limits.max_lines) {
        out.names.truncated = true;
        break;
      } else {
        out.names.symbols.push_back(
            {addr, code_size,
             std::string(rec.substr(kLoadFixed,
                                    std::min<size_t>(name_end - kLoadFixed, limits.max_name)))});
        out.indexes.push_back(At<uint64_t>(rec, kPrefix + 32));
      }
    } else if (id == kCodeMove) {
      const uint64_t addr = rec.size() >= kMoveFixed ? At<uint64_t>(rec, kPrefix + 24) : 0;
      const uint64_t code_size = rec.size() >= kMoveFixed ? At<uint64_t>(rec, kPrefix + 32) : 0;
      if (!StorableRange(addr, code_size)) {
        out.names.bad_lines++;
      } else if (out.moves.size() >= limits.max_lines) {
        out.names.truncated = true;
        break;
      } else {
        out.moves.push_back(
            {out.names.symbols.size(), At<uint64_t>(rec, kPrefix + 40), addr, code_size});
      }
    }
    // Debug info, unwinding info, close and records of later versions:
    // nothing to name.
    at += size;
  }
  cursor->offset += at;
  return out;
}

Expected<JitdumpParse> ReadJitdump(int root_fd, const std::string& path, uint32_t uid,
                                   JitdumpCursor* cursor, const PerfMapLimits& limits) {
  uint64_t size = 0;
  Expected<int> fd = OpenJitFile(root_fd, path, uid, &size);
  if (!fd) return fd.error();
  const uint64_t left = size > cursor->offset ? size - cursor->offset : 0;
  Expected<std::string> data =
      ReadBounded(*fd, cursor->offset, std::min<uint64_t>(left, limits.max_bytes), path);
  close(*fd);
  if (!data) return data.error();
  JitdumpParse parsed = ParseJitdump(*data, cursor, limits);
  // What the bound left for later is read the next time, from the cursor.
  if (size > cursor->offset && size - cursor->offset > limits.max_bytes)
    parsed.names.truncated = true;
  return parsed;
}

}  // namespace lcpi
