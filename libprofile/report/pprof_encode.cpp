// pprof_encode.cpp - the protobuf wire encoding of pprof's profile.proto and
// its gzip (see pprof_encode.h).
//
// Why a hand-written encoder and not libprotobuf: the schema is small, fixed
// and only ever written here (never read), and the wire format needs just
// two things, varints (wire type 0) and length-delimited bytes (wire type
// 2: strings, sub-messages, packed repeated integers). That is about a
// hundred lines with no generated code, no protoc step in the build and no
// runtime library for a command-line tool; `go tool pprof` (the interop
// test) is the check that it is right. The field numbers below are those of
// the published profile.proto.
#include "libprofile/report/pprof_encode.h"

#include "libprofile/base/text.h"

#include <zlib.h>

#include <unordered_map>

namespace lcpi::report::pprof {

namespace {

// Field numbers of profile.proto.
namespace field {
// Profile
constexpr int kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5,
              kStringTable = 6, kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11, kPeriod = 12,
              kComment = 13, kDefaultSampleType = 14;
// ValueType
constexpr int kValueTypeType = 1, kValueTypeUnit = 2;
// Sample
constexpr int kSampleLocationId = 1, kSampleValue = 2;
// Mapping
constexpr int kMappingId = 1, kMemoryStart = 2, kMemoryLimit = 3, kFileOffset = 4, kFilename = 5,
              kBuildId = 6, kHasFunctions = 7, kHasFilenames = 8, kHasLineNumbers = 9;
// Location
constexpr int kLocationId = 1, kLocationMappingId = 2, kAddress = 3, kLine = 4;
// Line
constexpr int kLineFunctionId = 1, kLineLine = 2;
// Function
constexpr int kFunctionId = 1, kName = 2, kSystemName = 3, kFunctionFilename = 4, kStartLine = 5;
}  // namespace field

constexpr int kVarint = 0, kLengthDelimited = 2;

class Writer {
 public:
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  void Key(int number, int wire_type) { Varint(static_cast<uint64_t>(number) << 3 | wire_type); }
  // A scalar field; proto3 leaves out zero values, and so does this.
  void Uint(int number, uint64_t v) {
    if (v == 0) return;
    Key(number, kVarint);
    Varint(v);
  }
  // int64 is a plain varint of the two's complement (10 bytes when negative).
  void Int(int number, int64_t v) { Uint(number, static_cast<uint64_t>(v)); }
  void Bytes(int number, const std::string& bytes) {
    Key(number, kLengthDelimited);
    Varint(bytes.size());
    out_ += bytes;
  }
  // Repeated integers, packed (proto3's default).
  template <class T>
  void Packed(int number, const std::vector<T>& values) {
    if (values.empty()) return;
    Writer w;
    for (T v : values) w.Varint(static_cast<uint64_t>(v));
    Bytes(number, w.str());
  }
  const std::string& str() const { return out_; }

 private:
  std::string out_;
};

class StringTable {
 public:
  StringTable() { Index(""); }
  // Every string as the other formats show it (Printable): profile.proto
  // strings must be UTF-8, and pprof prints them on a terminal.
  int64_t Index(const std::string& s) {
    std::string shown = Printable(s);
    auto [it, added] = index_.emplace(shown, static_cast<int64_t>(strings_.size()));
    if (added) strings_.push_back(std::move(shown));
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::unordered_map<std::string, int64_t> index_;
  std::vector<std::string> strings_;
};

std::string EncodeValueType(const ValueType& vt, StringTable* st) {
  Writer w;
  w.Int(field::kValueTypeType, st->Index(vt.type));
  w.Int(field::kValueTypeUnit, st->Index(vt.unit));
  return w.str();
}

}  // namespace

std::string EncodePprof(const Profile& p) {
  StringTable st;
  Writer out;
  for (const ValueType& vt : p.sample_types)
    out.Bytes(field::kSampleType, EncodeValueType(vt, &st));
  for (const Sample& s : p.samples) {
    Writer w;
    w.Packed(field::kSampleLocationId, s.location_ids);
    w.Packed(field::kSampleValue, s.values);
    out.Bytes(field::kSample, w.str());
  }
  for (const Mapping& m : p.mappings) {
    Writer w;
    w.Uint(field::kMappingId, m.id);
    w.Uint(field::kMemoryStart, m.memory_start);
    w.Uint(field::kMemoryLimit, m.memory_limit);
    w.Uint(field::kFileOffset, m.file_offset);
    w.Int(field::kFilename, st.Index(m.filename));
    w.Int(field::kBuildId, st.Index(m.build_id));
    w.Uint(field::kHasFunctions, m.has_functions);
    w.Uint(field::kHasFilenames, m.has_filenames);
    w.Uint(field::kHasLineNumbers, m.has_line_numbers);
    out.Bytes(field::kMapping, w.str());
  }
  for (const Location& l : p.locations) {
    Writer w;
    w.Uint(field::kLocationId, l.id);
    w.Uint(field::kLocationMappingId, l.mapping_id);
    w.Uint(field::kAddress, l.address);
    for (const Line& line : l.lines) {
      Writer lw;
      lw.Uint(field::kLineFunctionId, line.function_id);
      lw.Int(field::kLineLine, line.line);
      w.Bytes(field::kLine, lw.str());
    }
    out.Bytes(field::kLocation, w.str());
  }
  for (const Function& f : p.functions) {
    Writer w;
    w.Uint(field::kFunctionId, f.id);
    w.Int(field::kName, st.Index(f.name));
    w.Int(field::kSystemName, st.Index(f.system_name));
    w.Int(field::kFunctionFilename, st.Index(f.filename));
    w.Int(field::kStartLine, f.start_line);
    out.Bytes(field::kFunction, w.str());
  }
  out.Int(field::kTimeNanos, p.time_nanos);
  out.Int(field::kDurationNanos, p.duration_nanos);
  if (!p.period_type.type.empty() || !p.period_type.unit.empty()) {
    out.Bytes(field::kPeriodType, EncodeValueType(p.period_type, &st));
  }
  out.Int(field::kPeriod, p.period);
  std::vector<int64_t> comments;
  for (const std::string& c : p.comments) comments.push_back(st.Index(c));
  out.Packed(field::kComment, comments);
  out.Int(field::kDefaultSampleType, st.Index(p.default_sample_type));
  // The string table last: every index above is in it by now.
  for (const std::string& s : st.strings()) out.Bytes(field::kStringTable, s);
  return out.str();
}

Expected<std::string> Gzip(const std::string& bytes) {
  z_stream zs{};
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return Error(Errc::kIo, "gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&zs, bytes.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  zs.avail_in = static_cast<uInt>(bytes.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return Error(Errc::kIo, "gzip: deflate failed");
  return out;
}

}  // namespace lcpi::report::pprof
