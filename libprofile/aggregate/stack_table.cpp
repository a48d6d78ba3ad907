// stack_table.cpp - the window's distinct call stacks.
#include "libprofile/aggregate/stack_table.h"

namespace lcpi {

bool StackTable::Add(StackKey key, uint64_t count) {
  const size_t hash = absl::Hash<StackKey>{}(key);
  if (!admitted_.contains(hash)) {
    if (admitted_.size() >= max_) return false;
    admitted_.insert(hash);
  }
  pending_[std::move(key)] += count;
  return true;
}

absl::flat_hash_map<StackKey, uint64_t> StackTable::Take() {
  absl::flat_hash_map<StackKey, uint64_t> out;
  out.swap(pending_);
  return out;
}

}  // namespace lcpi
