// hashtable_test.cpp - every path of the shared per-CPU hash table
// (kmod/include/lcpi_hashtable.h): hits, misses, each replacement policy,
// saturating counts, buffer sealing and swapping, drops when both buffers
// are full, flushing, and the accounting invariant over random workloads.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "lcpi_hashtable.h"

namespace {

// A table with its memory, and a reader that drains sealed buffers.
struct Table {
  std::vector<uint64_t> mem;
  lcpi_ht ht{};
  std::vector<lcpi_buffer_header> headers;
  std::vector<lcpi_record> out;
  int wakes = 0;
  uint64_t now = 1000;

  explicit Table(lcpi_ht_config cfg) : mem((lcpi_ht_mem_size(&cfg) + 7) / 8) {
    REQUIRE(lcpi_ht_init(&ht, &cfg, mem.data(), 3) == 0);
  }
  lcpi_ht_result Add(uint32_t pid, uint64_t pc, uint32_t event = 0) {
    int wake = 0;
    lcpi_ht_result r = lcpi_ht_add(&ht, pid, pc, event, 0, ++now, &wake);
    wakes += wake;
    return r;
  }
  // Copies out every sealed buffer, oldest first; returns how many.
  int Drain() {
    int n = 0;
    for (int idx; (idx = lcpi_ht_ready(&ht)) >= 0; n++) {
      const lcpi_ht_buffer& b = ht.buf[idx];
      headers.push_back(b.hdr);
      out.insert(out.end(), b.records, b.records + b.hdr.nr_records);
      lcpi_ht_release(&ht, idx);
    }
    return n;
  }
  bool FlushAll() {
    for (int tries = 0; tries < 1000; tries++) {
      int wake = 0;
      int r = lcpi_ht_flush(&ht, ++now, &wake);
      Drain();
      if (r == 0) return true;
    }
    return false;
  }
  uint64_t OutCount() const {
    uint64_t sum = 0;
    for (const lcpi_record& r : out) sum += r.count;
    return sum;
  }
  // Entries of one set, way 0 first.
  std::vector<lcpi_record> Set(uint32_t set) const {
    return {ht.entries + set * ht.cfg.ways, ht.entries + (set + 1) * ht.cfg.ways};
  }
};

lcpi_ht_config Config(uint32_t ways, uint32_t set_bits, uint32_t policy, uint32_t buffer_records,
                      uint32_t hash = LCPI_HASH_MULTIPLY) {
  return lcpi_ht_config{ways, set_bits, policy, hash, buffer_records};
}

// pcs that all fall into the same set as pc 0x1000 for pid 1.
std::vector<uint64_t> SameSetPcs(const Table& t, size_t n) {
  std::vector<uint64_t> pcs;
  uint32_t want = lcpi_ht_hash(&t.ht, 1, 0x1000, 0);
  for (uint64_t pc = 0x1000; pcs.size() < n; pc += 4)
    if (lcpi_ht_hash(&t.ht, 1, pc, 0) == want) pcs.push_back(pc);
  return pcs;
}

}  // namespace

TEST_CASE("config validation rejects unusable geometries") {
  std::vector<uint64_t> mem(1 << 16);
  lcpi_ht ht{};
  lcpi_ht_config bad[] = {
      Config(0, 4, LCPI_POLICY_ROUND_ROBIN, 16),
      Config(LCPI_HT_MAX_WAYS + 1, 4, LCPI_POLICY_ROUND_ROBIN, 16),
      Config(4, 0, LCPI_POLICY_ROUND_ROBIN, 16),
      Config(4, 25, LCPI_POLICY_ROUND_ROBIN, 16),
      Config(4, 4, LCPI_POLICY_MAX, 16),
      Config(4, 4, LCPI_POLICY_LRU, 0),
      Config(4, 4, LCPI_POLICY_LRU, 16, LCPI_HASH_MAX),
  };
  for (const lcpi_ht_config& cfg : bad) CHECK(lcpi_ht_init(&ht, &cfg, mem.data(), 0) == -1);
}

