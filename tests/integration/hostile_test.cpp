// hostile_test.cpp - what a hostile local user can do to lcpid, end to end
// as root on this host's perf events: nothing an unprivileged user runs may
// stall the thread that drains the rings, keep the control socket from
// answering, or keep SIGTERM from ending lcpid with everything flushed.
// The user is `nobody`; what it runs:
// - a program from a file system that stops answering (hang_fs, FUSE,
//   stopped as a network mount's server that went away): lcpid's open of
//   the mapped file never returns;
// - a program that leaves a FIFO where its file was (fifo_swap);
// - programs with a 2 GB loadable segment and no build-id, at several
//   paths (hard links): identifying each by content hashes 2 GB;
// and root's own control clients that send a byte at a time (nobody's are
// refused by the socket's peer check).
// Each needs a lookup (an open, a hash) that lcpid must not wait for.
#include <catch2/catch.hpp>

#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "reliability_util.h"

namespace fs = std::filesystem;
using lcpi::testing::Capture;
using lcpi::testing::DaemonFixture;
using lcpi::testing::Num;
using lcpi::testing::ReadDb;
using lcpi::testing::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

const std::string kWorkloads = WORKLOAD_DIR;
constexpr uid_t kNobody = 65534;
constexpr gid_t kNogroup = 65534;

