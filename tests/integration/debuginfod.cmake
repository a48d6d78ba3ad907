# The tools against a real debuginfod server (label "interop"): Debian's
# `debuginfod` on a loopback port serves the debug file of the report
# fixture's program, which is stripped (its build-id kept). Each case starts
# and stops its own server (tests/integration/debuginfod.sh says what each
# checks); the fixture directory is shared.
set(LCPI_DEBUGINFOD_DIR ${CMAKE_BINARY_DIR}/debuginfod-fixture)
set(_script ${CMAKE_CURRENT_LIST_DIR}/debuginfod.sh)
add_test(NAME "debuginfod: fixture"
  COMMAND ${_script} setup ${LCPI_DEBUGINFOD_DIR} $<TARGET_FILE:lcpi_tools_fixture>)
set_tests_properties("debuginfod: fixture" PROPERTIES
  FIXTURES_SETUP lcpi_debuginfod LABELS interop TIMEOUT 60)
foreach(mode fetch off unreachable silent huge slow badid)
  add_test(NAME "debuginfod: ${mode}"
    COMMAND ${_script} ${mode} ${LCPI_DEBUGINFOD_DIR} $<TARGET_FILE:lcpiprof>
            $<TARGET_FILE:lcpilist>)
  set_tests_properties("debuginfod: ${mode}" PROPERTIES
    FIXTURES_REQUIRED lcpi_debuginfod LABELS interop TIMEOUT 90)
endforeach()
