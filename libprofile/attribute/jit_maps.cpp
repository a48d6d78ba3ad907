// jit_maps.cpp - watching JIT processes and naming their code from perf maps.
#include "libprofile/attribute/jit_maps.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "libprofile/base/text.h"

namespace lcpi {
namespace {

// Field 22 of /proc/PID/stat, the start time in clock ticks since boot: with
// the pid and the boot, it names one process for ever. The command name
// (field 2) may hold blanks and parentheses, so fields are counted after the
// last ')'.
std::string StartTicks(const std::string& stat_path) {
  std::ifstream in(stat_path);
  std::string line;
  if (!std::getline(in, line)) return "";
  size_t close = line.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(line.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; i++)
    if (i == 22) return ParseDecimal(field) ? field : "";
  return "";
}

}  // namespace

JitMaps::JitMaps(ImageTable& images, std::string proc, PerfMapLimits limits)
    : images_(images), proc_(std::move(proc)), limits_(limits) {
  std::ifstream in(proc_ + "/sys/kernel/random/boot_id");
  std::getline(in, boot_id_);
  if (boot_id_.empty()) boot_id_ = "unknown-boot";
}

JitMaps::~JitMaps() {
  for (Process& p : processes_) Close(p);
}

void JitMaps::Close(Process& p) {
  if (p.root_fd < 0) return;
  close(p.root_fd);
  p.root_fd = -1;
  open_roots_--;
}

JitMaps::Process* JitMaps::Open(uint32_t pid) {
  if (open_roots_ >= kMaxLiveProcesses) {
    stats_.refused++;
    return nullptr;
  }
  std::string base = proc_ + "/" + std::to_string(pid);
  struct stat st;
  if (stat(base.c_str(), &st) != 0) return nullptr;  // gone already
  std::string start = StartTicks(base + "/stat");
  // O_PATH: nothing is opened for reading, and a descriptor of a directory
  // keeps its mount usable after the process and its namespace are gone.
  int fd = open((base + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || start.empty()) {
    if (fd >= 0) close(fd);
    return nullptr;
  }
  Process& p = processes_.emplace_back();
  p.pid = pid;
  p.uid = st.st_uid;
  p.root_fd = fd;
  open_roots_++;
  p.identity = "jit:" + boot_id_ + ":" + std::to_string(pid) + ":" + start;
  by_pid_[pid] = &p;
  stats_.processes++;
  return &p;
}

void JitMaps::Watch(uint32_t pid) {
  auto it = by_pid_.find(pid);
  if (it != by_pid_.end() && !it->second->exited) return;
  Open(pid);
}

void JitMaps::Read(Process& p) {
  if (p.root_fd < 0) return;
  p.read = true;
  Expected<PerfMapParse> parsed = ReadPerfMap(p.root_fd, p.pid, p.uid, limits_);
  if (!parsed) {
    if (parsed.error().code() == Errc::kNotFound) {
      stats_.missing++;
    } else {
      stats_.errors++;
      if (!p.warned)  // once per process: a bad map would be read again every second
        spdlog::warn("JIT map of pid {}: {}", p.pid, Printable(parsed.error().message()));
      p.warned = true;
    }
    return;
  }
  stats_.reads++;
  stats_.bad_lines += parsed->bad_lines;
  stats_.truncated += parsed->truncated;
  for (PerfMapSymbol& s : parsed->symbols) {
    // The file only grows: what an earlier read took is skipped.
    if (p.seen.count({s.start, s.size, std::string_view(s.name)})) continue;
    if (p.symbols.size() >= limits_.max_lines) {
      stats_.truncated++;
      break;
    }
    const PerfMapSymbol& kept = p.symbols.emplace_back(std::move(s));
    p.seen.emplace(kept.start, kept.size, std::string_view(kept.name));
    p.by_start[kept.start] = &kept;  // a later line for the same code wins
    stats_.symbols++;
  }
}

const PerfMapSymbol* JitMaps::Find(const Process& p, uint64_t pc) {
  auto it = p.by_start.upper_bound(pc);
  if (it == p.by_start.begin()) return nullptr;
  const PerfMapSymbol* s = std::prev(it)->second;
  return pc - s->start < s->size ? s : nullptr;
}

std::optional<JitLocation> JitMaps::Resolve(uint32_t pid, const std::string& comm, uint64_t pc,
                                            uint64_t now) {
  auto it = by_pid_.find(pid);
  Process* p = it != by_pid_.end() ? it->second : nullptr;
  if (!p) {
    // A process that was running before lcpid, or one gone before it was
    // watched: tried again no more often than a map is re-read.
    auto failed = failed_.find(pid);
    // (A buffer of another CPU may be a little older: not a reason to retry.)
    if (failed != failed_.end() && (now < failed->second || now - failed->second < kRereadNs))
      return std::nullopt;
    p = Open(pid);
    if (!p) {
      failed_[pid] = now;
      return std::nullopt;
    }
    failed_.erase(pid);
  }
  const PerfMapSymbol* s = Find(*p, pc);
  if (!s && !p->exited && (!p->read || (now >= p->last_read && now - p->last_read >= kRereadNs))) {
    Read(*p);
    p->last_read = now;
    s = Find(*p, pc);
  }
  if (!s) return std::nullopt;
  if (p->image == kNoImage) {
    std::string name = comm.empty() ? "?" : comm;
    p->image = images_.Intern(p->identity, "[jit " + name + " " + std::to_string(pid) + "]",
                              ImageKind::kJit);
    by_image_[p->image] = p;
  }
  return JitLocation{p->image, pc};
}

void JitMaps::OnExit(uint32_t pid, uint64_t time) {
  auto it = by_pid_.find(pid);
  if (it == by_pid_.end() || it->second->exited) return;
  Process& p = *it->second;
  Read(p);  // what it wrote since the last read, through the root it had
  Close(p);
  p.exited = true;
  p.exit_time = time;
}

std::vector<const PerfMapSymbol*> JitMaps::Unstored(int32_t image,
                                                    const std::vector<uint64_t>& offsets) const {
  std::vector<const PerfMapSymbol*> out;
  auto it = by_image_.find(image);
  if (it == by_image_.end()) return out;
  const Process& p = *it->second;
  std::unordered_set<const PerfMapSymbol*> seen;
  for (uint64_t offset : offsets) {
    const PerfMapSymbol* s = Find(p, offset);
    if (s && !p.stored.count(s) && seen.insert(s).second) out.push_back(s);
  }
  return out;
}

void JitMaps::MarkStored(int32_t image, const std::vector<uint64_t>& offsets) {
  auto it = by_image_.find(image);
  if (it == by_image_.end()) return;
  for (uint64_t offset : offsets)
    if (const PerfMapSymbol* s = Find(*it->second, offset)) it->second->stored.insert(s);
}

void JitMaps::Reap(uint64_t time) {
  for (auto it = processes_.begin(); it != processes_.end();) {
    Process& p = *it;
    // Called once the counts resolved before `time` have committed: the
    // names they needed are stored, and no later sample can name this
    // process.
    if (!p.exited || p.exit_time >= time) {
      ++it;
      continue;
    }
    auto pid = by_pid_.find(p.pid);
    if (pid != by_pid_.end() && pid->second == &p) by_pid_.erase(pid);
    if (p.image != kNoImage) by_image_.erase(p.image);
    it = processes_.erase(it);
  }
  failed_.clear();  // at most the pids that missed since the last merge
}

}  // namespace lcpi