// Starts argv as `uid` (no supplementary groups); its pid.
pid_t SpawnAs(uid_t uid, gid_t gid, const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) {
    int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    if (setgroups(0, nullptr) < 0 || setgid(gid) < 0 || setuid(uid) < 0) _exit(126);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Processes killed and reaped at the end, whatever happened.
struct Children {
  std::vector<pid_t> pids;
  void Add(pid_t pid) { pids.push_back(pid); }
  ~Children() {
    for (pid_t p : pids) kill(p, SIGKILL);
    for (pid_t p : pids) waitpid(p, nullptr, 0);
  }
};

// hang_fs serving `files` copies of `source` at `dir`; Hang() stops it:
// from then on nothing on it is answered, as on a network mount whose
// server went away.
class HungMount {
 public:
  HungMount(const std::string& source, int files, const std::string& dir) : dir_(dir) {
    fs::create_directories(dir);
    // Its users (nobody) pass through the directories above it.
    fs::permissions(fs::path(dir).parent_path(), fs::perms::others_exec, fs::perm_options::add);
    pid_ = SpawnAs(0, 0, {kWorkloads + "/hang_fs", source, std::to_string(files), dir});
    for (int i = 0; i < 200 && !fs::exists(dir + "/prog0"); i++)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    // One close while it answers: the kernel learns that it has no FLUSH
    // (a network file system sends nothing at the close of a file opened to
    // read). Else every later close would wait for it, uninterruptibly
    // (FUSE_FLUSH is a forced request), once it hangs.
    if (int fd = open((dir + "/prog0").c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) close(fd);
  }
  ~HungMount() {
    // Its death aborts the pending requests: whoever waited gets an error.
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    (void)!system(("umount -l " + dir_ + " 2>/dev/null").c_str());
  }
  bool mounted() const { return fs::exists(dir_ + "/prog0"); }
  void Hang() { kill(pid_, SIGSTOP); }
  std::string File(int k) const { return dir_ + "/prog" + std::to_string(k); }

 private:
  std::string dir_;
  pid_t pid_ = -1;
};

// A copy of the ELF program `from` at `to` whose PT_GNU_STACK program header
// becomes a read-only PT_LOAD of `bytes` more, in a hole at the end of the
// file (sparse): it still runs, and its identity by content (no build-id)
// hashes every byte of it.
void MakeHuge(const std::string& from, const std::string& to, uint64_t bytes) {
  fs::copy_file(from, to, fs::copy_options::overwrite_existing);
  int fd = open(to.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  Elf64_Ehdr eh;
  REQUIRE(pread(fd, &eh, sizeof eh, 0) == sizeof eh);
  REQUIRE(std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0);
  std::vector<Elf64_Phdr> ph(eh.e_phnum);
  const auto table = static_cast<ssize_t>(ph.size() * sizeof(Elf64_Phdr));
  REQUIRE(pread(fd, ph.data(), table, static_cast<off_t>(eh.e_phoff)) == table);
  constexpr uint64_t kAlign = 2u << 20;
  auto up = [](uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; };
  uint64_t end = 0;
  Elf64_Phdr* stack = nullptr;
  for (Elf64_Phdr& p : ph) {
    if (p.p_type == PT_LOAD) end = std::max(end, p.p_vaddr + p.p_memsz);
    if (p.p_type == PT_GNU_STACK) stack = &p;
  }
  REQUIRE(stack);
  struct stat st;
  REQUIRE(fstat(fd, &st) == 0);
  *stack = Elf64_Phdr{};
  stack->p_type = PT_LOAD;
  stack->p_flags = PF_R;
  stack->p_offset = up(static_cast<uint64_t>(st.st_size));
  stack->p_vaddr = stack->p_paddr = up(end) + kAlign;
  stack->p_filesz = stack->p_memsz = bytes;
  stack->p_align = 0x1000;
  REQUIRE(pwrite(fd, ph.data(), table, static_cast<off_t>(eh.e_phoff)) == table);
  REQUIRE(ftruncate(fd, static_cast<off_t>(stack->p_offset + bytes)) == 0);
  close(fd);
}

// One status request: its reply and how long it took.
struct Timed {
  std::map<std::string, std::string> status;
  double seconds = 0;
};
Timed TimedStatus(const std::string& socket) {
  Clock::time_point t0 = Clock::now();
  // timeout(1): an lcpid whose loop hangs never answers.
  std::istringstream in(
      Capture("timeout 5 " + std::string(LCPICTL_PATH) + " --socket " + socket + " status"));
  Timed t;
  for (std::string line; std::getline(in, line);)
    if (size_t sp = line.find(' '); sp != std::string::npos)
      t.status[line.substr(0, sp)] = line.substr(sp + 1);
  t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

std::string SocketOf(const DaemonFixture& d) {
  return fs::path(d.db_path()).parent_path() / "lcpid.sock";
}

// Samples lcpid has handled (taken, less those the kernel lost) per second
// over `window`, and the slowest status answer meanwhile (asked every 500 ms).
// Samples are counted as they are read: the rate is over the time of the
// newest sample counted (samples_as_of_ns), not over when status was asked.
struct Rate {
  double per_second = 0;
  double slowest_status = 0;
  int unanswered = 0;
  uint64_t lost = 0;
};
Rate MeasureRate(DaemonFixture& d, std::chrono::milliseconds window) {
  Rate r;
  Timed first = TimedStatus(SocketOf(d));
  const Clock::time_point t0 = Clock::now();
  Timed last = first;
  while (Clock::now() - t0 < window) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    last = TimedStatus(SocketOf(d));
    r.slowest_status = std::max(r.slowest_status, last.seconds);
    if (last.status.count("samples") == 0) r.unanswered++;
  }
  auto handled = [](Timed& t) {
    return static_cast<double>(Num(t.status, "samples") - Num(t.status, "lost"));
  };
  const double secs = static_cast<double>(Num(last.status, "samples_as_of_ns") -
                                          Num(first.status, "samples_as_of_ns")) /
                      1e9;
  if (secs > 0) r.per_second = (handled(last) - handled(first)) / secs;
  r.lost = Num(last.status, "lost") - Num(first.status, "lost");
  return r;
}

// SIGTERM: how long lcpid took to exit, and its exit status.
std::pair<double, int> TimedStop(DaemonFixture& d) {
  Clock::time_point t0 = Clock::now();
  kill(d.pid(), SIGTERM);
  int status = -1;
  for (int i = 0; i < 300; i++) {  // 30 s, then it is killed
    int ws = 0;
    if (waitpid(d.pid(), &ws, WNOHANG) == d.pid()) {
      status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -WTERMSIG(ws);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  if (status == -1) d.Kill(SIGKILL);
  return {secs, status};
}

// A directory nobody owns, for nobody's programs.
std::string NobodyDir(const TempDir& t, const std::string& name) {
  std::string dir = t.path + "/" + name;
  fs::create_directories(dir);
  REQUIRE(chown(dir.c_str(), kNobody, kNogroup) == 0);
  fs::permissions(t.path, fs::perms::others_exec, fs::perm_options::add);
  return dir;
}

// Every sample lcpid took is on disk or counted as lost.
void CheckFlushed(const std::string& db) {
  lcpi::testing::DbFigures f = ReadDb(db);
  REQUIRE(f.ok);
  INFO("samples " << f.Stat("samples") << ", on disk " << f.on_disk << ", lost " << f.Stat("lost")
                  << ", dropped " << f.Stat("dropped"));
  CHECK(f.on_disk > 0);
  CHECK(static_cast<uint64_t>(f.Stat("samples")) ==
        f.on_disk + static_cast<uint64_t>(f.Stat("lost") + f.Stat("dropped")));
}

}  // namespace

TEST_CASE("lcpid starts, samples and stops while nobody's program runs from a hung mount") {
  TempDir t("lcpi-hostile");
  Children kids;  // reaped after the mount is gone: a process may wait on it
  HungMount mount(kWorkloads + "/shares_nobid", 1, t.path + "/mnt");
  REQUIRE(mount.mounted());
  // Running before lcpid (its pages in memory), then the mount hangs:
  // lcpid's /proc scan finds the file, whose open never returns.
  kids.Add(SpawnAs(kNobody, kNogroup, {mount.File(0), "60"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  mount.Hang();

  DaemonFixture d;
  Timed first = TimedStatus(SocketOf(d));
  INFO("status: " << first.status.size() << " lines");
  REQUIRE(first.status.count("samples"));  // lcpid came up
  Rate r = MeasureRate(d, std::chrono::seconds(3));
  WARN("samples/s " << r.per_second << ", slowest status " << r.slowest_status << " s");
  CHECK(r.per_second > 1000);
  CHECK(r.unanswered == 0);
  CHECK(r.slowest_status < 1.0);
  // The open really hangs: the lookup identifying the file is still under
  // way (or was given up as stuck).
  std::map<std::string, std::string> st = TimedStatus(SocketOf(d)).status;
  CHECK(Num(st, "lookups_running") + Num(st, "lookups_abandoned") >= 1);
  CHECK(Num(st, "images_pending") + Num(st, "lookups_abandoned") >= 1);

  auto [secs, status] = TimedStop(d);
  CHECK(status == 0);
  CHECK(secs < 5.0);
  CheckFlushed(d.db_path());
}

TEST_CASE("nobody's FIFO, 2 GB binaries and hung mount stall neither sampling nor status") {
  TempDir t("lcpi-hostile");
  Children kids;  // reaped after the mount is gone: a process may wait on it
  HungMount mount(kWorkloads + "/shares_nobid", 1, t.path + "/mnt");
  REQUIRE(mount.mounted());
  const std::string home = NobodyDir(t, "nobody");
  // Four paths to one 2 GB program: each is identified on its own.
  MakeHuge(kWorkloads + "/shares_nobid", home + "/huge0", 2ull << 30);
  for (int i = 1; i < 4; i++)
    REQUIRE(link((home + "/huge0").c_str(), (home + "/huge" + std::to_string(i)).c_str()) == 0);
  fs::copy_file(kWorkloads + "/fifo_swap", home + "/fifo_swap");
  REQUIRE(chown((home + "/fifo_swap").c_str(), kNobody, kNogroup) == 0);

  // Both CPUs busy throughout, so the sampling rate is the same before and
  // during (cpu-clock takes fewer samples of idle CPUs).
  for (int i = 0; i < 2; i++) kids.Add(SpawnAs(0, 0, {kWorkloads + "/tiny", "40000"}));
  DaemonFixture d;
  REQUIRE(TimedStatus(SocketOf(d)).status.count("samples"));
  const std::string sock = SocketOf(d);
  Rate before = MeasureRate(d, std::chrono::seconds(4));

  // The attack: a program that maps a file of the mount executable after
  // the mount has hung (lcpid's open of it never returns), the FIFO, the
  // 2 GB programs, and control clients dribbling bytes.
  kids.Add(SpawnAs(kNobody, kNogroup, {kWorkloads + "/late_map", mount.File(0), "1000", "30"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  mount.Hang();
  kids.Add(SpawnAs(kNobody, kNogroup, {home + "/fifo_swap", "3000"}));
  for (int i = 0; i < 4; i++)
    kids.Add(SpawnAs(kNobody, kNogroup, {home + "/huge" + std::to_string(i), "3"}));
  std::atomic<bool> done{false};
  std::vector<std::thread> dribblers;
  for (uid_t uid : {uid_t{0}, kNobody}) {
    dribblers.emplace_back([&, uid] {
      while (!done) {
        pid_t pid = fork();
        if (pid == 0) {
          // Forked from a thread while the main thread may be between
          // popen's pipe and its child: without this, the copy of that
          // pipe's write end held here (for the second this client lives)
          // kept the status request's reader from its EOF.
          close_range(3, ~0u, 0);
          if (uid != 0 && (setgid(kNogroup) < 0 || setuid(uid) < 0)) _exit(1);
          int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
          sockaddr_un addr{};
          addr.sun_family = AF_UNIX;
          std::memcpy(addr.sun_path, sock.c_str(), sock.size());
          if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0)
            for (int i = 0; i < 20 && send(fd, "s", 1, MSG_NOSIGNAL) == 1; i++) usleep(200 * 1000);
          _exit(0);
        }
        waitpid(pid, nullptr, 0);
      }
    });
  }
  Rate during = MeasureRate(d, std::chrono::seconds(8));
  std::map<std::string, std::string> st = TimedStatus(SocketOf(d)).status;
  done = true;
  for (std::thread& th : dribblers) th.join();

  // The figures, for the record (docs/reliability.md).
  WARN("samples/s before " << before.per_second << ", during " << during.per_second
                           << "; slowest status " << during.slowest_status << " s; lookups "
                           << Num(st, "lookups") << ", running " << Num(st, "lookups_running")
                           << ", abandoned " << Num(st, "lookups_abandoned") << ", stuck threads "
                           << Num(st, "lookup_threads_stuck") << ", images pending "
                           << Num(st, "images_pending"));
  CHECK(before.per_second > 1000);
  CHECK(std::abs(during.per_second - before.per_second) <= 0.10 * before.per_second);
  CHECK(during.lost == 0);
  CHECK(during.unanswered == 0);
  CHECK(during.slowest_status < 1.0);
  // The attack reached lcpid: lookups ran for the programs it started.
  CHECK(Num(st, "lookups") >= 6);
  CHECK(Num(st, "lookups_running") + Num(st, "lookups_abandoned") >= 1);

  auto [secs, status] = TimedStop(d);
  WARN("SIGTERM to exit: " << secs << " s");
  CHECK(status == 0);
  CHECK(secs < 5.0);
  CheckFlushed(d.db_path());
}
