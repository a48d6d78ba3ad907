// pprof_encode.h - a profile in the model of pprof's profile.proto
// (github.com/google/pprof, proto/profile.proto: Profile, ValueType, Sample,
// Mapping, Location, Line, Function) and its encoding: protobuf wire format,
// then gzip, as `go tool pprof` reads it.
//
// The model holds strings, not string-table indexes: EncodePprof builds the
// string table (index 0 is "", as the format requires) while it writes.
// Ids are the caller's: non-zero, unique per kind, and every id a sample,
// location or line names must exist.
#ifndef LCPI_LIBPROFILE_REPORT_PPROF_ENCODE_H
#define LCPI_LIBPROFILE_REPORT_PPROF_ENCODE_H

#include <cstdint>
#include <string>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi::report::pprof {

struct ValueType {
  std::string type, unit;  // ("samples", "count"), ("cycles", "nanoseconds")
};

struct Sample {
  std::vector<uint64_t> location_ids;  // leaf first
  std::vector<int64_t> values;         // one per Profile::sample_types
};

struct Mapping {
  uint64_t id = 0;
  uint64_t memory_start = 0, memory_limit = 0, file_offset = 0;
  std::string filename, build_id;
  bool has_functions = false, has_filenames = false, has_line_numbers = false;
};

struct Line {
  uint64_t function_id = 0;
  int64_t line = 0;  // 0: unknown
};

struct Location {
  uint64_t id = 0, mapping_id = 0, address = 0;
  std::vector<Line> lines;
};

struct Function {
  uint64_t id = 0;
  std::string name, system_name, filename;
  int64_t start_line = 0;
};

struct Profile {
  std::vector<ValueType> sample_types;
  std::vector<Sample> samples;
  std::vector<Mapping> mappings;
  std::vector<Location> locations;
  std::vector<Function> functions;
  int64_t time_nanos = 0, duration_nanos = 0;
  ValueType period_type;
  int64_t period = 0;
  std::vector<std::string> comments;
  std::string default_sample_type;  // a sample_types[].type, or ""
};

// The serialized profile.proto message (not compressed).
std::string EncodePprof(const Profile& profile);

// gzip (RFC 1952) of `bytes`, with zlib. kIo if zlib fails.
Expected<std::string> Gzip(const std::string& bytes);

}  // namespace lcpi::report::pprof

#endif  // LCPI_LIBPROFILE_REPORT_PPROF_ENCODE_H
