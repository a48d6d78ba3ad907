// sideband.h - process events from the kernel: one perf "dummy" event per CPU
// with mmap2, comm (exec) and task records, plus a /proc scan at start for
// what already runs. Both feed the ProcessTracker; file mappings are named
// through the ImageTable (with the build-id the kernel puts in MMAP2 records
// where it can, so a file replaced on disk later does not matter).
#ifndef LCPI_LIBPROFILE_ATTRIBUTE_SIDEBAND_H
#define LCPI_LIBPROFILE_ATTRIBUTE_SIDEBAND_H

#include <memory>
#include <vector>

#include "libprofile/attribute/image_table.h"
#include "libprofile/attribute/jit_maps.h"
#include "libprofile/attribute/process_tracker.h"
#include "libprofile/base/error.h"
#include "libprofile/collect/perf_ring.h"

namespace lcpi {

class Sideband {
 public:
  Sideband(ProcessTracker& tracker, ImageTable& images) : tracker_(tracker), images_(images) {}

  // Processes that map anonymous executable memory are watched for JIT
  // maps, and read a last time at their exit; null (the default): none.
  void set_jit(JitMaps* jit) { jit_ = jit; }

  // Opens the dummy event on every online CPU.
  Expected<void> Start();
  // Reads every ring and applies the records to the tracker in time order.
  // Returns the number of records applied.
  size_t Drain();
  std::vector<int> fds() const;

  uint64_t lost() const { return lost_; }      // side-band records the kernel dropped
  uint64_t bad_records() const;                // of impossible size: the rest of that read skipped
  uint64_t newest() const { return newest_; }  // perf-clock time of the newest record
  uint64_t records() const { return records_; }

 private:
  struct Event;
  // Decodes one record into *out (false for records that change nothing,
  // such as a thread's fork); a LOST record adds to *lost. Only decodes:
  // static, so it cannot reach the image table and read a file.
  static bool Parse(const perf_event_header& hdr, const uint8_t* body, Event* out, uint64_t* lost);
  // Applies an event to the tracker; a file mapping's image is named here
  // (ImageTable::ForFile, which may read the file).
  void Apply(Event& e);

  ProcessTracker& tracker_;
  ImageTable& images_;
  JitMaps* jit_ = nullptr;
  std::vector<std::unique_ptr<PerfRing>> rings_;
  uint64_t lost_ = 0;
  uint64_t newest_ = 0;
  uint64_t records_ = 0;
};

// Adds every running process's executable mappings (from /proc/PID/maps)
// to the tracker, as live since time 0. Returns the number of processes.
size_t ScanProc(ProcessTracker& tracker, ImageTable& images, const std::string& proc = "/proc");

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_ATTRIBUTE_SIDEBAND_H
