// hostile_scenario.h - the standing adversary's frame (hostile_test.cpp).
//
// An Attack is what an unprivileged local user (nobody) does to lcpid; a
// scenario runs one attack, or several at once, beside a victim: root's
// `shares` program, whose work is known to go 60/30/10 to work60, work30
// and work10, and a spinner keeping the other CPU busy. Whatever the
// attack, RunScenario holds lcpid to what no user may take from another:
// - sampling goes on at its rate from before the attack (within 10 %), no
//   sample lost;
// - status answers in under 1 s, as lcpictl sees it (lcpid's own
//   max_loop_gap_ms + max_status_ms, the longest a request could wait
//   inside it, is reported: a loop stalled by the host's load shows there
//   first, without a client having waited);
// - SIGTERM ends lcpid within `stop_bound` (5 s) with exit status 0, every
//   sample it took on disk or counted as lost (both bounds doubled under
//   ASan);
// - the victim's shares land on disk within 3 points of truth.
// It reports lcpid's peak RSS (VmHWM, read before SIGTERM).
//
// Adding an attack: an Attack in hostile_test.cpp (a few lines: what runs
// before lcpid, what starts once the victim runs, what shows it reached
// lcpid), a TEST_CASE that runs it alone, and an entry in the list of all
// attacks run at once.
#ifndef LCPI_TESTS_INTEGRATION_HOSTILE_SCENARIO_H
#define LCPI_TESTS_INTEGRATION_HOSTILE_SCENARIO_H

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "libprofile/store/profile_db.h"

namespace lcpi::hostile {

constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

using StatusLines = std::map<std::string, std::string>;

// Starts argv as `uid` (no supplementary groups, stdin and stdout on
// /dev/null); its pid.
pid_t SpawnAs(uid_t uid, gid_t gid, const std::vector<std::string>& argv);

// hang_fs serving `files` copies of `source` at `dir`; Hang() stops it:
// from then on nothing on it is answered, as on a network mount whose
// server went away. Its end aborts what waits on it.
class HungMount {
 public:
  HungMount(const std::string& workloads, const std::string& source, int files,
            const std::string& dir);
  ~HungMount();
  HungMount(const HungMount&) = delete;
  HungMount& operator=(const HungMount&) = delete;
  bool mounted() const;
  void Hang();
  std::string File(int k) const { return dir_ + "/prog" + std::to_string(k); }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

// A copy of the ELF program `from` at `to` whose PT_GNU_STACK program
// header becomes a read-only PT_LOAD of `bytes` more, in a hole at the end
// of the file (sparse): it still runs, and its identity by content (no
// build-id) hashes every byte of it.
void MakeHuge(const std::string& from, const std::string& to, uint64_t bytes);

// One status request through lcpictl: its reply and how long it took.
struct TimedStatus {
  StatusLines status;
  double seconds = 0;
};
TimedStatus AskStatus(const std::string& socket);

// What an attack works with: a directory of nobody's, its processes,
// threads and mounts, all ended with the scenario (processes first, then
// threads, then mounts, whose end frees whoever waits on them).
class Arena {
 public:
  Arena();
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // The directory the workloads were built in.
  static const std::string& Workloads();
  // A directory nobody owns and may write.
  const std::string& home() const { return home_; }
  // A copy of workload `name` in home, owned by nobody, at home/as.
  std::string NobodyCopy(const std::string& name, const std::string& as);
  // Starts argv as nobody (or root); ended with the scenario.
  pid_t AsNobody(const std::vector<std::string>& argv);
  pid_t AsRoot(const std::vector<std::string>& argv);
  // A FUSE mount of `files` copies of `source` (a path), in a directory of
  // its own; it answers until Hang().
  HungMount& NewMount(const std::string& source, int files);
  // A file (outside the arena: a perf map in /tmp) removed at the end.
  void RemoveAtEnd(const std::string& path) { files_.push_back(path); }
  // Runs body on a thread of its own until the scenario ends; body returns
  // when `stop` is set.
  void Loop(std::function<void(const std::atomic<bool>& stop)> body);
  // lcpid's control socket, once it runs.
  std::string socket;

 private:
  testing::TempDir dir_;
  std::string home_;
  std::vector<std::unique_ptr<HungMount>> mounts_;
  std::vector<pid_t> pids_;
  std::vector<std::string> files_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> loops_;
};

// What lcpid shows once the attack has run: its status just before
// SIGTERM, and the database after it ended.
struct Aftermath {
  const StatusLines& status;
  ProfileDb& db;
};

struct Attack {
  std::string name;
  // Before lcpid starts (a program its /proc scan finds); may be empty.
  std::function<void(Arena&)> before;
  // Once lcpid has sampled the victim for a while; may be empty.
  std::function<void(Arena&)> start;
  // Checks (CHECK) that the attack reached lcpid; may be empty.
  std::function<void(const Aftermath&)> reached;
};

// What a scenario measured, for the record (docs/reliability.md).
struct Figures {
  double rate_before = 0, rate_during = 0;  // samples handled per second
  double slowest_status = 0;                // seconds, as lcpictl saw it
  uint64_t loop_gap_ms = 0, status_ms = 0;  // lcpid's max_loop_gap_ms, max_status_ms
  uint64_t peak_rss = 0;                    // bytes: lcpid's VmHWM before SIGTERM
  double stop_seconds = 0;                  // SIGTERM to exit
  double shares[3] = {0, 0, 0};             // the victim's work60, work30, work10 (%)
  double seconds = 0;                       // the scenario, end to end
};

// Runs the attacks at once beside the victim under a fresh lcpid, checks
// what every scenario must hold (above) and each attack's own `reached`.
Figures RunScenario(const std::vector<Attack>& attacks,
                    std::chrono::milliseconds stop_bound = std::chrono::seconds(5));

// Samples on disk (all epochs) on images whose path contains `part`
// (named, or `[unreadable PATH]` when lcpid could not identify the file).
uint64_t SamplesOnPaths(ProfileDb& db, const std::string& part);

}  // namespace lcpi::hostile

#endif  // LCPI_TESTS_INTEGRATION_HOSTILE_SCENARIO_H
