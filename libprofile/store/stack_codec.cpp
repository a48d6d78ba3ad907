// stack_codec.cpp - the stored form of a call stack.
#include "libprofile/store/stack_codec.h"

namespace lcpi {
namespace {

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view in, size_t* pos, uint64_t* v) {
  *v = 0;
  for (unsigned shift = 0; shift < 64; shift += 7) {
    if (*pos >= in.size()) return false;
    auto byte = static_cast<uint8_t>(in[(*pos)++]);
    // The tenth byte may hold only the top bit.
    if (shift == 63 && byte > 1) return false;
    *v |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80)) return true;
  }
  return false;
}

}  // namespace

std::string EncodeStack(uint8_t end, const std::vector<StackFrame>& frames) {
  std::string out(1, static_cast<char>(end));
  for (const auto& [image, offset] : frames) {
    PutVarint(out, static_cast<uint64_t>(image));
    PutVarint(out, offset);
  }
  return out;
}

Expected<std::pair<uint8_t, std::vector<StackFrame>>> DecodeStack(std::string_view blob) {
  auto corrupt = [](const char* why) {
    return Error(Errc::kCorrupt, std::string("a stored call stack is damaged: ") + why);
  };
  if (blob.size() < 2) return corrupt("no frames");
  std::pair<uint8_t, std::vector<StackFrame>> out;
  out.first = static_cast<uint8_t>(blob[0]);
  size_t pos = 1;
  while (pos < blob.size()) {
    if (out.second.size() == kMaxStoredStackFrames) return corrupt("too many frames");
    uint64_t image, offset;
    if (!GetVarint(blob, &pos, &image) || !GetVarint(blob, &pos, &offset))
      return corrupt("a frame runs past the end");
    if (image > static_cast<uint64_t>(INT64_MAX)) return corrupt("an image id out of range");
    out.second.emplace_back(static_cast<int64_t>(image), offset);
  }
  return out;
}

int64_t StackId(std::string_view blob) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : blob) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ull;
  }
  h &= INT64_MAX;
  return h ? static_cast<int64_t>(h) : 1;
}

}  // namespace lcpi
