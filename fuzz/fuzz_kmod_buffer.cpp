// fuzz_kmod_buffer.cpp - fuzz target for ParseKmodBuffer, the check of every
// overflow buffer lcpid reads from /dev/lcpi. The kernel is trusted no more
// than a file: whatever the bytes, the parser returns a RecordBuffer or
// Errc::kCorrupt, never reads out of bounds. The first input byte picks
// nr_cpus (1..256), the rest is the buffer as read() would return it. An
// accepted buffer must agree with what the parser promised to check.
#include <cstdint>
#include <cstdlib>

#include "libprofile/collect/kmod_source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint32_t nr_cpus = static_cast<uint32_t>(data[0]) + 1;
  const uint8_t* buf = data + 1;
  const size_t len = size - 1;
  lcpi::Expected<lcpi::RecordBuffer> parsed = lcpi::ParseKmodBuffer(buf, len, nr_cpus);
  if (!parsed) {
    if (parsed.error().code() != lcpi::Errc::kCorrupt) std::abort();
    return 0;
  }
  const lcpi_buffer_header& h = parsed->header;
  if (h.magic != LCPI_BUFFER_MAGIC || h.cpu >= nr_cpus || h.t_first > h.t_last ||
      parsed->records.size() != h.nr_records ||
      h.header_size + parsed->records.size() * sizeof(lcpi_record) != len)
    std::abort();
  for (const lcpi_record& r : parsed->records)
    if (r.count == 0 || r.event >= LCPI_MAX_EVENTS || (r.flags & ~LCPI_RECORD_KERNEL)) std::abort();
  return 0;
}
