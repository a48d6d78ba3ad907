// ship_state.cpp - lcpi-ship's own SQLite bookkeeping (ship_state.h).
#include "ship/ship_state.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace lcpi::ship {

namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS shipped ("
    "  window_id INTEGER NOT NULL, started INTEGER NOT NULL, attempt INTEGER NOT NULL,"
    "  attempts INTEGER NOT NULL, done INTEGER NOT NULL, shipped_at INTEGER NOT NULL,"
    "  PRIMARY KEY (window_id, started)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS notes (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;";

Error SqlError(sqlite3* db, const std::string& what) {
  const int rc = sqlite3_errcode(db);
  const Errc code = rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? Errc::kBusy
                    : rc == SQLITE_FULL                      ? Errc::kFull
                    : rc == SQLITE_PERM || rc == SQLITE_READONLY || rc == SQLITE_CANTOPEN
                        ? Errc::kPermission
                        : Errc::kIo;
  return Error(code, what + ": " + sqlite3_errmsg(db));
}

// One prepared statement, finalized when it goes.
struct Stmt {
  sqlite3_stmt* s = nullptr;
  ~Stmt() { sqlite3_finalize(s); }
};

}  // namespace

Expected<std::unique_ptr<ShipState>> ShipState::Open(const std::string& path, bool read_only) {
  int lock_fd = -1;
  if (!read_only) {
    lock_fd = open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    if (lock_fd < 0) return ErrnoError("cannot open the state lock " + path + ".lock", errno);
    if (flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
      close(lock_fd);
      return Error(Errc::kBusy, "another lcpi-ship uses the state file " + path);
    }
  }
  sqlite3* db = nullptr;
  const int flags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    Error e = db ? SqlError(db, "cannot open the state file " + path)
                 : Error(Errc::kIo, "cannot open the state file " + path);
    if (read_only && access(path.c_str(), F_OK) != 0) {
      e = Error(Errc::kNotFound, "no state file " + path + " (nothing shipped yet)");
    }
    sqlite3_close(db);
    if (lock_fd >= 0) close(lock_fd);
    return e;
  }
  sqlite3_busy_timeout(db, 5000);
  std::unique_ptr<ShipState> state(new ShipState(db, lock_fd));
  if (!read_only) {
    auto ok = state->Exec(kSchema, "cannot set up the state file " + path);
    if (!ok) return ok.error();
  }
  return state;
}

ShipState::~ShipState() {
  sqlite3_close(db_);
  if (lock_fd_ >= 0) close(lock_fd_);
}

Expected<void> ShipState::Exec(const std::string& sql, const std::string& what) {
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    return SqlError(db_, what);
  }
  return {};
}

Expected<std::map<WindowKey, ShippedWindow>> ShipState::Windows() {
  std::map<WindowKey, ShippedWindow> out;
  Stmt st;
  if (sqlite3_prepare_v2(db_,
                         "SELECT window_id, started, attempt, attempts, done, shipped_at "
                         "FROM shipped",
                         -1, &st.s, nullptr) != SQLITE_OK) {
    return SqlError(db_, "cannot read the state file");
  }
  int rc;
  while ((rc = sqlite3_step(st.s)) == SQLITE_ROW) {
    ShippedWindow w;
    w.attempt = static_cast<uint64_t>(sqlite3_column_int64(st.s, 2));
    w.attempts = sqlite3_column_int64(st.s, 3);
    w.done = sqlite3_column_int64(st.s, 4) != 0;
    w.shipped_at = sqlite3_column_int64(st.s, 5);
    out[{sqlite3_column_int64(st.s, 0), sqlite3_column_int64(st.s, 1)}] = w;
  }
  if (rc != SQLITE_DONE) return SqlError(db_, "cannot read the state file");
  return out;
}

namespace {
Expected<void> Run(sqlite3* db, const char* sql, int64_t a, int64_t b, int64_t c, int64_t d) {
  Stmt st;
  if (sqlite3_prepare_v2(db, sql, -1, &st.s, nullptr) != SQLITE_OK) {
    return SqlError(db, "cannot write the state file");
  }
  sqlite3_bind_int64(st.s, 1, a);
  sqlite3_bind_int64(st.s, 2, b);
  sqlite3_bind_int64(st.s, 3, c);
  sqlite3_bind_int64(st.s, 4, d);
  if (sqlite3_step(st.s) != SQLITE_DONE) return SqlError(db, "cannot write the state file");
  return {};
}
}  // namespace

Expected<void> ShipState::BeginAttempt(WindowKey window, uint64_t attempt) {
  return Run(db_,
             "INSERT INTO shipped (window_id, started, attempt, attempts, done, shipped_at) "
             "VALUES (?1, ?2, ?3, 1, 0, 0) ON CONFLICT (window_id, started) DO UPDATE SET "
             "attempt = ?3, attempts = attempts + 1, done = 0",
             window.first, window.second, static_cast<int64_t>(attempt), 0);
}

Expected<void> ShipState::MarkShipped(WindowKey window, uint64_t attempt, int64_t now) {
  return Run(db_,
             "INSERT INTO shipped (window_id, started, attempt, attempts, done, shipped_at) "
             "VALUES (?1, ?2, ?3, 0, 1, ?4) ON CONFLICT (window_id, started) DO UPDATE SET "
             "attempt = ?3, done = 1, shipped_at = ?4",
             window.first, window.second, static_cast<int64_t>(attempt), now);
}

Expected<void> ShipState::SetNote(const std::string& key, const std::string& value) {
  Stmt st;
  if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO notes (key, value) VALUES (?1, ?2)", -1,
                         &st.s, nullptr) != SQLITE_OK) {
    return SqlError(db_, "cannot write the state file");
  }
  sqlite3_bind_text(st.s, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(st.s, 2, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(st.s) != SQLITE_DONE) return SqlError(db_, "cannot write the state file");
  return {};
}

Expected<std::map<std::string, std::string>> ShipState::Notes() {
  std::map<std::string, std::string> out;
  Stmt st;
  if (sqlite3_prepare_v2(db_, "SELECT key, value FROM notes", -1, &st.s, nullptr) != SQLITE_OK) {
    return SqlError(db_, "cannot read the state file");
  }
  while (sqlite3_step(st.s) == SQLITE_ROW) {
    auto text = [&](int i) {
      const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(st.s, i));
      return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(st.s, i))) : "";
    };
    out[text(0)] = text(1);
  }
  return out;
}

ShipProgress Progress(const std::vector<EpochInfo>& epochs,
                      const std::map<WindowKey, ShippedWindow>& done) {
  ShipProgress p;
  std::optional<int64_t> oldest_pending_start;
  int64_t newest_start = 0;
  for (const EpochInfo& e : epochs) {
    newest_start = std::max(newest_start, e.started);
    if (!e.ended) continue;
    auto it = done.find({e.id, e.started});
    if (it != done.end() && it->second.done) {
      p.shipped++;
      continue;
    }
    p.pending++;
    if (it != done.end() && it->second.attempts > 0) p.retried++;
    if (!p.oldest_pending_end || *e.ended < *p.oldest_pending_end) p.oldest_pending_end = *e.ended;
    if (!oldest_pending_start || e.started < *oldest_pending_start)
      oldest_pending_start = e.started;
  }
  // Caught up: only the open window (or nothing newer) is held.
  p.unshipped_from = oldest_pending_start  ? *oldest_pending_start
                     : epochs.empty()      ? 0
                     : epochs.back().ended ? newest_start + 1
                                           : newest_start;
  return p;
}

}  // namespace lcpi::ship
