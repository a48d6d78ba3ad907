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

uint64_t StackTable::NewWindow() {
  admitted_.clear();
  uint64_t over = 0;
  for (auto it = pending_.begin(); it != pending_.end();) {
    const size_t hash = absl::Hash<StackKey>{}(it->first);
    if (admitted_.contains(hash) || admitted_.size() < max_) {
      admitted_.insert(hash);
      ++it;
      continue;
    }
    over += it->second;
    pending_.erase(it++);
  }
  return over;
}

absl::flat_hash_map<StackKey, uint64_t> StackTable::Take() {
  absl::flat_hash_map<StackKey, uint64_t> out;
  out.swap(pending_);
  return out;
}

}  // namespace lcpi
