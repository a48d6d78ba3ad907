// stack_codec.h - a call stack as the store keeps it: one blob, its end
// reason (one byte) then, per frame from the leaf outwards, the image id and
// the offset as LEB128 varints; and the blob's hash, which is the stack's id
// (FNV-1a, fixed here forever: ids in a database must not change with a
// build). A stored blob is read as untrusted: every varint is checked
// against the end.
#ifndef LCPI_LIBPROFILE_STORE_STACK_CODEC_H
#define LCPI_LIBPROFILE_STORE_STACK_CODEC_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "libprofile/base/error.h"

namespace lcpi {

// (image id, offset), as stored.
using StackFrame = std::pair<int64_t, uint64_t>;

// The most frames a stored stack may have; a batch with more is refused.
inline constexpr size_t kMaxStoredStackFrames = 1024;

std::string EncodeStack(uint8_t end, const std::vector<StackFrame>& frames);
// kCorrupt: empty, a varint past the end or over 64 bits, more than
// kMaxStoredStackFrames frames, or a negative image id.
Expected<std::pair<uint8_t, std::vector<StackFrame>>> DecodeStack(std::string_view blob);
// The stack's id: a positive 63-bit hash of the blob (never 0).
int64_t StackId(std::string_view blob);

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_STORE_STACK_CODEC_H
