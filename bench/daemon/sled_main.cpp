// sled_main.cpp - lcpi-bench-sled: the perf bench's workload on its own
// (sled.h: one pinned child per online CPU spinning over N distinct pcs),
// for measuring and profiling a real lcpid at a chosen miss rate
// (bench/daemon/lcpid_ab.py).
#include <unistd.h>

#include <cstdio>

#include <CLI/CLI.hpp>

#include "bench/daemon/sled.h"
#include "libprofile/collect/perf_ring.h"

int main(int argc, char** argv) {
  CLI::App app{"Spins one pinned child per online CPU over N distinct pcs for a while."};
  uint32_t pcs = 1;
  double seconds = 10;
  app.add_option("--pcs", pcs, "distinct pcs in the sled")
      ->check(CLI::Range(1u, 4000000u))
      ->capture_default_str();
  app.add_option("--seconds", seconds, "how long")
      ->check(CLI::Range(0.1, 86400.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  lcpi::Expected<lcpi::bench::Sled> sled = lcpi::bench::Sled::Start(pcs, lcpi::OnlineCpus());
  if (!sled) {
    std::fprintf(stderr, "error: %s\n", sled.error().ToString().c_str());
    return 1;
  }
  usleep(static_cast<useconds_t>(seconds * 1e6));
  return 0;  // the sled's destructor ends the children
}
