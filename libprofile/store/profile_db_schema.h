// profile_db_schema.h - the schema migrations compiled into lcpiprofile.
//
// The table is generated at build time from schema/NNN_name.sql by
// schema/embed_sql.cmake (see schema/embed.cmake); ProfileDb::Open applies the
// entries above a database's PRAGMA user_version, in order. The build checks
// that versions run 1, 2, ... with no gap, so kMigrations[i].version == i + 1
// and the newest schema version is kMigrationCount.
#ifndef LCPI_LIBPROFILE_STORE_PROFILE_DB_SCHEMA_H
#define LCPI_LIBPROFILE_STORE_PROFILE_DB_SCHEMA_H

namespace lcpi::schema {

struct Migration {
  int version;       // the NNN of the file name: user_version after it ran
  const char* name;  // the file name, for error messages
  const char* sql;   // the whole file: one or more statements
};

extern const Migration kMigrations[];
extern const int kMigrationCount;

}  // namespace lcpi::schema

#endif  // LCPI_LIBPROFILE_STORE_PROFILE_DB_SCHEMA_H
