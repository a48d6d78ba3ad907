// stack_sample_test.cpp - the kernel's PERF_SAMPLE_CALLCHAIN array as a
// StackSample: context markers dropped, kernel frames first and counted,
// cut at kMaxStackDepth with the end that says so.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <vector>

#include <filesystem>
#include <fstream>

#include "libprofile/collect/stack_rings.h"
#include "libprofile/collect/stack_sample.h"

using namespace lcpi;

TEST_CASE("the perf callchain parses into kernel frames, user frames and an end") {
  // PERF_CONTEXT_KERNEL, two kernel frames, PERF_CONTEXT_USER, two user frames.
  std::vector<uint64_t> ips = {static_cast<uint64_t>(-128),
                               0xffffffff81001010ull,
                               0xffffffff81002005ull,
                               static_cast<uint64_t>(-512),
                               0x401000,
                               0x402000};
  StackSample s;
  ParseCallchain(ips.data(), ips.size(), kMaxStackDepth, &s);
  CHECK(s.pcs ==
        std::vector<uint64_t>{0xffffffff81001010ull, 0xffffffff81002005ull, 0x401000, 0x402000});
  CHECK(s.kernel_frames == 2);
  CHECK(s.end == StackEnd::kWalkEnded);
  ParseCallchain(ips.data(), 3, kMaxStackDepth, &s);
  CHECK(s.end == StackEnd::kKernelOnly);
  std::vector<uint64_t> deep(300, 0x401000);
  ParseCallchain(deep.data(), deep.size(), kMaxStackDepth, &s);
  CHECK(s.pcs.size() == kMaxStackDepth);
  CHECK(s.end == StackEnd::kDepthCap);
  // Where kernel.perf_event_max_stack is lower, the kernel cuts there.
  ParseCallchain(deep.data(), 10, 10, &s);
  CHECK(s.pcs.size() == 10);
  CHECK(s.end == StackEnd::kDepthCap);
  ParseCallchain(deep.data(), 9, 10, &s);
  CHECK(s.end == StackEnd::kWalkEnded);
  CHECK(s.kernel_frames == 0);
}

TEST_CASE("the stack depth asked of perf follows kernel.perf_event_max_stack") {
  auto path =
      std::filesystem::temp_directory_path() / ("lcpi-max-stack-test-" + std::to_string(getpid()));
  std::ofstream(path) << "64\n";
  CHECK(MaxStackDepth(path.string()) == 64);
  std::ofstream(path) << "4096\n";
  CHECK(MaxStackDepth(path.string()) == kMaxStackDepth);
  std::ofstream(path) << "junk\n";
  CHECK(MaxStackDepth(path.string()) == kMaxStackDepth);
  std::filesystem::remove(path);
  CHECK(MaxStackDepth(path.string()) == kMaxStackDepth);
}
