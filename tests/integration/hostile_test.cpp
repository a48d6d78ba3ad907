// hostile_test.cpp - the standing adversary: what a hostile local user
// (nobody) can do to lcpid, end to end as root on this host's perf events.
// Each attack runs alone beside a victim of known shares, then all of them
// at once; hostile_scenario.h says what every scenario must hold (sampling
// unstalled, status under 1 s, SIGTERM with everything flushed or counted,
// the victim's shares within 3 points) and how to add an attack.
//
// The attacks each need a lookup (an open, a hash) that lcpid must not
// wait for:
// - a program from a file system that stops answering (hang_fs, FUSE,
//   stopped as a network mount's server that went away), found by lcpid's
//   /proc scan at start, or mapped after the mount hung: lcpid's open of
//   the file never returns;
// - a program that leaves a FIFO where its file was (fifo_swap);
// - programs with a 2 GB loadable segment and no build-id, at several
//   paths (hard links): identifying each by content hashes 2 GB;
// - control clients that send a byte at a time (root's; nobody's are
//   refused by the socket's peer check);
// - files whose tens of thousands of program headers each cover the whole
//   file, mapped executable: identifying each by content once read the
//   file again for each header.
#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "hostile_scenario.h"
#include "image/crafted_elf.h"
#include "reliability_util.h"

using lcpi::hostile::Aftermath;
using lcpi::hostile::Arena;
using lcpi::hostile::Attack;
using lcpi::hostile::Figures;
using lcpi::hostile::HungMount;
using lcpi::hostile::kNobody;
using lcpi::hostile::kNogroup;
using lcpi::hostile::RunScenario;
using lcpi::hostile::SamplesOnPaths;
using lcpi::testing::Num;

