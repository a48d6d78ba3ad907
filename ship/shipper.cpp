// shipper.cpp - closed windows into ClickHouse, exactly once (shipper.h).
#include "ship/shipper.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <thread>
#include <vector>

#include "libprofile/base/text.h"
#include "libprofile/base/time_spec.h"
#include "libprofile/fleet/clickhouse_http.h"
#include "libprofile/fleet/clickhouse_text.h"
#include "libprofile/fleet/fleet_schema.h"
#include "libprofile/store/profile_db.h"
#include "libprofile/store/ship_mark.h"
#include "ship/ship_state.h"
#include "ship/window_rows.h"

namespace lcpi::ship {

namespace {

// The most of one IN (...) list in a query (ShipImages).
constexpr size_t kMaxInListBytes = 64 * 1024;

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int64_t Now() { return static_cast<int64_t>(std::time(nullptr)); }

void Log(const std::string& line) {
  std::fprintf(stderr, "lcpi-ship: %s\n", Printable(line).c_str());
}

// Sleeps `seconds`, waking early on SIGTERM; false if stopped.
bool Sleep(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stop && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return !g_stop;
}

// A new try's id: random, so two tries of one window never share one.
// Attempts are 63-bit (NewAttempt): shown the same by every client.
constexpr uint64_t kMaxAttempt = 0x7fffffffffffffffull;

uint64_t NewAttempt() {
  uint64_t a = 0;
  while (a == 0) {
    if (getrandom(&a, sizeof(a), 0) != sizeof(a)) {
      a = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    }
    a &= kMaxAttempt;
  }
  return a;
}

// Test hooks (LCPI_SHIP_TEST_HOOK), for the integration tests only:
// "kill-after-rows" and "kill-after-marker" send the shipper SIGKILL right
// after a window's rows, or its windows row, are in ClickHouse (before its
// own bookkeeping); "pause-ms=N" waits N ms after each window.
void TestHook(const char* point) {
  const char* hook = std::getenv("LCPI_SHIP_TEST_HOOK");
  if (hook == nullptr) return;
  const std::string h = hook;
  if (h == std::string("kill-after-") + point) kill(getpid(), SIGKILL);
  if (h.rfind("pause-ms=", 0) == 0 && std::string(point) == "window") {
    Sleep(std::atof(h.c_str() + 9) / 1000.0);
  }
}

std::string Hex(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    out += kHex[static_cast<unsigned char>(c) >> 4];
    out += kHex[static_cast<unsigned char>(c) & 0xf];
  }
  return out;
}

class Shipper {
 public:
  Shipper(const ShipOptions& o, fleet::ClickHouseHttp& ch, ProfileDb& db, ShipState& state)
      : o_(o), ch_(ch), db_(db), state_(state) {}

  // Ships every closed window not yet shipped, oldest first; the number
  // left, or the first error.
  Expected<size_t> Pass() {
    if (!schema_ready_) {
      for (const std::string& sql : fleet::FleetSchemaStatements(o_.database)) {
        auto r = ch_.Query(sql);
        if (!r) return r.error();
      }
      auto columns = ch_.Query(fleet::FleetSchemaCheckQuery(o_.database));
      if (!columns) return columns.error();
      if (auto ok = fleet::CheckFleetSchemaAnswer(o_.database, *columns); !ok) return ok.error();
      schema_ready_ = true;
    }
    auto epochs = db_.ListEpochs();
    if (!epochs) return epochs.error();
    auto done = state_.Windows();
    if (!done) return done.error();
    for (const EpochInfo& e : *epochs) {
      if (!e.ended) continue;  // the open window: shipped once closed
      auto it = done->find({e.id, e.started});
      if (it != done->end() && it->second.done) continue;
      if (g_stop) return Error(Errc::kBusy, "stopped");
      auto ok = ShipWindow(e, it == done->end() ? 0 : it->second.attempts);
      if (!ok) {
        schema_ready_ = false;  // a server restarted empty gets its tables again
        return ok.error();
      }
      TestHook("window");
    }
    return 0;
  }

 private:
  std::string Table(const char* name) const { return o_.database + "." + name; }

