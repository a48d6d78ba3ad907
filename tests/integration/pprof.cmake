# lcpiprof --format pprof read by the real client (label "interop"): `go tool
# pprof` from Debian's golang-go reads the files written from the tools
# fixture's database (tests/integration/tools.cmake) without a warning, and its
# per-function figures equal lcpiprof -p's (tests/integration/pprof_check.py).
add_test(NAME "pprof: go tool pprof"
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/pprof_check.py $<TARGET_FILE:lcpiprof>
          ${CMAKE_BINARY_DIR}/pprof-check --db ${CMAKE_BINARY_DIR}/tools-fixture/profiles.db)
set_tests_properties("pprof: go tool pprof" PROPERTIES
  FIXTURES_REQUIRED lcpi_tools LABELS "interop;peer" TIMEOUT 300)
# Call stacks in the pprof file (tests/integration/pprof_stacks.py): go tool
# pprof -top -cum and -traces show the callers of the tools fixture's
# stacks.db, whose leaf is called 60/40 through two callers.
add_test(NAME "pprof: stacks in go tool pprof"
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/pprof_stacks.py $<TARGET_FILE:lcpiprof>
          ${CMAKE_BINARY_DIR}/tools-fixture/stacks.db ${CMAKE_BINARY_DIR}/pprof-stacks)
set_tests_properties("pprof: stacks in go tool pprof" PROPERTIES
  FIXTURES_REQUIRED lcpi_tools LABELS "interop;peer" TIMEOUT 300)
