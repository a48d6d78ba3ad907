// unwind_allowance.h - how much CPU lcpid's DWARF walks of user stacks may
// take, in all and per user (the uid of the sampled process). A walk's
// cost is chosen by the user whose stack it is (the unwind tables and the
// images it maps), so without a bound two users could keep both of
// lcpid's unwinding threads busy for as long as they like. Each is a token
// bucket in ns of the walks' thread CPU time, refilled at its rate and
// holding at most kBurstSeconds' worth: a user may spend half of the
// total, and all users together the total. A walk is charged when it
// ends (one abandoned by the worker its time on the thread), so a user
// may overdraw by its walks in flight; it then waits until its own debt
// is repaid, and the total pays only what the user's balance covered, so
// one user's overdraw does not stop other users' walks. Beyond either
// bucket a stack is kept as frame pointers gave it (Aggregator: counted
// in over_cpu). Each uid is a user: one person with subordinate uids (a
// user namespace) has a share per uid.
#ifndef LCPI_LIBPROFILE_UNWIND_UNWIND_ALLOWANCE_H
#define LCPI_LIBPROFILE_UNWIND_UNWIND_ALLOWANCE_H

#include <absl/container/flat_hash_map.h>

#include <cstdint>

namespace lcpi {

class UnwindAllowance {
 public:
  // One user's share of the total.
  static constexpr double kUserShare = 0.5;
  // What a bucket holds, in seconds of its rate. A process's first walks
  // open its images' unwind tables (libdw reads their CFI), milliseconds
  // each: with a second's worth, 66 stacks of one process at 200/s/CPU
  // waited for such a debt in budget_test's stacks case.
  static constexpr double kBurstSeconds = 10;

  // All users' walks may take total_ns_per_s of CPU a second (0: no
  // bound). Buckets start full; setting the same total again changes
  // nothing (a debt is not forgiven).
  void Set(uint64_t total_ns_per_s);
  uint64_t total_ns_per_s() const { return total_rate_; }
  // May a walk of `user`'s start at now_ns (a monotonic clock)? False
  // when the user or all users together have spent their allowance.
  bool Allows(uint32_t user, int64_t now_ns);
  // A walk of `user`'s took cpu_ns: the user's bucket pays all of it (a
  // debt where it runs out), the total what the user's balance covered.
  void Charge(uint32_t user, uint64_t cpu_ns, int64_t now_ns);
  // Lets go of the buckets that are full again (a full one is as if its
  // user had never walked); Allows lets go of its user's.
  void Prune(int64_t now_ns);
  // Users with a bucket kept.
  size_t users_tracked() const { return users_.size(); }

 private:
  struct Bucket {
    double tokens = 0;  // ns of CPU; below zero, a debt
    int64_t at_ns = 0;  // when last refilled
  };
  // Refills `b` at `rate` ns/s up to kBurstSeconds' worth; true if it is full.
  static bool Refill(Bucket& b, double rate, int64_t now_ns);
  double user_rate() const { return kUserShare * static_cast<double>(total_rate_); }

  uint64_t total_rate_ = 0;
  Bucket total_;
  absl::flat_hash_map<uint32_t, Bucket> users_;
};

}  // namespace lcpi

#endif  // LCPI_LIBPROFILE_UNWIND_UNWIND_ALLOWANCE_H
