// trace_format.h - the sample trace file written by lcpi-trace-record and read
// by lcpi-hashsim: every raw sample (cpu, pid, pc, event) in the order the
// CPUs' perf rings delivered it, so the per-CPU hash tables can be replayed
// exactly as the daemon's perf source would have fed them.
//
// Layout (little-endian, as written by the x86-64 host):
//
//   struct TraceHeader   32 bytes
//     u32 magic          kTraceMagic, "LCTR"
//     u16 version        kTraceVersion (1)
//     u16 header_size    32: a reader skips header_size bytes to the samples
//     u32 nr_cpus        every sample's cpu is below this
//     u32 flags          reserved, 0
//     u64 period_ns      the mean sample period of the recording (cpu-clock)
//     u64 nr_samples     the samples that follow
//   struct TraceSample   16 bytes, nr_samples of them
//     u64 pc
//     u32 pid            thread group id (0 for idle)
//     u16 cpu
//     u8  event          index of the event sampled (0: cpu-clock)
//     u8  flags          LCPI_RECORD_KERNEL for kernel-mode samples
//
// A trace is untrusted input: ParseTrace checks the magic, the version, the
// header size, the length (exactly header_size + nr_samples * 16 bytes) and
// each sample's cpu and event before anything is replayed. Header-only so the
// unit tests can use it without linking the simulator.
#ifndef LCPI_BENCH_HASHSIM_TRACE_FORMAT_H
#define LCPI_BENCH_HASHSIM_TRACE_FORMAT_H

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "lcpi_abi.h"
#include "libprofile/base/error.h"

namespace lcpi::trace {

inline constexpr uint32_t kTraceMagic = 0x5254434cu;  // "LCTR" in the file
inline constexpr uint16_t kTraceVersion = 1;
inline constexpr uint32_t kMaxCpus = 4096;

struct TraceHeader {
  uint32_t magic = kTraceMagic;
  uint16_t version = kTraceVersion;
  uint16_t header_size = sizeof(TraceHeader);
  uint32_t nr_cpus = 0;
  uint32_t flags = 0;
  uint64_t period_ns = 0;
  uint64_t nr_samples = 0;
};
static_assert(sizeof(TraceHeader) == 32, "the trace header is 32 bytes on disk");

struct TraceSample {
  uint64_t pc = 0;
  uint32_t pid = 0;
  uint16_t cpu = 0;
  uint8_t event = 0;
  uint8_t flags = 0;
};
static_assert(sizeof(TraceSample) == 16, "a trace sample is 16 bytes on disk");

struct Trace {
  TraceHeader header;
  std::vector<TraceSample> samples;
};

// Validates and decodes a whole trace held in memory. `name` labels errors.
// kNotADatabase: not a trace (bad magic); kNewerSchema: a newer version;
// kCorrupt: bad header size, truncated or trailing bytes, a sample naming a
// cpu >= nr_cpus or an event >= LCPI_MAX_EVENTS.
inline Expected<Trace> ParseTrace(const uint8_t* data, size_t size, const std::string& name) {
  Trace t;
  if (size < 8) return Error(Errc::kCorrupt, name + ": too short for a trace header");
  std::memcpy(&t.header.magic, data, 4);
  std::memcpy(&t.header.version, data + 4, 2);
  std::memcpy(&t.header.header_size, data + 6, 2);
  if (t.header.magic != kTraceMagic)
    return Error(Errc::kNotADatabase, name + ": not an lcpi sample trace (bad magic)");
  if (t.header.version != kTraceVersion)
    return Error(Errc::kNewerSchema, name + ": trace version " + std::to_string(t.header.version) +
                                         ", this build reads " + std::to_string(kTraceVersion));
  if (t.header.header_size < sizeof(TraceHeader))
    return Error(Errc::kCorrupt,
                 name + ": header size " + std::to_string(t.header.header_size) + " < 32");
  if (size < t.header.header_size) return Error(Errc::kCorrupt, name + ": truncated header");
  std::memcpy(&t.header, data, sizeof(TraceHeader));
  if (t.header.nr_cpus == 0 || t.header.nr_cpus > kMaxCpus)
    return Error(Errc::kCorrupt,
                 name + ": implausible cpu count " + std::to_string(t.header.nr_cpus));
  uint64_t body = size - t.header.header_size;
  if (t.header.nr_samples > body / sizeof(TraceSample))
    return Error(Errc::kCorrupt, name + ": truncated: header promises " +
                                     std::to_string(t.header.nr_samples) + " samples, file holds " +
                                     std::to_string(body / sizeof(TraceSample)));
  if (body != t.header.nr_samples * sizeof(TraceSample))
    return Error(Errc::kCorrupt,
                 name + ": " + std::to_string(body - t.header.nr_samples * sizeof(TraceSample)) +
                     " bytes after the last sample");
  t.samples.resize(t.header.nr_samples);
  if (!t.samples.empty()) std::memcpy(t.samples.data(), data + t.header.header_size, body);
  for (size_t i = 0; i < t.samples.size(); i++) {
    const TraceSample& s = t.samples[i];
    if (s.cpu >= t.header.nr_cpus || s.event >= LCPI_MAX_EVENTS)
      return Error(Errc::kCorrupt, name + ": sample " + std::to_string(i) + " names cpu " +
                                       std::to_string(s.cpu) + ", event " +
                                       std::to_string(s.event) + " (outside the header's range)");
  }
  return t;
}

// Reads and validates a trace file. kNotFound / kPermission / kIo for the file.
inline Expected<Trace> ReadTrace(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return ErrnoError(path, errno);
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), f)) > 0)
    bytes.insert(bytes.end(), chunk, chunk + n);
  bool failed = std::ferror(f);
  std::fclose(f);
  if (failed) return Error(Errc::kIo, path + ": read failed");
  return ParseTrace(bytes.data(), bytes.size(), path);
}

// Encodes a trace (header.nr_samples is set from samples).
inline std::vector<uint8_t> EncodeTrace(TraceHeader header,
                                        const std::vector<TraceSample>& samples) {
  header.nr_samples = samples.size();
  header.header_size = sizeof(TraceHeader);
  std::vector<uint8_t> out(sizeof(header) + samples.size() * sizeof(TraceSample));
  std::memcpy(out.data(), &header, sizeof(header));
  if (!samples.empty())
    std::memcpy(out.data() + sizeof(header), samples.data(), samples.size() * sizeof(TraceSample));
  return out;
}

// Writes a trace file, replacing any file at path.
inline Expected<void> WriteTrace(const std::string& path, const TraceHeader& header,
                                 const std::vector<TraceSample>& samples) {
  std::vector<uint8_t> bytes = EncodeTrace(header, samples);
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return ErrnoError(path, errno);
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok) return Error(Errc::kIo, path + ": write failed");
  return {};
}

}  // namespace lcpi::trace

#endif  // LCPI_BENCH_HASHSIM_TRACE_FORMAT_H
