// sideband.cpp - parsing MMAP2/COMM/FORK/EXIT records (every field checked
// against the record's length; no file is read while parsing), applying them
// in time order (which names each mapped file's image) and the /proc scan.
#include "libprofile/attribute/sideband.h"

#include <dirent.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "libprofile/attribute/jitdump.h"
#include "libprofile/base/proc_start.h"
#include "libprofile/image/image_id.h"

namespace lcpi {

namespace {

constexpr int kRingPageOrder = 8;     // 1 MB per CPU: a storm of execs is bursty
constexpr size_t kSampleIdSize = 16;  // sample_id_all with TID | TIME

// A NUL-terminated string inside [p, p + len), or "" if it has no NUL.
std::string BoundedString(const uint8_t* p, size_t len) {
  const void* nul = std::memchr(p, 0, len);
  return nul ? std::string(reinterpret_cast<const char*>(p)) : std::string();
}

}  // namespace

Expected<void> Sideband::Start() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  attr.mmap = 1;
  attr.mmap2 = 1;
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.task = 1;
  // Device and inode, not the build-id: a build-id is whatever the file's
  // linker wrote (any user's program may claim libc's), while device and
  // inode name the file, which the image table then reads once and
  // identifies by its build-id and layout (image_id.h).
  attr.build_id = 0;
  attr.watermark = 1;
  attr.wakeup_watermark = (4096u << kRingPageOrder) / 8;
  for (int cpu : OnlineCpus()) {
    Expected<std::unique_ptr<PerfRing>> ring = PerfRing::Open(attr, cpu, kRingPageOrder);
    if (!ring) return ring.error();
    rings_.push_back(std::move(*ring));
  }
  return {};
}

std::vector<int> Sideband::fds() const {
  std::vector<int> fds;
  for (const auto& r : rings_) fds.push_back(r->fd());
  return fds;
}

bool Sideband::Parse(const perf_event_header& hdr, const uint8_t* body, SidebandEvent* out,
                     uint64_t* lost) {
  size_t len = hdr.size - sizeof(hdr);
  if (hdr.type == PERF_RECORD_LOST) {
    if (len >= 16) {
      uint64_t n;
      std::memcpy(&n, body + 8, 8);
      *lost += n;
    }
    return false;
  }
  if (len < kSampleIdSize) return false;
  SidebandEvent& e = *out;
  e.type = hdr.type;
  std::memcpy(&e.time, body + len - 8, 8);
  size_t fixed = len - kSampleIdSize;  // bytes before the sample_id trailer
  switch (hdr.type) {
    case PERF_RECORD_MMAP2: {
      if (fixed < 64 + 1) return false;
      uint64_t addr, size, pgoff;
      std::memcpy(&e.pid, body, 4);
      std::memcpy(&addr, body + 8, 8);
      std::memcpy(&size, body + 16, 8);
      std::memcpy(&pgoff, body + 24, 8);
      uint32_t prot;
      std::memcpy(&prot, body + 56, 4);
      if (!(prot & 4 /* PROT_EXEC */)) return false;
      e.text = BoundedString(body + 64, fixed - 64);
      if (hdr.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
        uint8_t n = std::min<uint8_t>(body[32], 20);
        e.file.build_id = HexBytes(body + 36, n);
      } else {
        // The kernel's MAJOR and MINOR of the file's device, apart: makedev
        // gives the user-space dev_t fstat's st_dev is compared with.
        uint32_t maj, min;
        uint64_t generation;
        std::memcpy(&maj, body + 32, 4);
        std::memcpy(&min, body + 36, 4);
        std::memcpy(&e.file.ino, body + 40, 8);
        std::memcpy(&generation, body + 48, 8);
        e.file.dev = makedev(maj, min);
        e.file.generation = static_cast<uint32_t>(generation);
      }
      e.file.pid = e.pid;
      e.file.start = addr;
      e.file.end = addr + size;
      e.file.path = e.text;
      e.map.start = addr;
      e.map.end = addr + size;
      e.map.pgoff = pgoff;
      break;
    }
    case PERF_RECORD_COMM: {
      if (fixed < 9) return false;
      uint32_t tid;
      std::memcpy(&e.pid, body, 4);
      std::memcpy(&tid, body + 4, 4);
      e.exec = hdr.misc & PERF_RECORD_MISC_COMM_EXEC;
      if (!e.exec && tid != e.pid) return false;  // a thread's name, not the process's
      e.text = BoundedString(body + 8, fixed - 8);
      break;
    }
    case PERF_RECORD_FORK:
    case PERF_RECORD_EXIT: {
      if (fixed < 24) return false;
      uint32_t tid;
      std::memcpy(&e.pid, body, 4);
      std::memcpy(&e.ppid, body + 4, 4);
      std::memcpy(&tid, body + 8, 4);
      if (hdr.type == PERF_RECORD_FORK && e.pid == e.ppid) return false;  // a new thread
      if (hdr.type == PERF_RECORD_EXIT && e.pid != tid) return false;     // a thread exits
      break;
    }
    default:
      return false;
  }
  return true;
}

