// debuginfo_test.cpp - separate debug files through .gnu_debuglink: a
// stripped binary whose link names a debug file beside it (or in .debug/)
// gets its functions and its source lines back, and a debug file of another
// build is refused (build-id, or the link's CRC32 without one). The network
// is never used here: debuginfod is off unless a tool turns it on.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "libprofile/image/debuginfo.h"
#include "libprofile/image/elf_symbols.h"
#include "libprofile/image/image_id.h"
#include "test_files.h"

namespace {

using lcpi::ElfImage;
using lcpi::testing::Run;
using lcpi::testing::TempDir;
using lcpi::testing::WriteFile;

// Line numbers matter: the body of scale is line 4.
constexpr const char* kProgram = R"(#include <stdio.h>

__attribute__((noinline)) static int scale(int x) {
  return x * 7 + 3;
}

int main(int argc, char** argv) {
  (void)argv;
  printf("%d\n", scale(argc));
  return 0;
}
)";
constexpr int kScaleBodyLine = 4;

// Builds dir/name from kProgram with -g, and returns its path.
std::string Build(const TempDir& dir, const std::string& name, const std::string& flags) {
  const std::string src = dir / "prog.c";
  WriteFile(src, kProgram);
  const std::string bin = dir / name;
  Run("cc -O1 -g " + flags + " -o " + bin + " " + src);
  return bin;
}

std::unique_ptr<ElfImage> OpenOk(const std::string& path) {
  // No debug root: only the debuglink can find anything.
  auto image = ElfImage::Open(path, "");
  INFO(path << ": " << (image ? "" : image.error().ToString()));
  REQUIRE(image);
  return std::move(*image);
}

// The stripped file names scale, and scale's body is on kScaleBodyLine of prog.c.
void CheckSymbolsAndLines(const ElfImage& image, const ElfImage& reference,
                          const std::string& table) {
  CHECK(image.symbol_table() == table);
  auto scale = reference.Symbol("scale");
  REQUIRE(scale);
  auto hit = image.Lookup(scale->addr + 1);
  REQUIRE(hit);
  CHECK(hit->symbol->name == "scale");
  auto line = image.SourceLine(scale->addr);
  REQUIRE(line);
  CHECK(line->line == kScaleBodyLine);
  CHECK(line->file.size() >= 6);
  CHECK(line->file.substr(line->file.size() - 6) == "prog.c");
}

}  // namespace

TEST_CASE("a stripped binary gets symbols and source lines from its .gnu_debuglink file") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id");
  auto reference = OpenOk(full);
  REQUIRE(reference->symbol_table() == "symtab");
  const std::string bin = dir / "prog";

  SECTION("the debug file beside the binary") {
    Run("objcopy --only-keep-debug " + full + " " + (dir / "prog.debug"));
    Run("objcopy --strip-all --add-gnu-debuglink=" + (dir / "prog.debug") + " " + full + " " + bin);
    auto image = OpenOk(bin);
    CheckSymbolsAndLines(*image, *reference, "debuglink");
    CHECK(image->debug_file() == dir / "prog.debug");
  }
  SECTION("the debug file in .debug/ beside the binary") {
    Run("mkdir " + (dir / ".debug"));
    Run("objcopy --only-keep-debug " + full + " " + (dir / ".debug/prog.debug"));
    Run("cd " + dir.path().string() + " && cp .debug/prog.debug . && objcopy --strip-all " +
        "--add-gnu-debuglink=prog.debug full prog && rm prog.debug");
    CheckSymbolsAndLines(*OpenOk(bin), *reference, "debuglink");
  }
  SECTION("a debug file of another build is refused (build-id differs)") {
    const std::string other = Build(dir, "other", "-Wl,--build-id -DUNUSED=1 -O2");
    Run("objcopy --only-keep-debug " + full + " " + (dir / "prog.debug"));
    Run("objcopy --strip-all --add-gnu-debuglink=" + (dir / "prog.debug") + " " + full + " " + bin);
    // Same name, other contents: the other build's debug file.
    Run("objcopy --only-keep-debug " + other + " " + (dir / "prog.debug"));
    auto image = OpenOk(bin);
    CHECK(image->symbol_table() == "none");
    CHECK_FALSE(image->SourceLine(reference->Symbol("scale")->addr));
  }
}

TEST_CASE("without a build-id, the debuglink's CRC32 decides") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id=none");
  auto reference = OpenOk(full);
  REQUIRE(reference->build_id().empty());
  const std::string bin = dir / "prog", debug = dir / "prog.debug";
  Run("objcopy --only-keep-debug " + full + " " + debug);
  Run("objcopy --strip-all --add-gnu-debuglink=" + debug + " " + full + " " + bin);
  SECTION("the right file") { CheckSymbolsAndLines(*OpenOk(bin), *reference, "debuglink"); }
  SECTION("a changed file") {
    Run("printf x >> " + debug);
    CHECK(OpenOk(bin)->symbol_table() == "none");
  }
}