TEST_CASE("the default geometry fits in 512 KB per CPU") {
  lcpi_ht_config cfg = Config(LCPI_HT_DEFAULT_WAYS, LCPI_HT_DEFAULT_SET_BITS,
                              LCPI_POLICY_ROUND_ROBIN, LCPI_HT_DEFAULT_BUFFER_RECORDS);
  uint64_t total = lcpi_ht_mem_size(&cfg) + 2 * sizeof(lcpi_buffer_header);
  CHECK(total <= 512 * 1024);
  CHECK(lcpi_ht_mem_size(&cfg) == 4096 * 4 * 16 + 2 * 8000 * 16 + 4096);
}

TEST_CASE("both hash functions stay inside the table and spread keys") {
  for (uint32_t hash : {LCPI_HASH_MULTIPLY, LCPI_HASH_XOR_FOLD}) {
    Table t(Config(4, 8, LCPI_POLICY_ROUND_ROBIN, 64, hash));
    std::map<uint32_t, int> used;
    for (uint64_t pc = 0x400000; pc < 0x400000 + 4 * 4096; pc += 4) {
      uint32_t set = lcpi_ht_hash(&t.ht, 42, pc, 0);
      REQUIRE(set < 256);
      used[set]++;
    }
    CHECK(used.size() > 200);  // 4096 consecutive pcs touch most of 256 sets
  }
}

TEST_CASE("a repeated key hits, and pid, pc and event each make a new key") {
  Table t(Config(4, 6, LCPI_POLICY_ROUND_ROBIN, 64));
  CHECK(t.Add(1, 0x1000) == LCPI_HT_MISS);
  CHECK(t.Add(1, 0x1000) == LCPI_HT_HIT);
  CHECK(t.Add(2, 0x1000) == LCPI_HT_MISS);
  CHECK(t.Add(1, 0x1004) == LCPI_HT_MISS);
  CHECK(t.Add(1, 0x1000, 1) == LCPI_HT_MISS);
  CHECK(t.Add(1, 0x1000, 1) == LCPI_HT_HIT);
  CHECK(t.ht.stats.samples == 6);
  CHECK(t.ht.stats.hits == 2);
  CHECK(t.ht.stats.misses == 4);
  CHECK(t.ht.stats.evictions == 0);
  CHECK(lcpi_ht_pending(&t.ht) == 6);
}

TEST_CASE("round robin rotates the victim through the ways of a set") {
  Table t(Config(4, 4, LCPI_POLICY_ROUND_ROBIN, 64));
  std::vector<uint64_t> pcs = SameSetPcs(t, 7);
  uint32_t set = lcpi_ht_hash(&t.ht, 1, pcs[0], 0);
  for (int i = 0; i < 4; i++) t.Add(1, pcs[i]);
  t.Add(1, pcs[1]);  // a hit does not move anything
  CHECK(t.Set(set)[1].pc == pcs[1]);
  CHECK(t.Set(set)[1].count == 2);
  for (int i = 4; i < 7; i++) t.Add(1, pcs[i]);
  CHECK(t.ht.stats.evictions == 3);
  std::vector<lcpi_record> s = t.Set(set);
  CHECK(s[0].pc == pcs[4]);  // ways 0, 1, 2 were the victims, in order
  CHECK(s[1].pc == pcs[5]);
  CHECK(s[2].pc == pcs[6]);
  CHECK(s[3].pc == pcs[3]);
  REQUIRE(t.FlushAll());
  CHECK(t.OutCount() == 8);
}

TEST_CASE("swap-to-front swaps a hit with way 0 and inserts new keys at the front") {
  Table t(Config(4, 4, LCPI_POLICY_SWAP_TO_FRONT, 64));
  std::vector<uint64_t> pcs = SameSetPcs(t, 5);
  uint32_t set = lcpi_ht_hash(&t.ht, 1, pcs[0], 0);
  for (int i = 0; i < 4; i++) t.Add(1, pcs[i]);
  // each insert went to way 0, pushing the old front into the free slot
  std::vector<lcpi_record> s = t.Set(set);
  CHECK(s[0].pc == pcs[3]);
  t.Add(1, pcs[2]);  // pcs[2] sits in way 3: a hit swaps it with way 0
  s = t.Set(set);
  CHECK(s[0].pc == pcs[2]);
  CHECK(s[0].count == 2);
  CHECK(s[3].pc == pcs[3]);
  t.Add(1, pcs[4]);  // a miss evicts the last way (pcs[3]) and takes the front
  s = t.Set(set);
  CHECK(s[0].pc == pcs[4]);
  CHECK(s[3].pc == pcs[2]);
  CHECK(t.ht.stats.evictions == 1);
  REQUIRE(t.FlushAll());
  CHECK(t.out.front().pc == pcs[3]);  // the first record out was the victim
}