namespace {

// lcpid's peak RSS with every attack at once, in a plain build.
constexpr uint64_t kPeakRssBound = 128ull << 20;

void Sleep(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// lcpid is still opening (or gave up on) a file of a hung mount.
void LookupHangs(const Aftermath& a) {
  CHECK(Num(a.status, "lookups_running") + Num(a.status, "lookups_abandoned") >= 1);
  CHECK(Num(a.status, "images_pending") + Num(a.status, "lookups_abandoned") >= 1);
}

// A program running from a mount that hangs before lcpid starts: lcpid's
// /proc scan finds the file, whose open never returns.
const Attack kHungAtStart{"a program on a mount that hung before lcpid started",
                          [](Arena& a) {
                            HungMount& m = a.NewMount(Arena::Workloads() + "/shares_nobid", 1);
                            a.AsNobody({m.File(0), "60"});
                            Sleep(500);  // running (its pages in memory) before the mount hangs
                            m.Hang();
                          },
                          nullptr, LookupHangs};

// A program that maps a file of a mount executable after the mount hung
// (it read the file while the mount answered).
const Attack kLateMapOnHungMount{
    "a file of a hung mount mapped executable", nullptr,
    [](Arena& a) {
      HungMount& m = a.NewMount(Arena::Workloads() + "/shares_nobid", 1);
      a.AsNobody({Arena::Workloads() + "/late_map", m.File(0), "1000", "30"});
      Sleep(500);
      m.Hang();
    },
    LookupHangs};

// A program that moves its file aside and leaves a FIFO at its path.
const Attack kFifo{"a FIFO where a program's file was", nullptr,
                   [](Arena& a) {
                     a.AsNobody({a.NobodyCopy("fifo_swap", "fifo_swap"), "3000"});
                   },
                   [](const Aftermath& a) { CHECK(SamplesOnPaths(a.db, "/fifo_swap") > 0); }};

// Four paths (hard links) to one program with a 2 GB loadable segment and
// no build-id: each is identified on its own, by content.
const Attack kHugeBinaries{
    "2 GB programs without build-id at four paths", nullptr,
    [](Arena& a) {
      const std::string huge = a.home() + "/huge";
      lcpi::hostile::MakeHuge(Arena::Workloads() + "/shares_nobid", huge + "0", 2ull << 30);
      for (int i = 1; i < 4; i++)
        REQUIRE(link((huge + "0").c_str(), (huge + std::to_string(i)).c_str()) == 0);
      for (int i = 0; i < 4; i++) a.AsNobody({huge + std::to_string(i), "3"});
    },
    [](const Aftermath& a) { CHECK(SamplesOnPaths(a.db, "/huge") > 0); }};

// Control clients, root's and nobody's, each connecting and sending a byte
// every 200 ms for as long as lcpid lets it.
void Dribble(const std::string& path, uid_t uid, const std::atomic<bool>& stop) {
  while (!stop) {
    pid_t pid = fork();
    if (pid == 0) {
      // Forked from a thread while the main thread may be between popen's
      // pipe and its child (AskStatus): a copy of that pipe's write end
      // held here for the second this client lives kept the status
      // reader from its EOF that long.
      close_range(3, ~0u, 0);
      if (uid != 0 && (setgid(kNogroup) < 0 || setuid(uid) < 0)) _exit(1);
      int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::memcpy(addr.sun_path, path.c_str(), path.size());
      if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
        usleep(100 * 1000);  // lcpid has gone: not a busy loop
        _exit(0);
      }
      for (int i = 0; i < 20 && send(fd, "s", 1, MSG_NOSIGNAL) == 1; i++) usleep(200 * 1000);
      _exit(0);
    }
    waitpid(pid, nullptr, 0);
  }
}
const Attack kDribblers{"control clients that send a byte at a time", nullptr,
                        [](Arena& a) {
                          for (uid_t uid : {uid_t{0}, kNobody})
                            a.Loop([socket = a.socket, uid](const std::atomic<bool>& stop) {
                              Dribble(socket, uid, stop);
                            });
                        },
                        nullptr};

// A JIT's perf map with a line covering the top half of the address
// space (start 0, size 2^63): both perf map parsers took it, and the store
// refused every batch holding it, everyone's counts with it (issue 25).
// The spinner runs one pc: every sample is a hit in one entry of a CPU's
// sample table, whose count reaches lcpid only at a flush (the scenario's
// is at SIGTERM) or when it is full (0xffff samples, 13 s of a CPU here),
// and lcpid reads a map for a sample it cannot name or at the process's
// exit. So the spinner exits within the attack (an 8 s one outlived the
// last status, its map never read before it): its exit record has its map
// read, and the counts flushed at SIGTERM are looked up in what that read
// took (had the parser taken the line, they would be filed under it and
// set aside by the store with its name: `samples` != on disk).
const Attack kPoisonedPerfMap{
    "a perf map line 0 8000000000000000", nullptr,
    [](Arena& a) {
      pid_t p = a.AsNobody({Arena::Workloads() + "/perf_map_spin", "3", "0 8000000000000000 x"});
      a.RemoveAtEnd("/tmp/perf-" + std::to_string(p) + ".map");
    },
    [](const Aftermath& a) {
      CHECK(Num(a.status, "jit_map_reads") > 0);
      CHECK(Num(a.status, "jit_map_bad_lines") > 0);     // the line, refused
      CHECK(SamplesOnPaths(a.db, "perf_map_spin") > 0);  // its counts, on its unknown image
    }};

// Executable pages mapped and unmapped at 150,000 addresses, then 12
// sleeping children forked (mapping_flood_test.cpp has it alone): the
// tracker's bounds refuse most of them, counted.
const Attack kMapFlood{"150,000 executable mappings and 12 forks", nullptr,
                       [](Arena& a) {
                         a.AsNobody({Arena::Workloads() + "/map_flood", "150000", "12"});
                       },
                       [](const Aftermath& a) { CHECK(Num(a.status, "mappings_refused") > 0); }};

// Two files of nobody's (copies of a program without build-id) whose 30,000
// program headers each cover the whole file, mapped executable: identified
// by content, each was read once per header (50 GB), and the two kept both
// lookup threads busy while a program without a build-id started after them
// was never named (issue 25). Past 4,096 headers a file is named by what
// fstat says (file-stat:, counted in images_file_stat).
const Attack kWholeFileLoads{
    "two files of 30,000 program headers over the whole file, mapped executable", nullptr,
    [](Arena& a) {
      const std::string elf = lcpi::testing::WithWholeFileLoads(
          lcpi::testing::ReadFile(Arena::Workloads() + "/shares_nobid"), 30000);
      REQUIRE(!elf.empty());
      for (int i = 0; i < 2; i++) {
        const std::string path = a.home() + "/phdrs" + std::to_string(i);
        std::ofstream(path, std::ios::binary) << elf;
        REQUIRE(chown(path.c_str(), kNobody, kNogroup) == 0);
        a.AsNobody({Arena::Workloads() + "/late_map", path, "0", "3"});
      }
    },
    [](const Aftermath& a) { CHECK(Num(a.status, "images_file_stat") >= 2); }};

}  // namespace

TEST_CASE("a program on a mount that hung before lcpid started") { RunScenario({kHungAtStart}); }

TEST_CASE("a file of a hung mount mapped executable") { RunScenario({kLateMapOnHungMount}); }

TEST_CASE("a FIFO where a program's file was") { RunScenario({kFifo}); }

TEST_CASE("2 GB programs without build-id at four paths") { RunScenario({kHugeBinaries}); }

TEST_CASE("control clients that send a byte at a time") { RunScenario({kDribblers}); }

TEST_CASE("a perf map line 0 8000000000000000") { RunScenario({kPoisonedPerfMap}); }

TEST_CASE("files of 30,000 program headers over the whole file") { RunScenario({kWholeFileLoads}); }

TEST_CASE("all attacks at once: the victim's shares, status, SIGTERM and lcpid's peak RSS") {
  // SIGTERM waits 2 s for the lookups under way (kLookupWait), then
  // writes the last batch while abandoned lookups and every attacker still
  // run: 8 s here, where one attack alone has 5.
  Figures f = RunScenario({kHungAtStart, kLateMapOnHungMount, kFifo, kHugeBinaries, kDribblers,
                           kMapFlood, kPoisonedPerfMap, kWholeFileLoads},
                          std::chrono::seconds(8));
  // lcpid's peak RSS under every attack at once (VmHWM; ASan's shadow and
  // quarantine widen the bound in that tree).
  CHECK(f.peak_rss < lcpi::testing::PeakRssBound(kPeakRssBound));
}