TEST_CASE("debuginfod stays off unless a tool turns it on") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id");
  const std::string bin = dir / "prog";
  Run("strip --strip-all -o " + bin + " " + full);
  // A closed port: a query would fail at once and leave a warning.
  setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
  CHECK_FALSE(lcpi::DebuginfodActive());
  CHECK(OpenOk(bin)->symbol_table() == "none");
  CHECK(lcpi::DebuginfoWarnings().empty());
  unsetenv("DEBUGINFOD_URLS");
}

TEST_CASE("a debuglink candidate too large to check its CRC32 is not read") {
  TempDir dir;
  const std::string full = Build(dir, "full", "-Wl,--build-id=none");
  const std::string bin = dir / "prog", debug = dir / "prog.debug";
  Run("objcopy --only-keep-debug " + full + " " + debug);
  Run("objcopy --strip-all --add-gnu-debuglink=" + debug + " " + full + " " + bin);
  // A sparse 1 TiB file in its place: reading it whole for the CRC takes
  // hours (the issue's 1 PiB: about 15 days).
  Run("truncate -s 1T " + debug);
  int status = lcpi::testing::ExitStatusWithin(20, [&] {
    auto image = ElfImage::Open(bin, "");
    if (!image || (*image)->symbol_table() != "none") return 3;
    for (const std::string& w : lcpi::DebuginfoWarnings()) {
      if (w.find(debug) != std::string::npos && w.find("over the bound") != std::string::npos) {
        return 0;
      }
    }
    return 4;  // no warning
  });
  CHECK(status == 0);  // 142: still reading
}

TEST_CASE("debuginfod: a build-id libdebuginfod refuses does not disable the server") {
  // An 80-byte build-id (any user can link one) is refused by libdebuginfod
  // with EINVAL before any connection; that says nothing about the server.
  const std::string long_id(160, 'a');
  setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1);
  lcpi::SetDebuginfodEnabled(true);
  CHECK(lcpi::DebuginfodActive());
  CHECK(lcpi::FetchDebugFile(long_id, "/tmp/long-build-id") == nullptr);
  CHECK(lcpi::FetchDebugFile("not-hex!", "/tmp/not-hex") == nullptr);
  CHECK(lcpi::DebuginfodActive());
  for (const std::string& w : lcpi::DebuginfoWarnings()) {
    INFO(w);
    CHECK(w.find("no more queries") == std::string::npos);
  }
  lcpi::SetDebuginfodEnabled(false);
  unsetenv("DEBUGINFOD_URLS");
}

TEST_CASE("debuginfod: the tools' total time and size bounds are set unless the user set them") {
  unsetenv("DEBUGINFOD_MAXTIME");
  setenv("DEBUGINFOD_MAXSIZE", "12345", 1);
  lcpi::SetDebuginfodTimeoutDefault();
  const char* maxtime = std::getenv("DEBUGINFOD_MAXTIME");
  REQUIRE(maxtime != nullptr);
  CHECK(std::string(maxtime) == lcpi::kDefaultDebuginfodMaxTime);
  CHECK(std::string(maxtime) == "30");  // what --help and docs/tools.md say
  CHECK(std::string(std::getenv("DEBUGINFOD_MAXSIZE")) == "12345");  // the user's
  unsetenv("DEBUGINFOD_MAXSIZE");
  lcpi::SetDebuginfodTimeoutDefault();
  CHECK(std::string(std::getenv("DEBUGINFOD_MAXSIZE")) == lcpi::kDefaultDebuginfodMaxSize);
  unsetenv("DEBUGINFOD_MAXTIME");
  unsetenv("DEBUGINFOD_MAXSIZE");
}

namespace {

// An image in its own directory, owned by `uid`, whose build-id is chosen
// (its author's choice) and whose debuglink names x.debug beside it, made
// from its own build; returns the image's path.
std::string ImageWithDebuglink(const TempDir& dir, const std::string& build_id, uid_t uid) {
  const std::string att = dir / "att";
  Run("mkdir -p " + att);
  const std::string full = Build(dir, "att-full", "-Wl,--build-id=0x" + build_id);
  Run("objcopy --only-keep-debug " + full + " " + att + "/x.debug");
  Run("objcopy --strip-all --add-gnu-debuglink=" + att + "/x.debug " + full + " " + att + "/prog");
  REQUIRE(chown((att + "/prog").c_str(), uid, uid) == 0);
  return att + "/prog";
}

}  // namespace

