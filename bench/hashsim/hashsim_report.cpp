// hashsim_report.cpp - cost models, the equal-memory comparison, and the
// markdown and JSON output of lcpi-hashsim.
//
// Equal memory: the table needs a power-of-two number of sets, so a 6-way
// table cannot have exactly 4K, 16K or 64K entries. The grid holds 6-way
// tables just below (3/4 of the memory) and just above (3/2) each size; a
// 6-way figure "at" a size is interpolated between the two, linearly in
// log2(entries). The recommendation only considers geometries that exist.
#include "bench/hashsim/hashsim_report.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "bench/hashsim/bench_report.h"

namespace lcpi::sim {
namespace {

constexpr uint32_t kWays[] = {1, 2, 4, 6, 8};
constexpr uint32_t kPolicies[] = {LCPI_POLICY_ROUND_ROBIN, LCPI_POLICY_SWAP_TO_FRONT,
                                  LCPI_POLICY_LRU};
constexpr uint32_t kHashes[] = {LCPI_HASH_MULTIPLY, LCPI_HASH_XOR_FOLD};
constexpr uint32_t kDefaultSize = uint32_t{1} << LCPI_HT_DEFAULT_SET_BITS << 2;  // 16K entries

using Metric = double (*)(const CostModel*, const AddCosts*, const Geometry&, const SimResult&);

struct Ctx {
  const CostModel* model = nullptr;
  const AddCosts* add = nullptr;
};

double MissRate(const CostModel*, const AddCosts*, const Geometry&, const SimResult& r) {
  return 100.0 * r.miss_rate();
}
double Cost(const CostModel* m, const AddCosts* a, const Geometry& g, const SimResult& r) {
  return CostPerSample(*m, *a, g, r);
}

// The metric for (ways, policy, hash) at `size` entries: exact, or
// interpolated between the neighbouring geometries (see the file comment).
double At(const Workload& w, uint32_t ways, uint32_t policy, uint32_t hash, uint32_t size,
          Metric metric, Ctx ctx = {}) {
  const std::pair<Geometry, SimResult>* below = nullptr;
  const std::pair<Geometry, SimResult>* above = nullptr;
  for (const auto& p : w.results) {
    const Geometry& g = p.first;
    if (g.ways != ways || g.policy != policy || g.hash != hash || g.nominal_entries != size)
      continue;
    if (g.entries() <= size)
      below = &p;
    else
      above = &p;
  }
  if (!below) return std::nan("");
  double vb = metric(ctx.model, ctx.add, below->first, below->second);
  if (below->first.entries() == size || !above) return vb;
  double va = metric(ctx.model, ctx.add, above->first, above->second);
  double f = std::log2(double(size) / below->first.entries()) /
             std::log2(double(above->first.entries()) / below->first.entries());
  return vb + f * (va - vb);
}

std::string SizeName(uint64_t entries) {
  if (entries % 1024 == 0) return std::to_string(entries / 1024) + "K";
  return std::to_string(entries);
}

std::string Fixed(double v, int digits) {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

double Reduction(double base, double other) { return 100.0 * (1.0 - other / base); }

}  // namespace

double CostPerSample(const CostModel& m, const AddCosts& add, const Geometry& g,
                     const SimResult& r) {
  if (r.stats.samples == 0) return 0;
  double hit = m.hit, miss = m.miss;
  if (m.measured) {
    auto it = add.find({g.ways, g.policy});
    if (it != add.end()) {
      hit = it->second.ns_hit;
      miss = it->second.ns_miss;
    }
  }
  return (r.stats.hits * hit + r.stats.misses * miss + r.records * m.per_record) /
         double(r.stats.samples);
}

std::string Markdown(const Report& rep) {
  std::ostringstream o;
  o << "# Hash-table simulator (lcpi-hashsim)\n\n"
    << bench::MarkdownMachine(bench::DescribeMachine()) << "\n"
    << "Each trace (recorded with lcpi-trace-record, cpu-clock, whole machine) is replayed\n"
       "through the real `kmod/include/lcpi_hashtable.h`, one table per CPU, buffers of "
    << LCPI_HT_DEFAULT_BUFFER_RECORDS
    << " records\ndrained as soon as sealed, and a final flush. "
       "Sizes are entries per CPU (16 B each). 6-way\nfigures are interpolated to equal "
       "memory between 6-way tables of 3/4 and 3/2 of the size\n(sets must be a power of "
       "two); rows marked 6* are such interpolations.\n\n";

  o << "## Cost models\n\ncost per sample = (hits x hit + misses x miss + records x "
       "per-record) / samples;\nrecords = evictions + saturations + final flush, each "
       "processed once by the daemon.\n\n| model | unit | hit | miss | per record | source "
       "|\n|---|---|---|---|---|---|\n";
  for (const CostModel& m : rep.models)
    o << "| " << m.name << " | " << m.unit << " | " << (m.measured ? "measured" : Fixed(m.hit, 0))
      << " | " << (m.measured ? "measured" : Fixed(m.miss, 0)) << " | " << Fixed(m.per_record, 0)
      << " | " << m.source << " |\n";
  o << "\nlcpi_ht_add on this machine, tight loop (ns; hit: cache-warm working set of a "
       "quarter of a 16K-entry table; miss: new key into a full table, victim written to a "
       "buffer):\n\n| ways | policy | ns/hit | ns/miss |\n|---|---|---|---|\n";
  for (const auto& [key, c] : rep.add_costs)
    o << "| " << key.first << " | " << PolicyName(key.second) << " | " << Fixed(c.ns_hit, 1)
      << " | " << Fixed(c.ns_miss, 1) << " |\n";

  o << "\n## Workloads\n\n| trace | CPUs | period ns | samples | distinct keys | processes | "
       "miss % (default 4-way rr 16K) | warm miss % (2nd half) |\n|---|---|---|---|---|---|---|"
       "---|\n";
  for (const Workload& w : rep.workloads) {
    const SimResult* def = nullptr;
    for (const auto& [g, r] : w.results)
      if (g.ways == 4 && g.policy == LCPI_POLICY_ROUND_ROBIN && g.hash == LCPI_HASH_MULTIPLY &&
          g.entries() == kDefaultSize)
        def = &r;
    o << "| " << w.name << " | " << w.nr_cpus << " | " << w.period_ns << " | " << w.samples << " | "
      << w.distinct_keys << " | " << w.processes << " | "
      << (def ? Fixed(100 * def->miss_rate(), 2) : "-") << " | "
      << (def ? Fixed(100 * def->warm_miss_rate(), 2) : "-") << " |\n";
  }

  o << "\n## Miss rate (%)\n";
  for (const Workload& w : rep.workloads) {
    o << "\n### " << w.name << "\n\n| ways | policy |";
    for (uint32_t h : kHashes)
      for (uint32_t s : rep.sizes) o << " " << SizeName(s) << " " << HashName(h) << " |";
    o << "\n|---|---|";
    for (size_t i = 0; i < rep.sizes.size() * 2; i++) o << "---|";
    o << "\n";
    for (uint32_t ways : kWays)
      for (uint32_t p : kPolicies) {
        if (ways == 1 && p != LCPI_POLICY_ROUND_ROBIN) continue;  // one way: no policy
        o << "| " << ways << (ways == 6 ? "*" : "") << " | " << PolicyName(p) << " |";
        for (uint32_t h : kHashes)
          for (uint32_t s : rep.sizes) o << " " << Fixed(At(w, ways, p, h, s, MissRate), 2) << " |";
        o << "\n";
      }
  }

  o << "\n## Modelled cost per sample at " << SizeName(kDefaultSize) << " entries, multiply hash\n";
  for (const CostModel& m : rep.models) {
    o << "\n### " << m.name << " (" << m.unit << " per sample)\n\n| ways | policy |";
    for (const Workload& w : rep.workloads) o << " " << w.name << " |";
    o << "\n|---|---|";
    for (size_t i = 0; i < rep.workloads.size(); i++) o << "---|";
    o << "\n";
    for (uint32_t ways : kWays)
      for (uint32_t p : kPolicies) {
        if (ways == 1 && p != LCPI_POLICY_ROUND_ROBIN) continue;
        o << "| " << ways << (ways == 6 ? "*" : "") << " | " << PolicyName(p) << " |";
        for (const Workload& w : rep.workloads)
          o << " "
            << Fixed(At(w, ways, p, LCPI_HASH_MULTIPLY, kDefaultSize, Cost, {&m, &rep.add_costs}),
                     1)
            << " |";
        o << "\n";
      }
  }

  o << "\n## DCPI's claim: 6-way swap-to-front vs 4-way round robin, same memory\n\n"
       "Cost reduction in % (positive: 6-way stf is cheaper). Also 4-way stf vs 4-way rr, "
       "to separate the policy from the associativity.\n\n| trace | size | hash | miss % 4 rr "
       "| miss % 6* stf |";
  for (const CostModel& m : rep.models) o << " 6*stf " << m.name << " |";
  o << " 4stf " << rep.models.front().name << " |\n|---|---|---|---|---|";
  for (size_t i = 0; i <= rep.models.size(); i++) o << "---|";
  o << "\n";
  std::map<std::string, std::vector<double>> by_model;
  for (const Workload& w : rep.workloads)
    for (uint32_t s : rep.sizes)
      for (uint32_t h : kHashes) {
        o << "| " << w.name << " | " << SizeName(s) << " | " << HashName(h) << " | "
          << Fixed(At(w, 4, LCPI_POLICY_ROUND_ROBIN, h, s, MissRate), 2) << " | "
          << Fixed(At(w, 6, LCPI_POLICY_SWAP_TO_FRONT, h, s, MissRate), 2) << " |";
        for (const CostModel& m : rep.models) {
          Ctx c{&m, &rep.add_costs};
          double red = Reduction(At(w, 4, LCPI_POLICY_ROUND_ROBIN, h, s, Cost, c),
                                 At(w, 6, LCPI_POLICY_SWAP_TO_FRONT, h, s, Cost, c));
          if (s == kDefaultSize && h == LCPI_HASH_MULTIPLY) by_model[m.name].push_back(red);
          o << " " << Fixed(red, 1) << " |";
        }
        Ctx c0{&rep.models.front(), &rep.add_costs};
        o << " "
          << Fixed(Reduction(At(w, 4, LCPI_POLICY_ROUND_ROBIN, h, s, Cost, c0),
                             At(w, 4, LCPI_POLICY_SWAP_TO_FRONT, h, s, Cost, c0)),
                   1)
          << " |\n";
      }
  o << "\nAt the default size (" << SizeName(kDefaultSize) << ", multiply hash), 6-way stf "
    << "vs 4-way rr, cost reduction over the traces:\n\n";
  for (const auto& [name, v] : by_model) {
    double lo = v.empty() ? 0 : v[0], hi = lo, sum = 0;
    for (double x : v) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
      sum += x;
    }
    o << "- " << name << ": mean " << Fixed(v.empty() ? 0 : sum / v.size(), 1) << " %, range "
      << Fixed(lo, 1) << " .. " << Fixed(hi, 1) << " %\n";
  }