TEST_CASE("LRU keeps the set ordered by recency") {
  Table t(Config(4, 4, LCPI_POLICY_LRU, 64));
  std::vector<uint64_t> pcs = SameSetPcs(t, 5);
  uint32_t set = lcpi_ht_hash(&t.ht, 1, pcs[0], 0);
  for (int i = 0; i < 4; i++) t.Add(1, pcs[i]);
  t.Add(1, pcs[0]);  // least recent becomes most recent
  std::vector<lcpi_record> s = t.Set(set);
  CHECK(s[0].pc == pcs[0]);
  CHECK(s[1].pc == pcs[3]);
  CHECK(s[2].pc == pcs[2]);
  CHECK(s[3].pc == pcs[1]);
  t.Add(1, pcs[4]);  // evicts pcs[1], the least recently used
  REQUIRE(t.FlushAll());
  CHECK(t.out.front().pc == pcs[1]);
  CHECK(t.ht.stats.evictions == 1);
}

TEST_CASE("a count that would overflow its field writes the entry out") {
  Table t(Config(2, 2, LCPI_POLICY_ROUND_ROBIN, 8));
  for (uint32_t i = 0; i < LCPI_RECORD_COUNT_MAX; i++) t.Add(7, 0x4000);
  CHECK(t.ht.stats.saturations == 0);
  t.Add(7, 0x4000);
  CHECK(t.ht.stats.saturations == 1);
  CHECK(lcpi_ht_pending(&t.ht) == 1);
  REQUIRE(t.FlushAll());
  REQUIRE(t.out.size() == 2);
  CHECK(t.out[0].count == LCPI_RECORD_COUNT_MAX);
  CHECK(t.out[1].count == 1);
  CHECK(t.OutCount() == LCPI_RECORD_COUNT_MAX + 1ull);
}

TEST_CASE("a full buffer is sealed with its header and the other becomes active") {
  Table t(Config(1, 1, LCPI_POLICY_ROUND_ROBIN, 4));
  // with one way and two sets, every new key evicts once the set is used
  std::vector<uint64_t> pcs = SameSetPcs(t, 6);
  for (uint64_t pc : pcs) t.Add(1, pc);  // 5 evictions: fills buffer 0 (4), 1 in buffer 1
  CHECK(t.ht.stats.evictions == 5);
  CHECK(t.ht.stats.swaps == 1);
  CHECK(t.wakes == 1);
  REQUIRE(t.Drain() == 1);
  const lcpi_buffer_header& h = t.headers[0];
  CHECK(h.magic == LCPI_BUFFER_MAGIC);
  CHECK(h.version == LCPI_ABI_VERSION);
  CHECK(h.header_size == sizeof(lcpi_buffer_header));
  CHECK(h.cpu == 3);
  CHECK(h.seq == 0);
  CHECK(h.nr_records == 4);
  CHECK(h.t_first < h.t_last);
  CHECK(h.dropped == 0);
  for (int i = 0; i < 4; i++) CHECK(t.out[i].pc == pcs[i]);
}

