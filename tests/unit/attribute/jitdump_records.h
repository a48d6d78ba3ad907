// jitdump_records.h - jitdump records written as perf's specification lays
// them out (tools/perf/Documentation/jitdump-specification.txt), for the
// tests of the parser (jitdump_test) and of its caller (jit_maps_test).
#ifndef LCPI_TESTS_UNIT_ATTRIBUTE_JITDUMP_RECORDS_H
#define LCPI_TESTS_UNIT_ATTRIBUTE_JITDUMP_RECORDS_H

#include <cstdint>
#include <string>

namespace lcpi::testing {

template <typename T>
void Put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

inline std::string Header(uint32_t magic = 0x4A695444, uint32_t version = 1) {
  std::string h;
  Put<uint32_t>(h, magic);
  Put<uint32_t>(h, version);
  Put<uint32_t>(h, 40);  // total_size of the header
  Put<uint32_t>(h, 62);  // EM_X86_64
  Put<uint32_t>(h, 0);
  Put<uint32_t>(h, 4242);  // pid
  Put<uint64_t>(h, 1);     // timestamp
  Put<uint64_t>(h, 0);     // flags
  return h;
}

// A record: id, total_size (`size_override` if set), timestamp, then `body`.
inline std::string Record(uint32_t id, const std::string& body, uint32_t size_override = 0) {
  std::string r;
  Put<uint32_t>(r, id);
  Put<uint32_t>(r, size_override ? size_override : static_cast<uint32_t>(16 + body.size()));
  Put<uint64_t>(r, 7);
  return r + body;
}

inline std::string Load(uint64_t addr, uint64_t size, uint64_t index, const std::string& name,
                        bool nul = true) {
  std::string b;
  Put<uint32_t>(b, 4242);  // pid
  Put<uint32_t>(b, 4243);  // tid
  Put<uint64_t>(b, addr);  // vma
  Put<uint64_t>(b, addr);  // code_addr
  Put<uint64_t>(b, size);
  Put<uint64_t>(b, index);
  b += name;
  if (nul) b += '\0';
  b += std::string(size < 64 ? size : 64, '\xcc');  // the code bytes
  return Record(0, b);
}

inline std::string Move(uint64_t from, uint64_t to, uint64_t size, uint64_t index) {
  std::string b;
  Put<uint32_t>(b, 4242);
  Put<uint32_t>(b, 4243);
  Put<uint64_t>(b, to);
  Put<uint64_t>(b, from);
  Put<uint64_t>(b, to);
  Put<uint64_t>(b, size);
  Put<uint64_t>(b, index);
  return Record(1, b);
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_ATTRIBUTE_JITDUMP_RECORDS_H
