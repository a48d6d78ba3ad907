// sideband.h - process events from the kernel: one perf "dummy" event per CPU
// with mmap2, comm (exec) and task records, plus a /proc scan at start for
// what already runs. Both feed the ProcessTracker; file mappings are named
// through the ImageTable (with the build-id the kernel puts in MMAP2 records
// where it can, so a file replaced on disk later does not matter).
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_SIDEBAND_H
#define LCPI_LIBPROFILE_ATTRIBUTE_SIDEBAND_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "libprofile/attribute/cgroup_reader.h"
#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/jit_maps.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/base/error.h"
#include "libprofile/collect/perf_ring.h"

namespace lcpi {

// One side-band record as decoded: what the kernel said, nothing looked up.
struct SidebandEvent {
  uint32_t type = 0;
  bool exec = false;
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t time = 0;
  uint64_t seen_by = 0;  // CLOCK_BOOTTIME ns when read: the process ran then (0: not known)
  std::string text;      // comm, or the mapped file's path
  Mapping map;           // MMAP2: the range; its image is named by Apply
  FileMapping file;      // MMAP2: what the kernel said about the file
};

// The side-band's own counts, kept by the thread that reads its rings.
struct SidebandReadStats {
  uint64_t lost = 0;         // records the kernel dropped
  uint64_t bad_records = 0;  // of impossible size: the rest of that read skipped
  uint64_t newest = 0;       // perf-clock time of the newest record read
};

class Sideband {
 public:
  Sideband(ProcessTracker& tracker, ImageTable& images) : tracker_(tracker), images_(images) {}

  // Processes that map anonymous executable memory are watched for JIT
  // maps, and read a last time at their exit; null (the default): none.
  void set_jit(JitMaps* jit) { jit_ = jit; }
  // Each exec's process has its cgroup read (cgroup_reader.h: on its
  // lookups, the result applied on the thread that applies); null (the
  // default): none.
  void set_cgroups(CgroupReader* cgroups) { cgroups_ = cgroups; }

  // Opens the dummy event on every online CPU.
  Expected<void> Start();
  // Reads every ring and decodes its records into `out`, reading no file
  // (lcpid's drain thread). Only one thread may call Read.
  void Read(std::vector<SidebandEvent>& out);
  // Applies decoded events to the tracker in time order (sorting them);
  // file mappings are named here (ImageTable::ForFile). Only one thread may
  // call Apply.
  void Apply(std::vector<SidebandEvent>& events);
  // Read, then Apply. Returns the number of records applied.
  size_t Drain();
  std::vector<int> fds() const;

  // Of the reads so far; for the thread that reads, or once it is stopped.
  SidebandReadStats read_stats() const;
  uint64_t lost() const { return read_stats().lost; }
  uint64_t bad_records() const { return read_stats().bad_records; }
  uint64_t newest() const { return read_stats().newest; }
  uint64_t records() const { return records_; }  // applied

 private:
  // Decodes one record into *out (false for records that change nothing,
  // such as a thread's fork); a LOST record adds to *lost. Only decodes:
  // static, so it cannot reach the image table and read a file.
  static bool Parse(const perf_event_header& hdr, const uint8_t* body, SidebandEvent* out,
                    uint64_t* lost);
  // Applies an event to the tracker; a file mapping's image is named here
  // (ImageTable::ForFile, which hands reading the file to its lookups).
  void ApplyOne(SidebandEvent& e);
  // Reads e.pid's cgroup for the space e starts (cgroups_, if set).
  void RequestCgroup(const SidebandEvent& e);

  ProcessTracker& tracker_;
  ImageTable& images_;
  JitMaps* jit_ = nullptr;
  CgroupReader* cgroups_ = nullptr;
  std::vector<std::unique_ptr<PerfRing>> rings_;
  uint64_t lost_ = 0;         // the reading thread's
  uint64_t read_newest_ = 0;  // the reading thread's
  uint64_t records_ = 0;      // the applying thread's
};

// Adds every running process's executable mappings (from /proc/PID/maps)
// to the tracker, as live since time 0; a mapped jitdump goes to `jit`, if
// set, and each process's cgroup is read through `cgroups`, if set (at
// once, on this thread: at start, before any sample).
// Returns the number of processes.
size_t ScanProc(ProcessTracker& tracker, ImageTable& images, JitMaps* jit = nullptr,
                const std::string& proc = "/proc", CgroupReader* cgroups = nullptr);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_SIDEBAND_H