TEST_CASE("when both buffers wait for the reader, samples are dropped and reported") {
  Table t(Config(1, 1, LCPI_POLICY_ROUND_ROBIN, 2));
  std::vector<uint64_t> pcs = SameSetPcs(t, 20);
  // 1 insert + 4 evictions fill both buffers of 2 records each
  for (int i = 0; i < 5; i++) CHECK(t.Add(1, pcs[i]) == LCPI_HT_MISS);
  CHECK(t.ht.stats.swaps == 2);
  CHECK(t.Add(1, pcs[5]) == LCPI_HT_DROPPED);
  CHECK(t.Add(1, pcs[6]) == LCPI_HT_DROPPED);
  CHECK(t.Add(1, pcs[4]) == LCPI_HT_HIT);  // hits still count: no buffer needed
  CHECK(t.ht.stats.dropped == 2);
  REQUIRE(t.Drain() == 2);
  CHECK(t.headers[0].seq == 0);
  CHECK(t.headers[1].seq == 1);
  CHECK(t.headers[0].dropped == 0);
  CHECK(t.Add(1, pcs[7]) == LCPI_HT_MISS);  // room again
  REQUIRE(t.FlushAll());
  // the drops are reported in the stream, in the first buffer sealed after them
  uint64_t reported = 0;
  for (const lcpi_buffer_header& h : t.headers) reported += h.dropped;
  CHECK(reported == 2);
  CHECK(t.ht.stats.samples == t.OutCount() + t.ht.stats.dropped);
}

TEST_CASE("flush empties the table, and resumes after the reader makes room") {
  Table t(Config(4, 4, LCPI_POLICY_SWAP_TO_FRONT, 3));
  for (uint64_t pc = 0; pc < 40; pc++) t.Add(1, 0x1000 + pc * 16);
  CHECK(t.ht.stats.samples == 40);
  int wake = 0;
  // 40 entries cannot fit two buffers of 3: the first attempt stops part-way
  CHECK(lcpi_ht_flush(&t.ht, ++t.now, &wake) == -1);
  CHECK(wake == 1);
  REQUIRE(t.FlushAll());
  CHECK(lcpi_ht_pending(&t.ht) == 0);
  CHECK(t.OutCount() + lcpi_ht_pending(&t.ht) == 40);
  CHECK(t.ht.stats.flushed + t.ht.stats.evictions == t.out.size());
  // an empty flush seals nothing
  size_t before = t.headers.size();
  REQUIRE(t.FlushAll());
  CHECK(t.headers.size() == before);
  // sequence numbers are consecutive
  for (size_t i = 0; i < t.headers.size(); i++) CHECK(t.headers[i].seq == i);
}

// The module flushes a table in ranges, one interrupts-off step each, with
// samples arriving between the steps: every count is still written out
// exactly once, and only the last range seals.
TEST_CASE("a flush in ranges counts every sample once, also those between ranges") {
  Table t(Config(4, 6, LCPI_POLICY_ROUND_ROBIN, 8));
  std::mt19937_64 rng(7);
  uint64_t added = 0;
  auto add_some = [&](int n) {
    for (int i = 0; i < n; i++, added++) t.Add(1 + rng() % 3, 0x1000 + (rng() % 300) * 4);
  };
  add_some(2000);
  const uint64_t entries = lcpi_ht_entries(&t.ht);
  REQUIRE(entries == 64 * 4);
  const uint64_t step = 40;  // not a divisor: the last range is short
  for (int round = 0; round < 1000 && lcpi_ht_pending(&t.ht) > 0; round++) {
    for (uint64_t first = 0; first < entries; first += step) {
      int wake = 0;
      bool last = first + step >= entries;
      int r = lcpi_ht_flush_range(&t.ht, first, step, last, ++t.now, &wake);
      t.Drain();
      if (r != 0) break;
      if (round == 0) add_some(25);  // sampling goes on between the steps
    }
  }
  CHECK(lcpi_ht_pending(&t.ht) == 0);
  CHECK(t.ht.stats.samples == added);
  CHECK(t.ht.stats.samples == t.OutCount() + t.ht.stats.dropped);
  CHECK(t.ht.stats.samples == t.ht.stats.hits + t.ht.stats.misses + t.ht.stats.dropped);
  // a range past the end, or of nothing, writes nothing and fails nothing
  int wake = 0;
  CHECK(lcpi_ht_flush_range(&t.ht, entries, 10, 0, ++t.now, &wake) == 0);
  CHECK(lcpi_ht_flush_range(&t.ht, 3, 0, 0, ++t.now, &wake) == 0);
  CHECK(wake == 0);
}