TEST_CASE("a planted debuglink never reads a file only root may read") {
  TempDir dir;
  // Root's secret: an ELF with symbols, 0600 in a 0700 directory.
  // (-O2: not byte for byte the user's -O1 build below.)
  const std::string secret = Build(dir, "secret-full", "-Wl,--build-id -O2");
  const std::string secretdir = dir / "secretdir";
  Run("mkdir -m 0700 " + secretdir);
  const std::string secret_debug = secretdir + "/secret.debug";
  Run("objcopy --only-keep-debug " + secret + " " + secret_debug + " && chmod 0600 " +
      secret_debug);
  const std::string id = OpenOk(secret)->build_id();
  REQUIRE_FALSE(id.empty());
  // A user's image claims the secret's build-id.
  const uid_t user = 65534;
  const std::string prog = ImageWithDebuglink(dir, id, user);
  const std::string link = dir / "att/x.debug";
  SECTION("the right debug file, the user's own, is used") {
    REQUIRE(chown(link.c_str(), user, user) == 0);
    CHECK(OpenOk(prog)->symbol_table() == "debuglink");
  }
  SECTION("a symbolic link to the secret is not followed") {
    Run("rm " + link + " && ln -s " + secret_debug + " " + link);
    CHECK(OpenOk(prog)->symbol_table() == "none");
  }
  SECTION("a symbolic link in the directory part is not followed") {
    // att/.debug -> secretdir: the second candidate, att/.debug/x.debug.
    Run("rm " + link + " && cp " + secret_debug + " " + secretdir + "/x.debug && ln -s " +
        secretdir + " " + (dir / "att/.debug"));
    CHECK(OpenOk(prog)->symbol_table() == "none");
  }
  SECTION("a copy owned by root with the claimed build-id: its CRC32 differs") {
    Run("cp " + secret_debug + " " + link);  // root's, 0600, the secret's build-id
    CHECK(OpenOk(prog)->symbol_table() == "none");
  }
  SECTION("the right file owned by a third user is not used") {
    REQUIRE(chown(link.c_str(), user - 1, user - 1) == 0);
    CHECK(OpenOk(prog)->symbol_table() == "none");
  }
}

namespace {

// Whether anyone opens the FIFO at `path` for reading while the watcher
// runs: a writer's non-blocking open succeeds only while a reader waits in
// open(2), and then releases it (the reader reads an empty file).
class FifoWatcher {
 public:
  explicit FifoWatcher(std::string path) : path_(std::move(path)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        int fd = open(path_.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
          opened_ = true;
          close(fd);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~FifoWatcher() {
    stop_ = true;
    thread_.join();
  }
  bool opened() const { return opened_; }

 private:
  std::string path_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> opened_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("a dwz supplementary file is found by lcpi's rules, never where the image says") {
  // dwz moves strings two programs share (here the compilation directory)
  // into a supplementary file that .gnu_debugaltlink names by path and
  // build-id; libdw alone would open that path, whatever it is.
  TempDir dir;
  Run("chmod 0755 " + dir.path().string());  // others may reach what is in it
  // Compiled in dir from a relative name: the source path's directory is
  // the compilation directory, a string dwz moves (both programs share it).
  WriteFile(dir / "prog.c", kProgram);
  const std::string prog = dir / "prog", common = dir / "common.debug";
  auto build = [&](const std::string& named) {
    Run("cd " + dir.path().string() + " && cc -O1 -g -gdwarf-4 -o prog prog.c && " +
        "cc -O2 -g -gdwarf-4 -o other prog.c && dwz -m " + common + " -M " + named + " prog other");
  };
  build(common);
  const std::string src = dir / "prog.c";
  auto scale_line = [&](const ElfImage& image) {
    auto line = image.SourceLine(image.Symbol("scale")->addr);
    REQUIRE(line);
    CHECK(line->line == kScaleBodyLine);
    return line->file;
  };
  SECTION("a file everyone may read, at the path named: the directory comes from it") {
    CHECK(scale_line(*OpenOk(prog)) == src);
  }
  SECTION("a relative name: beside the image") {
    build("common.debug");
    CHECK(scale_line(*OpenOk(prog)) == src);
  }
  SECTION("elsewhere, by its build-id under the debug root (Debian's -dbgsym packages)") {
    auto id = lcpi::IdentifyElfFile(common);
    REQUIRE(id);
    REQUIRE(id->build_id.size() > 2);
    const std::string root = dir / "debug";
    const std::string by_id = root + "/.build-id/" + id->build_id.substr(0, 2);
    Run("mkdir -p " + by_id + " && mv " + common + " " + by_id + "/" + id->build_id.substr(2) +
        ".debug");
    auto image = ElfImage::Open(prog, root);
    REQUIRE(image);
    CHECK(scale_line(**image) == src);
    CHECK(scale_line(*OpenOk(prog)) == "prog.c");  // no debug root: not found
  }
  SECTION("a FIFO at that path is never opened") {
    Run("rm " + common + " && mkfifo -m 0644 " + common);
    FifoWatcher watcher(common);
    CHECK(scale_line(*OpenOk(prog)) == "prog.c");  // the line, without the directory
    CHECK_FALSE(watcher.opened());
  }
  SECTION("a user's image naming a file only root may read, with its build-id: not read") {
    REQUIRE(chown(prog.c_str(), 65534, 65534) == 0);
    Run("chmod 0600 " + common);
    CHECK(scale_line(*OpenOk(prog)) == "prog.c");
  }
}
