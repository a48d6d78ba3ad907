// stack_sample_test.cpp - the kernel's PERF_SAMPLE_CALLCHAIN array as a
// StackSample: context markers dropped, kernel frames first and counted,
// cut at kMaxStackDepth with the end that says so.
#include <catch2/catch.hpp>

#include <vector>

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
  ParseCallchain(ips.data(), ips.size(), &s);
  CHECK(s.pcs ==
        std::vector<uint64_t>{0xffffffff81001010ull, 0xffffffff81002005ull, 0x401000, 0x402000});
  CHECK(s.kernel_frames == 2);
  CHECK(s.end == StackEnd::kWalkEnded);
  ParseCallchain(ips.data(), 3, &s);
  CHECK(s.end == StackEnd::kKernelOnly);
  std::vector<uint64_t> deep(300, 0x401000);
  ParseCallchain(deep.data(), deep.size(), &s);
  CHECK(s.pcs.size() == kMaxStackDepth);
  CHECK(s.end == StackEnd::kDepthCap);
  CHECK(s.kernel_frames == 0);
}
