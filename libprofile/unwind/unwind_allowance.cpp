// unwind_allowance.cpp - token buckets of unwinding CPU (unwind_allowance.h).
#include "libprofile/unwind/unwind_allowance.h"

#include <algorithm>

namespace lcpi {

namespace {
constexpr double kNsPerS = 1e9;
}  // namespace

void UnwindAllowance::Set(uint64_t total_ns_per_s) {
  if (total_ns_per_s == total_rate_) return;  // debts stand: set again at every window's end
  total_rate_ = total_ns_per_s;
  total_ = Bucket{kBurstSeconds * static_cast<double>(total_rate_), 0};
  users_.clear();
}

bool UnwindAllowance::Refill(Bucket& b, double rate, int64_t now_ns) {
  const double full = kBurstSeconds * rate;
  if (now_ns > b.at_ns) {
    b.tokens = std::min(full, b.tokens + rate * static_cast<double>(now_ns - b.at_ns) / kNsPerS);
    b.at_ns = now_ns;
  }
  return b.tokens >= full;
}

bool UnwindAllowance::Allows(uint32_t user, int64_t now_ns) {
  if (total_rate_ == 0) return true;
  if (total_.at_ns == 0) total_.at_ns = now_ns;
  Refill(total_, static_cast<double>(total_rate_), now_ns);
  auto it = users_.find(user);
  if (it != users_.end() && Refill(it->second, user_rate(), now_ns)) {
    users_.erase(it);  // full: as if it had never walked
    it = users_.end();
  }
  const bool user_ok = it == users_.end() || it->second.tokens > 0;
  return user_ok && total_.tokens > 0;
}

void UnwindAllowance::Charge(uint32_t user, uint64_t cpu_ns, int64_t now_ns) {
  if (total_rate_ == 0) return;
  const double cost = static_cast<double>(cpu_ns);
  if (total_.at_ns == 0) total_.at_ns = now_ns;
  Refill(total_, static_cast<double>(total_rate_), now_ns);
  auto [it, added] = users_.try_emplace(user, Bucket{kBurstSeconds * user_rate(), now_ns});
  if (!added) Refill(it->second, user_rate(), now_ns);
  total_.tokens -= std::clamp(it->second.tokens, 0.0, cost);
  it->second.tokens -= cost;
}

void UnwindAllowance::Prune(int64_t now_ns) {
  const double rate = user_rate();
  absl::erase_if(users_, [&](auto& entry) { return Refill(entry.second, rate, now_ns); });
}

}  // namespace lcpi