  // The attempts ClickHouse committed for the window: none, one, or (two
  // machines shipping under one --host, or a row another host forged) two.
  // A row whose attempt no shipper sends (0, or beyond 63 bits: NewAttempt)
  // commits nothing and is passed over, so a forged one cannot stop this
  // host's shipping. An answer that is not numbers (a proxy's page) is an
  // error, tried again later: never "none", which would send the window
  // again, nor an attempt to keep while deleting the rest.
  Expected<std::vector<uint64_t>> Committed(const EpochInfo& e) {
    auto r = ch_.Query(
        "SELECT DISTINCT attempt FROM " + Table("windows") +
        " WHERE host = " + fleet::SqlString(o_.host) + " AND window_id = " + std::to_string(e.id) +
        " AND started = toDateTime(" + std::to_string(e.started) + ") AND attempt BETWEEN 1 AND " +
        std::to_string(kMaxAttempt) + " ORDER BY attempt LIMIT 2 FORMAT TabSeparated");
    if (!r) return r.error();
    std::vector<uint64_t> attempts;
    for (std::string_view rest = *r; !rest.empty();) {
      const size_t nl = rest.find('\n');
      const std::optional<uint64_t> a = ParseDecimal(rest.substr(0, nl));
      if (!a)
        return Error(Errc::kCorrupt, "ClickHouse's answer about window " + std::to_string(e.id) +
                                         " is not attempt numbers: " + Printable(r->substr(0, 80)));
      attempts.push_back(*a);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    }
    return attempts;
  }

  // Sends the symbols and rows of the images this host has not sent yet
  // (each host its own: the reports read an identity's from a host of
  // their selection).
  Expected<void> ShipImages(const std::set<int64_t>& ids) {
    if (ids.empty()) return {};
    auto images = db_.ListImages();
    if (!images) return images.error();
    std::vector<const ImageInfo*> wanted;
    std::vector<std::string> hex;
    for (const ImageInfo& i : *images) {
      if (!ids.count(i.id)) continue;
      wanted.push_back(&i);
      hex.push_back(Hex(i.identity));
    }
    // hex(identity): the answer is compared without unescaping anything.
    // Asked in lists of at most 64 KiB: one list of a busy window's images
    // would pass ClickHouse's max_query_size (256 KiB), an HTTP 400 that
    // every try repeats while later windows wait behind it.
    std::set<std::string> have;
    for (const std::string& in : fleet::SqlInLists(hex, kMaxInListBytes)) {
      auto present = ch_.Query("SELECT hex(identity) FROM " + Table("images") + " WHERE host = " +
                               fleet::SqlString(o_.host) + " AND hex(identity) IN (" + in + ")");
      if (!present) return present.error();
      for (size_t pos = 0; pos < present->size();) {
        size_t nl = present->find('\n', pos);
        if (nl == std::string::npos) nl = present->size();
        have.insert(present->substr(pos, nl - pos));
        pos = nl + 1;
      }
    }
    std::string symbols, rows;
    for (const ImageInfo* i : wanted) {
      if (have.count(Hex(i->identity))) continue;
      uint64_t n = 0;
      std::vector<std::string> warnings;
      symbols += SymbolRows(db_, *i, o_.host, &n, &warnings);
      for (const std::string& w : warnings) Log(w);
      fleet::AppendTsvField(rows, i->identity);
      for (const std::string& f : {std::string(ImageKindName(i->kind)), i->path, o_.host}) {
        rows += '\t';
        fleet::AppendTsvField(rows, f);
      }
      rows += '\t';
      fleet::AppendTsvField(rows, n);
      rows += '\n';
    }
    // Symbols first: an identity's row says its symbols are all there.
    if (!symbols.empty()) {
      auto ok = ch_.InsertTsv(Table("symbols") + " " + kSymbolColumns, symbols);
      if (!ok) return ok;
    }
    if (!rows.empty()) return ch_.InsertTsv(Table("images") + " " + kImageColumns, rows);
    return {};
  }

  // Deletes the rows of the window's tries other than the committed one.
  // They are never counted (the views keep the committed attempt), so this
  // is only tidiness: a failure is logged, not retried, and where two
  // attempts are committed (two machines under one --host, or a forged
  // row) nothing is deleted, since the views count both. Its start time
  // too: window ids start again at 1 in a recreated database, and another
  // life's committed rows of the same id are not this window's.
  void DeleteOtherTries(const EpochInfo& e, const std::vector<uint64_t>& committed) {
    if (committed.size() != 1) {
      Log("window " + std::to_string(e.id) +
          " has two committed attempts in ClickHouse (is another machine shipping as " +
          Printable(o_.host) + "?): the rows of earlier tries are left");
      return;
    }
    for (const char* t : {"counts", "processes", "window_facts"}) {
      auto r = ch_.Query(
          "ALTER TABLE " + Table(t) + " DELETE WHERE host = " + fleet::SqlString(o_.host) +
          " AND window_id = " + std::to_string(e.id) + " AND started = toDateTime(" +
          std::to_string(e.started) + ") AND attempt != " + std::to_string(committed.front()));
      if (!r) Log("could not delete the rows of earlier tries: " + r.error().message());
    }
  }

