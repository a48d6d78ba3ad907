// profile_db_sql.h - small SQLite helpers private to profile_db*.cpp: binding
// values, reading text columns, and resetting a cached statement on scope
// exit so that it never keeps a read transaction (and the WAL) pinned.
#ifndef LCPI_LIBPROFILE_STORE_PROFILE_DB_SQL_H
#define LCPI_LIBPROFILE_STORE_PROFILE_DB_SQL_H

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

// Adding to a window's cost row (schema/007, 009): its columns, and the sums on
// conflict. A merge (profile_db_cost.cpp) and a rollup
// (profile_db_retention.cpp) add the same way.
#define LCPI_INSERT_WINDOW_COST                                                            \
  "INSERT INTO window_costs (epoch_id, samples, cpu_ns, interrupt_ns, interrupt_ci95_ns, " \
  "daemon_ns, module_samples, module_handler_ns, stack_samples) "
#define LCPI_ADD_WINDOW_COST                                                                 \
  "ON CONFLICT (epoch_id) DO UPDATE SET samples = samples + excluded.samples, "              \
  "cpu_ns = cpu_ns + excluded.cpu_ns, interrupt_ns = interrupt_ns + excluded.interrupt_ns, " \
  "interrupt_ci95_ns = interrupt_ci95_ns + excluded.interrupt_ci95_ns, "                     \
  "daemon_ns = daemon_ns + excluded.daemon_ns, "                                             \
  "module_samples = module_samples + excluded.module_samples, "                              \
  "module_handler_ns = module_handler_ns + excluded.module_handler_ns, "                     \
  "stack_samples = stack_samples + excluded.stack_samples"

namespace lcpi::sql {

class Reset {
 public:
  explicit Reset(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  Reset(const Reset&) = delete;
  Reset& operator=(const Reset&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

// Binding cannot fail here: the indexes are the statements' own and the
// values are integers or strings that outlive the step (SQLITE_STATIC).
inline void Bind(sqlite3_stmt* stmt, int index, int64_t value) {
  sqlite3_bind_int64(stmt, index, value);
}
inline void Bind(sqlite3_stmt* stmt, int index, std::string_view value) {
  sqlite3_bind_text(stmt, index, value.data(), static_cast<int>(value.size()), SQLITE_STATIC);
}

// A text column as a string; NULL reads as "".
inline std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<size_t>(sqlite3_column_bytes(stmt, column)));
}

}  // namespace lcpi::sql

#endif  // LCPI_LIBPROFILE_STORE_PROFILE_DB_SQL_H