// In the module a flush runs by IPI on the table's CPU, and a sample handler
// that runs with interrupts on (a software event's handler in process
// context) can be interrupted by it in the middle of lcpi_ht_emit(): the
// writer has checked that the active buffer has room and is about to store
// records[nr_records++]. Were the flush to fill and seal that buffer, the
// store would land past its end. So the flush must leave a table alone
// while a writer is inside it (lcpi_ht_enter/lcpi_ht_leave) and say so.
TEST_CASE("a flush that interrupts a writer inside the table leaves it alone") {
  Table t(Config(4, 4, LCPI_POLICY_ROUND_ROBIN, 4));
  std::vector<uint64_t> pcs = SameSetPcs(t, 7);
  for (uint64_t pc : pcs) t.Add(1, pc);  // 4 in the set, 3 evicted: buffer 0 holds 3 of 4
  REQUIRE(t.ht.stats.evictions == 3);
  const uint32_t active = t.ht.active;
  const lcpi_ht_buffer& b = t.ht.buf[active];
  REQUIRE(b.hdr.nr_records == 3);
  const uint64_t pending = lcpi_ht_pending(&t.ht);

  // the writer (sample handler) is inside the table, about to emit into b
  REQUIRE(lcpi_ht_enter(&t.ht) == 1);
  CHECK(lcpi_ht_enter(&t.ht) == 0);  // a nested writer is kept out too
  // ... and the flush IPI arrives
  int wake = 0;
  CHECK(lcpi_ht_flush(&t.ht, ++t.now, &wake) == LCPI_HT_FLUSH_BUSY);
  CHECK(wake == 0);
  // nothing moved: the writer's buffer is still active, free, with room
  CHECK(t.ht.active == active);
  CHECK(lcpi_load_acquire(&b.state) == LCPI_BUF_FREE);
  CHECK(b.hdr.nr_records == 3);
  CHECK(lcpi_ht_pending(&t.ht) == pending);
  CHECK(t.ht.stats.flushed == 0);
  CHECK(t.ht.stats.swaps == 0);
  CHECK(lcpi_ht_ready(&t.ht) == -1);
  // the writer finishes its emit in bounds and leaves
  t.ht.buf[active].records[t.ht.buf[active].hdr.nr_records++] = lcpi_record{0x42, 1, 1, 0, 0};
  lcpi_ht_leave(&t.ht);

  // the reader's retry flushes everything
  REQUIRE(t.FlushAll());
  CHECK(lcpi_ht_pending(&t.ht) == 0);
  CHECK(t.OutCount() == 7 + 1);
}

TEST_CASE("every sample is accounted once, for every policy and hash") {
  auto policy = GENERATE(LCPI_POLICY_ROUND_ROBIN, LCPI_POLICY_SWAP_TO_FRONT, LCPI_POLICY_LRU);
  auto hash = GENERATE(LCPI_HASH_MULTIPLY, LCPI_HASH_XOR_FOLD);
  auto ways = GENERATE(1u, 4u, 6u);
  Table t(Config(ways, 5, policy, 37, hash));
  std::mt19937_64 rng(policy * 100 + hash * 10 + ways);
  std::map<std::tuple<uint32_t, uint64_t, uint32_t>, uint64_t> truth;
  // skewed: a few hot pcs and a long tail, as real profiles are
  std::geometric_distribution<int> hot(0.02);
  for (int i = 0; i < 50000; i++) {
    uint32_t pid = 1 + rng() % 3;
    uint64_t pc = 0x400000 + 4 * static_cast<uint64_t>(hot(rng));
    uint32_t event = rng() % 2;
    if (t.Add(pid, pc, event) != LCPI_HT_DROPPED) truth[{pid, pc, event}]++;
    if (i % 97 == 0) t.Drain();  // a reader that keeps up, mostly
  }
  const lcpi_table_stats& s = t.ht.stats;
  CHECK(s.samples == 50000);
  CHECK(s.samples == s.hits + s.misses + s.dropped);
  REQUIRE(t.FlushAll());
  CHECK(s.samples == t.OutCount() + s.dropped);
  std::map<std::tuple<uint32_t, uint64_t, uint32_t>, uint64_t> got;
  for (const lcpi_record& r : t.out) got[{r.pid, r.pc, r.event}] += r.count;
  CHECK(got == truth);
}
