// stack_table.h - the call stacks of a window, deduplicated: each distinct
// stack (its end reason and its (image, offset) frames, leaf first) once,
// with its samples. Bounded: at most kMaxStacksPerWindow distinct stacks
// per window (a stack new to a full window is not kept, its samples counted
// in stacks_over_limit), so memory stays at most that many stacks of
// kMaxStackDepth frames however the programs a host runs call each other.
#ifndef LCPI_LIBPROFILE_AGGREGATE_STACK_TABLE_H
#define LCPI_LIBPROFILE_AGGREGATE_STACK_TABLE_H

#include <cstdint>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "libprofile/store/stat_names.h"

namespace lcpi {

// Distinct stacks a window keeps (lcpid's default; about 16 MiB of frames
// at the worst, 8,192 stacks of 127 frames of 16 bytes).
inline constexpr size_t kMaxStacksPerWindow = 8192;

// Statistics the stack table adds to its window (docs/operators.md), with
// kStacksOverLimitStat (store/stat_names.h: the reports read it too).
inline constexpr const char* kStackSamplesStat = "stack_samples";
inline constexpr const char* kStacksTruncatedStat = "stacks_truncated";

struct StackKey {
  uint8_t end = 0;
  std::vector<std::pair<int32_t, uint64_t>> frames;  // (image table index, offset)
  bool operator==(const StackKey&) const = default;
  template <typename H>
  friend H AbslHashValue(H h, const StackKey& k) {
    return H::combine(std::move(h), k.end, k.frames);
  }
};

class StackTable {
 public:
  explicit StackTable(size_t max_per_window = kMaxStacksPerWindow) : max_(max_per_window) {}
  // Adds count samples of key; false when the window is full and key is new
  // to it (nothing kept: the caller counts it).
  bool Add(StackKey key, uint64_t count);
  void set_max(size_t n) { max_ = n; }
  // A new window: its stacks are admitted afresh, those put back (held for
  // a later batch) first; returns the samples of the ones beyond the cap,
  // which are not kept (the caller counts them).
  uint64_t NewWindow();
  // The stacks pending since the last Take, handed over.
  absl::flat_hash_map<StackKey, uint64_t> Take();
  // Puts back stacks a batch could not take yet (an image being identified).
  void PutBack(StackKey key, uint64_t count) { pending_[std::move(key)] += count; }
  const absl::flat_hash_map<StackKey, uint64_t>& pending() const { return pending_; }

 private:
  size_t max_;
  absl::flat_hash_map<StackKey, uint64_t> pending_;
  absl::flat_hash_set<size_t> admitted_;  // the window's stacks, by hash
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_AGGREGATE_STACK_TABLE_H