  o << "\n## Cheapest realisable geometry per size (mean cost over the traces)\n\n"
       "| model | size | best | its cost | default 4-way rr multiply | saving % |\n"
       "|---|---|---|---|---|---|\n";
  for (const CostModel& m : rep.models)
    for (uint32_t s : rep.sizes) {
      std::map<std::string, std::pair<double, int>> mean;  // label -> (sum, n)
      std::string def_label;
      for (const Workload& w : rep.workloads)
        for (const auto& [g, r] : w.results) {
          if (g.nominal_entries != s || g.entries() > s) continue;
          std::string label = std::to_string(g.ways) + "-way " + PolicyName(g.policy) + " " +
                              HashName(g.hash) + " (" + SizeName(g.entries()) + ")";
          if (g.ways == 4 && g.policy == LCPI_POLICY_ROUND_ROBIN && g.hash == LCPI_HASH_MULTIPLY)
            def_label = label;
          mean[label].first += CostPerSample(m, rep.add_costs, g, r);
          mean[label].second++;
        }
      std::string best;
      double best_cost = std::numeric_limits<double>::infinity();
      for (const auto& [label, sn] : mean)
        if (sn.first / sn.second < best_cost) {
          best_cost = sn.first / sn.second;
          best = label;
        }
      double def_cost =
          mean.count(def_label) ? mean[def_label].first / mean[def_label].second : std::nan("");
      o << "| " << m.name << " | " << SizeName(s) << " | " << best << " | " << Fixed(best_cost, 1)
        << " | " << Fixed(def_cost, 1) << " | " << Fixed(Reduction(def_cost, best_cost), 1)
        << " |\n";
    }
  return o.str();
}

std::string Json(const Report& rep) {
  std::ostringstream o;
  o << "{\n  \"tool\": \"lcpi-hashsim\",\n  \"machine\": "
    << bench::JsonMachine(bench::DescribeMachine())
    << ",\n  \"buffer_records\": " << LCPI_HT_DEFAULT_BUFFER_RECORDS << ",\n  \"models\": [";
  for (size_t i = 0; i < rep.models.size(); i++) {
    const CostModel& m = rep.models[i];
    o << (i ? ", " : "") << "{\"name\": " << bench::JsonString(m.name)
      << ", \"unit\": " << bench::JsonString(m.unit) << ", \"hit\": " << m.hit
      << ", \"miss\": " << m.miss << ", \"per_record\": " << m.per_record
      << ", \"measured\": " << (m.measured ? "true" : "false")
      << ", \"source\": " << bench::JsonString(m.source) << "}";
  }
  o << "],\n  \"ht_add_ns\": [";
  bool first = true;
  for (const auto& [key, c] : rep.add_costs) {
    o << (first ? "" : ", ") << "{\"ways\": " << key.first << ", \"policy\": \""
      << PolicyName(key.second) << "\", \"hit\": " << c.ns_hit << ", \"miss\": " << c.ns_miss
      << "}";
    first = false;
  }
  o << "],\n  \"workloads\": [";
  for (size_t wi = 0; wi < rep.workloads.size(); wi++) {
    const Workload& w = rep.workloads[wi];
    o << (wi ? "," : "") << "\n    {\"name\": " << bench::JsonString(w.name)
      << ", \"trace\": " << bench::JsonString(w.path) << ", \"cpus\": " << w.nr_cpus
      << ", \"period_ns\": " << w.period_ns << ", \"samples\": " << w.samples
      << ", \"distinct_keys\": " << w.distinct_keys << ", \"processes\": " << w.processes
      << ",\n     \"results\": [";
    for (size_t i = 0; i < w.results.size(); i++) {
      const auto& [g, r] = w.results[i];
      o << (i ? "," : "") << "\n      {\"ways\": " << g.ways << ", \"sets\": " << (1u << g.set_bits)
        << ", \"entries\": " << g.entries() << ", \"size_class\": " << g.nominal_entries
        << ", \"policy\": \"" << PolicyName(g.policy) << "\", \"hash\": \"" << HashName(g.hash)
        << "\", \"samples\": " << r.stats.samples << ", \"hits\": " << r.stats.hits
        << ", \"misses\": " << r.stats.misses << ", \"evictions\": " << r.stats.evictions
        << ", \"saturations\": " << r.stats.saturations << ", \"flushed\": " << r.stats.flushed
        << ", \"records\": " << r.records << ", \"dropped\": " << r.stats.dropped
        << ", \"miss_rate\": " << r.miss_rate() << ", \"warm_miss_rate\": " << r.warm_miss_rate()
        << ", \"cost\": {";
      for (size_t m = 0; m < rep.models.size(); m++)
        o << (m ? ", " : "") << bench::JsonString(rep.models[m].name) << ": "
          << CostPerSample(rep.models[m], rep.add_costs, g, r);
      o << "}}";
    }
    o << "]}";
  }
  o << "\n  ]\n}\n";
  return o.str();
}

}  // namespace lcpi::sim
