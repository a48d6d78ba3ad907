# A real host's long names in every format (label "interop": it needs Debian's
# chromium and golang-go): the tools fixture's long-names.db, a 583-byte Rust
# symbol (1103 bytes demangled) the hottest, read with lcpiprof -p as text
# (cut in the middle to --width), CSV, JSON and pprof (whole), pprof's first
# mapping the hottest image, and the HTML page no wider than a 1280-pixel
# chromium window. tests/integration/long_names.py says what each checks.
add_test(NAME "long names: every format"
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/long_names.py $<TARGET_FILE:lcpiprof>
          ${CMAKE_BINARY_DIR}/tools-fixture/long-names.db ${CMAKE_BINARY_DIR}/long-names-check)
set_tests_properties("long names: every format" PROPERTIES
  FIXTURES_REQUIRED lcpi_tools LABELS interop TIMEOUT 300)
