# embed.cmake - compiles the schema migrations (schema/NNN_name.sql) into
# lcpi_store, so the library, the daemon and the tools always carry the exact
# schema they were built with and need no files at run time.
#
# Included from libprofile/CMakeLists.txt after lcpi_part(store). At
# build time, embed_sql.cmake turns the .sql files into
# ${CMAKE_CURRENT_BINARY_DIR}/schema_migrations.cpp, which defines the table
# declared in libprofile/store/profile_db_schema.h. A new or edited .sql file
# re-runs it (CONFIGURE_DEPENDS for new files, DEPENDS for edits).
file(GLOB LCPI_SCHEMA_SQL CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/schema/*.sql)
list(SORT LCPI_SCHEMA_SQL)
# A list cannot cross the command line intact; "|" never occurs in our paths.
string(REPLACE ";" "|" LCPI_SCHEMA_SQL_ARG "${LCPI_SCHEMA_SQL}")
set(LCPI_SCHEMA_CPP ${CMAKE_CURRENT_BINARY_DIR}/schema_migrations.cpp)
add_custom_command(
  OUTPUT ${LCPI_SCHEMA_CPP}
  COMMAND ${CMAKE_COMMAND} -DLCPI_SQL_FILES=${LCPI_SCHEMA_SQL_ARG}
          -DLCPI_OUTPUT=${LCPI_SCHEMA_CPP} -P ${CMAKE_SOURCE_DIR}/schema/embed_sql.cmake
  DEPENDS ${LCPI_SCHEMA_SQL} ${CMAKE_SOURCE_DIR}/schema/embed_sql.cmake
  COMMENT "Embedding schema migrations into lcpiprofile"
  VERBATIM)
target_sources(lcpi_store PRIVATE ${LCPI_SCHEMA_CPP})
