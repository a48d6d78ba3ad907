# Names other users chose, rendered by lcpiprof in every format (label
# "tools"): hostile_names.py checks each output is valid (strict UTF-8, strict
# JSON, RFC 4180 CSV), shows no control character, forges no row, starts no
# CSV cell with a formula prefix, and equals its golden file
# (tests/golden/hostile_*); `python3 tests/integration/hostile_names.py ...
# --update` rewrites them after a deliberate change.
add_test(NAME "tools: hostile names in every format"
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/hostile_names.py $<TARGET_FILE:lcpiprof>
          ${CMAKE_BINARY_DIR}/tools-fixture/hostile.db ${CMAKE_SOURCE_DIR}/tests/golden
          ${CMAKE_BINARY_DIR}/hostile-names)
set_tests_properties("tools: hostile names in every format" PROPERTIES
  FIXTURES_REQUIRED lcpi_tools LABELS tools TIMEOUT 600)
