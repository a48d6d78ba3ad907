// hostile_scenario.cpp - the adversary's frame: nobody's processes and
// mounts, the victim, lcpid's figures and what every scenario must hold.
#include "hostile_scenario.h"

#include <catch2/catch.hpp>

#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "libprofile/image/elf_symbols.h"
#include "libprofile/image/image_id.h"
#include "reliability_util.h"

namespace lcpi::hostile {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::Capture;
using testing::Num;
using testing::Text;

namespace {

// The victim samples alone for kBaseline, then beside the attacks for
// kAttack; status is asked every kStatusEvery meanwhile.
constexpr auto kBaseline = std::chrono::seconds(3);
constexpr auto kAttack = std::chrono::seconds(6);
constexpr auto kStatusEvery = std::chrono::milliseconds(500);

// A process of the scenario's own (the victim, its spinner): killed and
// reaped at the end, or earlier by End().
struct Own {
  pid_t pid = -1;
  explicit Own(pid_t p) : pid(p) {}
  ~Own() { End(); }
  Own(const Own&) = delete;
  Own& operator=(const Own&) = delete;
  void End() {
    if (pid <= 0) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    pid = -1;
  }
};

// Samples lcpid has handled (taken, less those the kernel lost) per second
// over `window`, and the slowest status answer meanwhile. The rate is over
// the time of the newest sample counted (samples_as_of_ns), not over when
// status was asked: samples are counted as they are read.
struct Rate {
  double per_second = 0;
  double slowest_status = 0;
  int unanswered = 0;
  uint64_t lost = 0;
};
Rate MeasureRate(const std::string& socket, Clock::duration window) {
  Rate r;
  TimedStatus first = AskStatus(socket);
  const Clock::time_point t0 = Clock::now();
  TimedStatus last = first;
  while (Clock::now() - t0 < window) {
    std::this_thread::sleep_for(kStatusEvery);
    last = AskStatus(socket);
    r.slowest_status = std::max(r.slowest_status, last.seconds);
    if (last.status.count("samples") == 0) r.unanswered++;
  }
  auto handled = [](TimedStatus& t) {
    return static_cast<double>(Num(t.status, "samples") - Num(t.status, "lost"));
  };
  const double secs = static_cast<double>(Num(last.status, "samples_as_of_ns") -
                                          Num(first.status, "samples_as_of_ns")) /
                      1e9;
  if (secs > 0) r.per_second = (handled(last) - handled(first)) / secs;
  r.lost = Num(last.status, "lost") - Num(first.status, "lost");
  return r;
}

// lcpid's peak resident memory so far (VmHWM), in bytes; 0 if unreadable.
uint64_t PeakRss(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;  // kB
  return 0;
}

// SIGTERM: how long lcpid took to exit (killed after 30 s), and its exit
// status (-1 if it had to be killed).
std::pair<double, int> TimedStop(testing::DaemonFixture& d) {
  Clock::time_point t0 = Clock::now();
  kill(d.pid(), SIGTERM);
  int status = -1;
  for (int i = 0; i < 300; i++) {
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

// Every sample lcpid took is on disk or counted as lost.
void CheckFlushed(const std::string& db) {
  testing::DbFigures f = testing::ReadDb(db);
  REQUIRE(f.ok);
  INFO("samples " << f.Stat("samples") << ", on disk " << f.on_disk << ", lost " << f.Stat("lost")
                  << ", dropped " << f.Stat("dropped"));
  CHECK(f.on_disk > 0);
  CHECK(static_cast<uint64_t>(f.Stat("samples")) ==
        f.on_disk + static_cast<uint64_t>(f.Stat("lost") + f.Stat("dropped")));
}

template <class T>
T Must(Expected<T> e) {
  REQUIRE(e);
  return std::move(*e);
}

// The victim's samples per function, over every epoch: its image found by
// content identity, its offsets named from the program it ran.
std::map<std::string, uint64_t> VictimSymbols(ProfileDb& db, const std::string& program) {
  const std::string identity = Must(IdentifyElfFile(program)).identity;
  std::unique_ptr<ElfImage> elf = Must(ElfImage::Open(program));
  std::map<std::string, uint64_t> out;
  for (const ImageInfo& image : Must(db.ListImages())) {
    if (image.identity != identity) continue;
    for (const EventInfo& ev : Must(db.ListEvents()))
      for (const OffsetCount& oc :
           Must(db.OffsetCounts(kAllEpochs, image.id, ev.id, 0, UINT64_MAX >> 1))) {
        auto hit = elf->LookupFileOffset(oc.offset);
        out[hit ? hit->symbol->name : "?"] += oc.count;
      }
  }
  return out;
}

}  // namespace

pid_t SpawnAs(uid_t uid, gid_t gid, const std::vector<std::string>& argv) {
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // its own group: its children are killed with it
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

HungMount::HungMount(const std::string& workloads, const std::string& source, int files,
                     const std::string& dir)
    : dir_(dir) {
  fs::create_directories(dir);
  // Its users (nobody) pass through the directories above it.
  fs::permissions(fs::path(dir).parent_path(), fs::perms::others_exec, fs::perm_options::add);
  pid_ = SpawnAs(0, 0, {workloads + "/hang_fs", source, std::to_string(files), dir});
  for (int i = 0; i < 200 && !mounted(); i++)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  // One close while it answers: the kernel learns that it has no FLUSH
  // (a network file system sends nothing at the close of a file opened to
  // read). Else every later close would wait for it, uninterruptibly
  // (FUSE_FLUSH is a forced request), once it hangs.
  if (int fd = open(File(0).c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) close(fd);
}

HungMount::~HungMount() {
  // Its death aborts the pending requests: whoever waited gets an error.
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  (void)!system(("umount -l " + dir_ + " 2>/dev/null").c_str());
}

bool HungMount::mounted() const { return fs::exists(File(0)); }

void HungMount::Hang() { kill(pid_, SIGSTOP); }

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

TimedStatus AskStatus(const std::string& socket) {
  Clock::time_point t0 = Clock::now();
  // timeout(1): an lcpid whose loop hangs never answers.
  std::istringstream in(
      Capture("timeout 5 " + std::string(LCPICTL_PATH) + " --socket " + socket + " status"));
  TimedStatus t;
  for (std::string line; std::getline(in, line);)
    if (size_t sp = line.find(' '); sp != std::string::npos)
      t.status[line.substr(0, sp)] = line.substr(sp + 1);
  t.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

Arena::Arena() : dir_("lcpi-hostile"), home_(dir_.path + "/nobody") {
  fs::create_directories(home_);
  REQUIRE(chown(home_.c_str(), kNobody, kNogroup) == 0);
  fs::permissions(dir_.path, fs::perms::others_exec, fs::perm_options::add);
}

Arena::~Arena() {
  stop_ = true;
  for (std::thread& t : loops_) t.join();
  for (pid_t p : pids_) {
    kill(-p, SIGKILL);  // with the children it forked
    kill(p, SIGKILL);   // in case it had no group of its own yet
  }
  // A process may wait on a hung mount: reaped once the mounts are gone.
  mounts_.clear();
  for (pid_t p : pids_) waitpid(p, nullptr, 0);
  for (const std::string& f : files_) unlink(f.c_str());
}

const std::string& Arena::Workloads() {
  static const std::string dir = WORKLOAD_DIR;
  return dir;
}

std::string Arena::NobodyCopy(const std::string& name, const std::string& as) {
  const std::string path = home_ + "/" + as;
  fs::copy_file(Workloads() + "/" + name, path, fs::copy_options::overwrite_existing);
  REQUIRE(chown(path.c_str(), kNobody, kNogroup) == 0);
  return path;
}

pid_t Arena::AsNobody(const std::vector<std::string>& argv) {
  pids_.push_back(SpawnAs(kNobody, kNogroup, argv));
  return pids_.back();
}

pid_t Arena::AsRoot(const std::vector<std::string>& argv) {
  pids_.push_back(SpawnAs(0, 0, argv));
  return pids_.back();
}

HungMount& Arena::NewMount(const std::string& source, int files) {
  const std::string dir = dir_.path + "/mnt" + std::to_string(mounts_.size());
  mounts_.push_back(std::make_unique<HungMount>(Workloads(), source, files, dir));
  REQUIRE(mounts_.back()->mounted());
  return *mounts_.back();
}

void Arena::Loop(std::function<void(const std::atomic<bool>& stop)> body) {
  loops_.emplace_back([this, body = std::move(body)] { body(stop_); });
}

uint64_t SamplesOnPaths(ProfileDb& db, const std::string& part) {
  std::map<int64_t, std::string> paths;
  for (const ImageInfo& i : Must(db.ListImages())) paths[i.id] = i.path;
  uint64_t n = 0;
  for (const ImageTotal& t : Must(db.ImageTotals(kAllEpochs)))
    if (paths[t.image_id].find(part) != std::string::npos) n += t.count;
  return n;
}

Figures RunScenario(const std::vector<Attack>& attacks, std::chrono::milliseconds stop_bound) {
  const Clock::time_point began = Clock::now();
  Figures f;
  Arena arena;
  for (const Attack& a : attacks)
    if (a.before) a.before(arena);

  testing::DaemonFixture d;
  arena.socket = (fs::path(d.db_path()).parent_path() / "lcpid.sock").string();
  REQUIRE(AskStatus(arena.socket).status.count("samples"));  // lcpid came up

  // The victim, and a spinner: both CPUs busy throughout, so the sampling
  // rate is the same before and during (cpu-clock samples an idle CPU less).
  const auto run_for = std::chrono::duration_cast<std::chrono::milliseconds>(
      kBaseline + kAttack + std::chrono::seconds(30));
  const std::string victim_program = Arena::Workloads() + "/shares";
  Own victim(SpawnAs(0, 0, {victim_program, std::to_string(run_for.count() / 1000)}));
  Own spinner(SpawnAs(0, 0, {Arena::Workloads() + "/tiny", std::to_string(run_for.count())}));
  const Rate before = MeasureRate(arena.socket, kBaseline);

  for (const Attack& a : attacks)
    if (a.start) a.start(arena);
  const Rate during = MeasureRate(arena.socket, kAttack);
  victim.End();
  spinner.End();
  const StatusLines last = AskStatus(arena.socket).status;
  f.peak_rss = PeakRss(d.pid());
  auto [stop_seconds, exit_status] = TimedStop(d);

  f.rate_before = before.per_second;
  f.rate_during = during.per_second;
  f.slowest_status = std::max(before.slowest_status, during.slowest_status);
  f.loop_gap_ms = Num(last, "max_loop_gap_ms");
  f.status_ms = Num(last, "max_status_ms");
  f.stop_seconds = stop_seconds;

  std::string names;
  for (const Attack& a : attacks) names += (names.empty() ? "" : "; ") + a.name;
  INFO("attacks: " << names);
  // Sampling went on, unstalled.
  CHECK(before.per_second > 1000);
  CHECK(std::abs(during.per_second - before.per_second) <= 0.10 * before.per_second);
  CHECK(during.lost == 0);
  // Status answered, quickly, as lcpictl saw it and inside lcpid. Under
  // ASan lcpid's code runs 2-3x slower: a fresh-clone run of the sanitizer
  // tree on a loaded host answered in 1.01 s and stopped in 9.2 s of 8, in
  // 3 of 10 runs one day; the bounds there are doubled (a stall is not).
  const double slower = testing::kAddressSanitizer ? 2 : 1;
  CHECK(before.unanswered + during.unanswered == 0);
  CHECK(f.slowest_status < 1.0 * slower);
  REQUIRE(last.count("max_loop_gap_ms"));
  if (f.loop_gap_ms + f.status_ms >= 1000)
    WARN("lcpid's loop went " << f.loop_gap_ms << " ms without serving the control socket; "
                              << "slowest step: " << Text(last, "slowest_loop_step"));
  // SIGTERM ended lcpid, everything flushed or counted.
  CHECK(exit_status == 0);
  CHECK(stop_seconds < slower * std::chrono::duration<double>(stop_bound).count());
  CheckFlushed(d.db_path());

  std::unique_ptr<ProfileDb> db = d.OpenDb();
  REQUIRE(db);
  // The victim's shares, as they landed on disk.
  std::map<std::string, uint64_t> sym = VictimSymbols(*db, victim_program);
  const double total = static_cast<double>(sym["work60"] + sym["work30"] + sym["work10"]);
  INFO("victim: work60 " << sym["work60"] << ", work30 " << sym["work30"] << ", work10 "
                         << sym["work10"]);
  REQUIRE(total > 500);
  const char* kWork[] = {"work60", "work30", "work10"};
  const double kTruth[] = {60, 30, 10};
  for (int i = 0; i < 3; i++) {
    f.shares[i] = 100 * static_cast<double>(sym[kWork[i]]) / total;
    CHECK(std::abs(f.shares[i] - kTruth[i]) < 3);
  }
  // Each attack reached lcpid.
  Aftermath after{last, *db};
  for (const Attack& a : attacks) {
    INFO("attack: " << a.name);
    if (a.reached) a.reached(after);
  }
  f.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  WARN("attacks: " << names << "\n  samples/s before " << f.rate_before << ", during "
                   << f.rate_during << "; slowest status " << f.slowest_status
                   << " s; lcpid's max_loop_gap_ms " << f.loop_gap_ms << " (slowest step "
                   << Text(last, "slowest_loop_step") << "), max_status_ms " << f.status_ms
                   << "; peak RSS " << f.peak_rss / 1024 << " KiB; SIGTERM to exit "
                   << f.stop_seconds << " s; victim " << f.shares[0] << "/" << f.shares[1] << "/"
                   << f.shares[2] << " %; lookups " << Num(last, "lookups") << ", running "
                   << Num(last, "lookups_running") << ", abandoned "
                   << Num(last, "lookups_abandoned") << ", images pending "
                   << Num(last, "images_pending") << "; scenario " << f.seconds << " s");
  return f;
}

}  // namespace lcpi::hostile
