# lcpiprof --format html opened in Debian's chromium, headless and offline
# (label "interop"): the page from the tools fixture's database ("tools:
# fixture" writes build/tools-fixture/profiles.db; tools.cmake is included
# after this file) has the fixture's procedures in its DOM, a screenshot,
# and no console message; a control page proves the console check works.
# tests/integration/html.sh says what each checks.
set(_html_script ${CMAKE_CURRENT_LIST_DIR}/html.sh)
set(_html_dir ${CMAKE_BINARY_DIR}/html-report)
add_test(NAME "html: lcpiprof page in chromium"
  COMMAND ${_html_script} check ${_html_dir} $<TARGET_FILE:lcpiprof>
          ${CMAKE_BINARY_DIR}/tools-fixture/profiles.db)
set_tests_properties("html: lcpiprof page in chromium" PROPERTIES
  FIXTURES_REQUIRED lcpi_tools LABELS "interop;peer" TIMEOUT 240)
add_test(NAME "html: console check control" COMMAND ${_html_script} control ${_html_dir}/control)
set_tests_properties("html: console check control" PROPERTIES LABELS "interop;peer" TIMEOUT 120)
# The flame graph and icicle of the tools fixture's stacks.db in chromium
# (tests/integration/flame_check.py): the DOM holds the frames at widths of
# their shares, long names whole in titles and cut in labels, a screenshot.
add_test(NAME "html: flame graph in chromium"
  COMMAND python3 ${CMAKE_CURRENT_LIST_DIR}/flame_check.py $<TARGET_FILE:lcpiprof>
          ${CMAKE_BINARY_DIR}/tools-fixture/stacks.db ${CMAKE_BINARY_DIR}/flame-check)
set_tests_properties("html: flame graph in chromium" PROPERTIES
  FIXTURES_REQUIRED lcpi_tools LABELS "interop;peer" TIMEOUT 300)
