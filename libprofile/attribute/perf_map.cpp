// perf_map.cpp - parsing and reading /tmp/perf-PID.map.
#include "libprofile/attribute/perf_map.h"

#include <unistd.h>

#include <cerrno>

#include "libprofile/base/regular_file.h"
#include "libprofile/base/text.h"

namespace lcpi {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// The next blank-separated field of `line` from `*at`, moving past it.
std::string_view NextField(std::string_view line, size_t* at) {
  size_t i = *at;
  while (i < line.size() && IsBlank(line[i])) i++;
  size_t start = i;
  while (i < line.size() && !IsBlank(line[i])) i++;
  *at = i;
  return line.substr(start, i - start);
}

}  // namespace

PerfMapParse ParsePerfMap(std::string_view text, const PerfMapLimits& limits) {
  PerfMapParse out;
  size_t lines = 0;
  if (text.size() > limits.max_bytes) {
    text = text.substr(0, limits.max_bytes);
    out.truncated = true;
  }
  while (!text.empty()) {
    size_t nl = text.find('\n');
    // A last line without its newline is being written (or was cut by the
    // limit): it is read whole the next time.
    if (nl == std::string_view::npos) break;
    std::string_view line = text.substr(0, nl);
    text = text.substr(nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (++lines > limits.max_lines) {
      out.truncated = true;
      break;
    }
    size_t at = 0;
    std::optional<uint64_t> start = ParseHex(NextField(line, &at));
    std::optional<uint64_t> size = ParseHex(NextField(line, &at));
    while (at < line.size() && IsBlank(line[at])) at++;
    std::string_view name = line.substr(at);
    if (!start || !size || !StorableRange(*start, *size) || name.empty()) {
      out.bad_lines++;
      continue;
    }
    if (name.size() > limits.max_name) name = name.substr(0, limits.max_name);
    out.symbols.push_back({*start, *size, std::string(name)});
  }
  return out;
}

Expected<int> OpenJitFile(int root_fd, const std::string& path, uint32_t uid, uint64_t* size) {
  struct stat st;
  Expected<int> fd = OpenRegularFileInRoot(root_fd, path, &st);
  if (!fd) return fd.error();
  const uint32_t owner = st.st_uid;
  if (owner != uid && owner != 0) {
    close(*fd);
    return Error(Errc::kPermission, path + ": owned by uid " + std::to_string(owner) +
                                        ", not by the process's uid " + std::to_string(uid));
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

Expected<PerfMapParse> ReadPerfMap(int root_fd, uint32_t pid, uint32_t uid,
                                   const PerfMapLimits& limits) {
  std::string path = "/tmp/perf-" + std::to_string(pid) + ".map";
  uint64_t size = 0;
  Expected<int> fd = OpenJitFile(root_fd, path, uid, &size);
  if (!fd) return fd.error();
  // The file may still grow while it is read: read what the bound allows
  // (one byte more tells a file cut by it).
  Expected<std::string> text =
      ReadBounded(*fd, 0, std::min<uint64_t>(size, limits.max_bytes) + 1, path);
  close(*fd);
  if (!text) return text.error();
  return ParsePerfMap(*text, limits);
}

}  // namespace lcpi