  Expected<void> ShipWindow(const EpochInfo& e, int64_t earlier_attempts) {
    auto committed = Committed(e);
    if (!committed) return committed.error();
    if (!committed->empty()) {
      // ClickHouse has it: the last try ended before its bookkeeping.
      Log("window " + std::to_string(e.id) + " is in ClickHouse already (attempt " +
          std::to_string(committed->front()) + "): recorded, not sent again");
      auto marked = state_.MarkShipped({e.id, e.started}, committed->front(), Now());
      if (!marked) return marked;
      // The committed try is one of those begun; any other left rows.
      if (earlier_attempts > 1) DeleteOtherTries(e, *committed);
      return {};
    }
    const uint64_t attempt = NewAttempt();
    auto begun = state_.BeginAttempt({e.id, e.started}, attempt);
    if (!begun) return begun;
    auto rows = ReadWindow(db_, e, o_.host, attempt);
    if (!rows) return rows.error();
    auto images = ShipImages(rows->image_ids);
    if (!images) return images;
    if (!rows->counts.empty()) {
      auto ok = ch_.InsertTsv(Table("counts") + " " + kCountColumns, rows->counts);
      if (!ok) return ok;
    }
    if (!rows->processes.empty()) {
      auto ok = ch_.InsertTsv(Table("processes") + " " + kProcessColumns, rows->processes);
      if (!ok) return ok;
    }
    if (!rows->facts.empty()) {
      auto ok = ch_.InsertTsv(Table("window_facts") + " " + kFactColumns, rows->facts);
      if (!ok) return ok;
    }
    TestHook("rows");
    // The commit: ask once more, since a windows row whose answer was lost
    // (the server stopped after writing it) must not be followed by another.
    committed = Committed(e);
    if (!committed) return committed.error();
    if (committed->empty()) {
      auto ok = ch_.InsertTsv(Table("windows") + " " + kWindowColumns,
                              WindowRow(e, o_.host, attempt, Now(), *rows));
      if (!ok) return ok;
      committed->push_back(attempt);
    }
    TestHook("marker");
    auto marked = state_.MarkShipped({e.id, e.started}, committed->front(), Now());
    if (!marked) return marked;
    if (earlier_attempts > 0) DeleteOtherTries(e, *committed);
    Log("window " + std::to_string(e.id) + " shipped: " + std::to_string(rows->count_rows) +
        " count rows, " + std::to_string(rows->process_rows) + " process rows, " +
        std::to_string(rows->samples) + " samples");
    return {};
  }

  const ShipOptions& o_;
  fleet::ClickHouseHttp& ch_;
  ProfileDb& db_;
  ShipState& state_;
  bool schema_ready_ = false;
};

std::unique_ptr<ProfileDb> OpenProfileDb(const std::string& path) {
  auto db = ProfileDb::Open(path, DbMode::kReadOnly);
  if (db) return std::move(*db);
  std::string why = db.error().ToString();
  if (db.error().code() == Errc::kNotFound) why = path + ": no such database (is lcpid running?)";
  if (db.error().code() == Errc::kPermission) {
    why += " (lcpi-ship reads it as a member of group lcpi)";
  }
  Log("cannot read the profile database: " + why);
  return nullptr;
}

// One shipper per profile database, whatever its state file: an flock on
// the database file itself (SQLite locks with fcntl, which flock does not
// see, and lcpid takes no flock), held until the process ends. Two state
// files on one database would each commit its windows: two windows rows,
// each run's clean-up deleting the other's rows. The fd stays open.
bool LockProfileDb(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    Log("cannot lock the profile database " + path + ": " + std::strerror(errno));
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    Log("another lcpi-ship ships " + path + " (one per database, whatever its --state)");
    close(fd);
    return false;
  }
  return true;
}

// The mark lcpid holds windows by (--hold-unshipped; ship_mark.h), beside
// the state file. Failing to write it is said, not fatal: lcpid then holds
// from the last mark, which errs on keeping windows.
void LeaveMark(const ShipOptions& o, ProfileDb& db, ShipState& state) {
  auto epochs = db.ListEpochs();
  auto done = state.Windows();
  if (!epochs || !done) return;
  auto ok = WriteShipMark(MarkPath(o.state_path), Progress(*epochs, *done).unshipped_from);
  if (!ok) Log(ok.error().message());
}

}  // namespace