void Sideband::ApplyOne(SidebandEvent& e) {
  switch (e.type) {
    case PERF_RECORD_MMAP2: {
      const std::string& path = e.text;
      bool anonymous = path.empty() || path[0] == '[' || path.rfind("//anon", 0) == 0 ||
                       path.rfind("/memfd:", 0) == 0;
      // A JIT runtime maps its jitdump executable only to say where it is:
      // no code runs from it, and it is no ELF file to identify.
      const bool jitdump = !anonymous && IsJitdumpPath(path, e.pid);
      e.map.image = path == "[vdso]"       ? images_.Vdso()
                    : anonymous || jitdump ? kNoImage
                                           : images_.ForFile(e.file);
      tracker_.OnMmap(e.pid, e.map, e.time);
      if (jit_ && anonymous && path != "[vdso]") jit_->Watch(e.pid);
      if (jit_ && jitdump) jit_->SetJitdump(e.pid, path);
      break;
    }
    case PERF_RECORD_COMM:
      tracker_.OnComm(e.pid, e.text, e.exec, e.time);
      if (e.exec) RequestCgroup(e);
      break;
    case PERF_RECORD_FORK:
      tracker_.OnFork(e.pid, e.ppid, e.time);
      // A fork of a process whose cgroup is not known yet (its read under
      // way, as a prefork server's right after its exec) has its own read.
      if (!tracker_.CgroupRefOf(e.pid, e.time)) RequestCgroup(e);
      break;
    case PERF_RECORD_EXIT:
      tracker_.OnExit(e.pid, e.time);
      if (jit_) jit_->OnExit(e.pid, e.time);
      break;
  }
}

void Sideband::RequestCgroup(const SidebandEvent& e) {
  if (!cgroups_) return;
  cgroups_->Request(e.pid, e.seen_by, [this, pid = e.pid, time = e.time](CgroupRef cgroup) {
    tracker_.SetCgroup(pid, time, std::move(cgroup));
  });
}

void Sideband::Read(std::vector<SidebandEvent>& out) {
  const size_t first = out.size();
  for (auto& r : rings_) {
    r->Read([&](const perf_event_header& h, const uint8_t* b) {
      SidebandEvent e;
      if (Parse(h, b, &e, &lost_)) {
        read_newest_ = std::max(read_newest_, e.time);
        out.push_back(std::move(e));
      }
    });
  }
  // Each process read of here was running by now: one with its pid that
  // started later is another (cgroup_reader.h).
  const uint64_t seen_by = BoottimeNs();
  for (size_t i = first; i < out.size(); i++) out[i].seen_by = seen_by;
}

void Sideband::Apply(std::vector<SidebandEvent>& events) {
  std::stable_sort(events.begin(), events.end(),
                   [](const SidebandEvent& a, const SidebandEvent& b) { return a.time < b.time; });
  for (SidebandEvent& e : events) ApplyOne(e);
  records_ += events.size();
}

size_t Sideband::Drain() {
  std::vector<SidebandEvent> events;
  Read(events);
  Apply(events);
  return events.size();
}

size_t ScanProc(ProcessTracker& tracker, ImageTable& images, JitMaps* jit, const std::string& proc,
                CgroupReader* cgroups) {
  DIR* dir = opendir(proc.c_str());
  if (!dir) return 0;
  size_t n = 0;
  while (dirent* d = readdir(dir)) {
    char* end;
    unsigned long pid = std::strtoul(d->d_name, &end, 10);
    if (*end || pid == 0) continue;
    std::string base = proc + "/" + d->d_name;
    std::ifstream comm_file(base + "/comm");
    std::string comm;
    std::getline(comm_file, comm);
    std::ifstream maps(base + "/maps");
    if (!maps) continue;
    tracker.OnComm(static_cast<uint32_t>(pid), comm, true, 0);
    // Read here, at start, before any sample is taken: more processes than
    // the reads Request lets wait at once, and no loop yet to hold up.
    if (cgroups) tracker.SetCgroup(static_cast<uint32_t>(pid), 0, cgroups->Read(pid));
    std::string line;
    while (std::getline(maps, line)) {
      // start-end perms offset dev inode path
      unsigned long long start, end, pgoff, ino;
      unsigned maj, min;
      char perms[8];
      int path_at = 0;
      if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
                      &maj, &min, &ino, &path_at) < 7)
        continue;
      if (perms[2] != 'x') continue;
      std::string path = path_at > 0 ? line.substr(path_at) : "";
      Mapping m{start, end, pgoff, kNoImage};
      if (path == "[vdso]") m.image = images.Vdso();
      if (!path.empty() && path[0] == '/') {
        // A deleted file is still found through map_files; its name in
        // maps only gained a suffix. maps gives the device as hex major and
        // minor, the same split as MMAP2 records.
        if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0)
          path.resize(path.size() - 10);
        if (IsJitdumpPath(path, static_cast<uint32_t>(pid))) {  // a marker: see Apply
          if (jit) jit->SetJitdump(static_cast<uint32_t>(pid), path);
          tracker.OnMmap(static_cast<uint32_t>(pid), m, 0);
          continue;
        }
        FileMapping file;
        file.pid = static_cast<uint32_t>(pid);
        file.start = start;
        file.end = end;
        file.path = path;
        file.dev = makedev(maj, min);
        file.ino = ino;
        m.image = images.ForFile(file);
      }
      tracker.OnMmap(static_cast<uint32_t>(pid), m, 0);
    }
    n++;
  }
  closedir(dir);
  return n;
}

SidebandReadStats Sideband::read_stats() const {
  SidebandReadStats st{lost_, 0, read_newest_};
  for (const auto& ring : rings_) st.bad_records += ring->bad_records();
  return st;
}

}  // namespace lcpi
