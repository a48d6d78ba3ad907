// sled.cpp - writing the instruction sled and forking its pinned children.
#include "bench/daemon/sled.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lcpi::bench {
namespace {

// add $1, %rax: four bytes, one cycle, each a distinct pc to sample.
constexpr uint8_t kAdd[] = {0x48, 0x83, 0xc0, 0x01};
constexpr size_t kJumpBytes = 5;  // jmp rel32

}  // namespace

Expected<Sled> Sled::Start(uint32_t pcs, const std::vector<int>& cpus) {
#if !defined(__x86_64__)
  (void)pcs;
  (void)cpus;
  return Error(Errc::kUnsupported, "the instruction sled is x86-64 code");
#else
  if (pcs == 0) return Error(Errc::kInvalidArgument, "a sled needs at least one instruction");
  size_t size = (pcs - 1) * sizeof(kAdd) + kJumpBytes;
  void* code = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (code == MAP_FAILED) return ErrnoError("mmap of the sled", errno);
  Sled sled(code, size);
  auto* p = static_cast<uint8_t*>(code);
  for (uint32_t i = 0; i + 1 < pcs; i++, p += sizeof(kAdd)) std::memcpy(p, kAdd, sizeof(kAdd));
  // Back to the first instruction: rel32 counts from the jump's end.
  int32_t rel = -static_cast<int32_t>((p + kJumpBytes) - static_cast<uint8_t*>(code));
  p[0] = 0xe9;
  std::memcpy(p + 1, &rel, sizeof(rel));
  if (mprotect(code, size, PROT_READ | PROT_EXEC) != 0) return ErrnoError("mprotect", errno);
  for (int cpu : cpus) {
    pid_t pid = fork();
    if (pid < 0) return ErrnoError("fork", errno);
    if (pid == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      sched_setaffinity(0, sizeof(set), &set);
      reinterpret_cast<void (*)()>(code)();  // never returns
      _exit(1);
    }
    sled.children_.push_back(pid);
  }
  return sled;
#endif
}

Sled::Sled(Sled&& other) noexcept
    : code_(other.code_), size_(other.size_), children_(std::move(other.children_)) {
  other.code_ = nullptr;
  other.children_.clear();
}

Sled::~Sled() {
  for (pid_t pid : children_) kill(pid, SIGKILL);
  for (pid_t pid : children_) waitpid(pid, nullptr, 0);
  if (code_) munmap(code_, size_);
}

}  // namespace lcpi::bench