int RunShipper(const ShipOptions& o) {
  auto ok_db = fleet::CheckDatabaseName(o.database);
  if (!ok_db) {
    Log(ok_db.error().message());
    return 2;
  }
  auto ch = fleet::ClickHouseHttp::Create(o.url);
  if (!ch) {
    Log(ch.error().message());
    return 2;
  }
  auto db = OpenProfileDb(o.db_path);
  if (!db) return 1;
  if (!LockProfileDb(o.db_path)) return 1;
  auto state = ShipState::Open(o.state_path, /*read_only=*/false);
  if (!state) {
    Log(state.error().message());
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  (void)(*state)->SetNote("url", (*ch)->shown_url());
  (void)(*state)->SetNote("host", o.host);

  Shipper shipper(o, **ch, *db, **state);
  double backoff = static_cast<double>(o.backoff_min);
  while (!g_stop) {
    auto left = shipper.Pass();
    LeaveMark(o, *db, **state);
    if (left) {
      (void)(*state)->SetNote("last_ok_at", std::to_string(Now()));
      backoff = static_cast<double>(o.backoff_min);
      if (o.once) return 0;
      Sleep(static_cast<double>(o.interval));
      continue;
    }
    if (g_stop) break;
    const Error& e = left.error();
    // The state file or the profile database failing is not the server
    // being away: said, and retried as slowly as the server.
    Log(e.message() + "; retrying in " + FormatDuration(static_cast<int64_t>(backoff)));
    (void)(*state)->SetNote("last_error", e.message());
    (void)(*state)->SetNote("last_error_at", std::to_string(Now()));
    Sleep(backoff);
    backoff = std::min(backoff * 2, static_cast<double>(o.backoff_max));
  }
  Log("stopped");
  return o.once ? 1 : 0;
}

int PrintStatus(const ShipOptions& o) {
  auto db = OpenProfileDb(o.db_path);
  if (!db) return 1;
  std::map<WindowKey, ShippedWindow> done;
  std::map<std::string, std::string> notes;
  auto state = ShipState::Open(o.state_path, /*read_only=*/true);
  if (state) {
    auto w = (*state)->Windows();
    if (w) done = std::move(*w);
    auto n = (*state)->Notes();
    if (n) notes = std::move(*n);
  } else if (state.error().code() != Errc::kNotFound) {
    Log(state.error().message());
    return 1;
  }
  auto epochs = db->ListEpochs();
  if (!epochs) {
    Log("cannot read the profile database: " + epochs.error().message());
    return 1;
  }
  const int64_t now = Now();
  const ShipProgress p = Progress(*epochs, done);
  auto when = [&](const std::string& key) -> std::string {
    auto it = notes.find(key);
    if (it == notes.end()) return "never";
    const int64_t t = std::atoll(it->second.c_str());
    return FormatUtc(t) + " (" + (now > t ? FormatDuration(now - t) : "0s") + " ago)";
  };
  auto note = [&](const std::string& key) {
    auto it = notes.find(key);
    return it == notes.end() ? std::string("-") : Printable(it->second);
  };
  std::printf("database          %s\n", Printable(o.db_path).c_str());
  std::printf("state             %s%s\n", Printable(o.state_path).c_str(),
              state ? "" : " (none yet)");
  std::printf("clickhouse        %s\n", note("url").c_str());
  std::printf("host              %s\n", note("host").c_str());
  std::printf("windows shipped   %llu\n", static_cast<unsigned long long>(p.shipped));
  std::printf("windows pending   %llu (%llu begun and not finished)\n",
              static_cast<unsigned long long>(p.pending),
              static_cast<unsigned long long>(p.retried));
  if (const std::optional<int64_t>& oldest = p.oldest_pending_end) {
    std::printf("oldest pending    closed %s, %s ago\n", FormatUtc(*oldest).c_str(),
                now > *oldest ? FormatDuration(now - *oldest).c_str() : "0s");
  } else {
    std::printf("oldest pending    -\n");
  }
  std::printf("last success      %s\n", when("last_ok_at").c_str());
  std::printf("last error        %s\n", when("last_error_at").c_str());
  if (notes.count("last_error")) std::printf("                  %s\n", note("last_error").c_str());
  return 0;
}

}  // namespace lcpi::ship
