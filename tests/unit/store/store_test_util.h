// store_test_util.h - what the store's window and retention tests share: a
// temporary directory removed afterwards, and opening or unwrapping with the
// error shown when it fails.
#ifndef LCPI_TESTS_UNIT_STORE_STORE_TEST_UTIL_H
#define LCPI_TESTS_UNIT_STORE_STORE_TEST_UTIL_H

#include <sqlite3.h>
#include <stdlib.h>
#include <catch2/catch.hpp>

#include <filesystem>
#include <memory>
#include <string>

#include "libprofile/store/profile_db.h"

namespace lcpi::testing {

struct TempDir {
  explicit TempDir(const std::string& prefix) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(tmpl.data()) == nullptr) FAIL("mkdtemp failed");
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string File(const std::string& name) const { return (path / name).string(); }
  std::filesystem::path path;
};

inline std::unique_ptr<ProfileDb> OpenOk(const std::string& path,
                                         DbMode mode = DbMode::kReadWrite) {
  auto db = ProfileDb::Open(path, mode);
  INFO((db ? std::string("ok") : db.error().ToString()));
  REQUIRE(db.has_value());
  return std::move(*db);
}

// Runs SQL on the file behind the store's back (an older schema, damage).
inline void RawExec(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  char* msg = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &msg);
  INFO(sql << ": " << (msg ? msg : ""));
  sqlite3_free(msg);
  sqlite3_close(db);
  REQUIRE(rc == SQLITE_OK);
}

// The first column of the first row of a query, read behind the store's back.
inline int64_t RawInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK);
  REQUIRE(sqlite3_step(stmt) == SQLITE_ROW);
  int64_t v = sqlite3_column_int64(stmt, 0);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return v;
}

// SQL that takes a database of schema 9 back to schema 8 (no call stacks in
// the window costs).
#define LCPI_UNDO_SCHEMA9 "ALTER TABLE window_costs DROP COLUMN stack_samples; "
inline constexpr const char kUndoSchema9[] = LCPI_UNDO_SCHEMA9 "PRAGMA user_version = 8;";

// SQL that takes a database of schema 9 back to schema 7 (no identity of
// lcpid's executable).
#define LCPI_UNDO_SCHEMA8 LCPI_UNDO_SCHEMA9 "DROP TABLE observer_images; "
inline constexpr const char kUndoSchema8[] = LCPI_UNDO_SCHEMA8 "PRAGMA user_version = 7;";

// SQL that takes a database of schema 9 back to schema 6 (no window costs).
#define LCPI_UNDO_SCHEMA7 LCPI_UNDO_SCHEMA8 "DROP TABLE observer_pids; DROP TABLE window_costs; "
inline constexpr const char kUndoSchema7[] = LCPI_UNDO_SCHEMA7 "PRAGMA user_version = 6;";

// SQL that takes a database of schema 7 back to schema 5 (no call stacks).
#define LCPI_UNDO_SCHEMA6 LCPI_UNDO_SCHEMA7 "DROP TABLE stack_counts; DROP TABLE stacks; "
inline constexpr const char kUndoSchema6[] = LCPI_UNDO_SCHEMA6 "PRAGMA user_version = 5;";

// SQL that takes a database of schema 7 back to schema 4 (process_counts as
// 001 made it, no cgroups), for the tests of migrations from older schemas.
inline constexpr const char kUndoSchema5[] = LCPI_UNDO_SCHEMA6
    "CREATE TABLE pc4 (epoch_id INTEGER NOT NULL REFERENCES epochs (id), "
    "pid INTEGER NOT NULL, comm TEXT NOT NULL, "
    "image_id INTEGER NOT NULL REFERENCES images (id), "
    "event_id INTEGER NOT NULL REFERENCES events (id), "
    "count INTEGER NOT NULL CHECK (count >= 0), "
    "PRIMARY KEY (epoch_id, pid, comm, image_id, event_id)) WITHOUT ROWID; "
    "INSERT INTO pc4 SELECT epoch_id, pid, comm, image_id, event_id, count "
    "FROM process_counts; DROP TABLE process_counts; "
    "ALTER TABLE pc4 RENAME TO process_counts; DROP TABLE cgroups; "
    "PRAGMA user_version = 4;";
#undef LCPI_UNDO_SCHEMA6
#undef LCPI_UNDO_SCHEMA7
#undef LCPI_UNDO_SCHEMA8

template <class T>
T Ok(Expected<T> e) {
  INFO((e ? std::string("ok") : e.error().ToString()));
  REQUIRE(e.has_value());
  return std::move(*e);
}

inline void OkVoid(Expected<void> e) {
  INFO((e ? std::string("ok") : e.error().ToString()));
  REQUIRE(e.has_value());
}

}  // namespace lcpi::testing

#endif  // LCPI_TESTS_UNIT_STORE_STORE_TEST_UTIL_H
