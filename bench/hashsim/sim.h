// sim.h - replaying a sample trace through the real per-CPU hash table
// (lcpi_hashtable.h, one table per CPU of the trace, buffers drained as soon
// as they are sealed, as an attentive daemon would) and timing lcpi_ht_add
// itself on this machine, per hit and per miss.
#ifndef LCPI_BENCH_HASHSIM_SIM_H
#define LCPI_BENCH_HASHSIM_SIM_H

#include <cstdint>
#include <string>

#include "bench/hashsim/trace_format.h"
#include "lcpi_hashtable.h"

namespace lcpi::sim {

// One point of the grid.
struct Geometry {
  uint32_t ways = 4;
  uint32_t set_bits = 12;
  uint32_t policy = LCPI_POLICY_ROUND_ROBIN;
  uint32_t hash = LCPI_HASH_MULTIPLY;
  uint32_t nominal_entries = 16384;  // the memory class this point belongs to
  uint64_t entries() const { return (uint64_t{1} << set_bits) * ways; }
  lcpi_ht_config Config() const;
};

const char* PolicyName(uint32_t policy);  // "rr", "stf", "lru"
const char* HashName(uint32_t hash);      // "multiply", "xor-fold"

struct SimResult {
  lcpi_table_stats stats{};   // summed over the trace's CPUs, after the final flush
  uint64_t records = 0;       // records the daemon receives (evictions, saturations, flush)
  uint64_t warm_samples = 0;  // samples of the second half of the trace
  uint64_t warm_misses = 0;   // misses among them (cold-start misses excluded)
  double miss_rate() const { return stats.samples ? double(stats.misses) / stats.samples : 0; }
  double warm_miss_rate() const { return warm_samples ? double(warm_misses) / warm_samples : 0; }
};

// Replays every sample of trace through per-CPU tables of geometry g.
SimResult Replay(const trace::Trace& trace, const Geometry& g);

// ns per lcpi_ht_add in a tight loop on this machine: all hits (a working
// set a quarter of the table, cache-warm) and all misses (a stream of new
// keys into a full table, each evicting a victim into a buffer).
struct AddCost {
  double ns_hit = 0;
  double ns_miss = 0;
};
AddCost TimeAdd(const Geometry& g);

}  // namespace lcpi::sim

#endif  // LCPI_BENCH_HASHSIM_SIM_H
