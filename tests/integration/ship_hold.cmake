# lcpid --hold-unshipped (issue #28): the windows lcpi-ship has not sent, by
# its mark, outlive --retain; the size cap still drops them, counted. On
# this host's perf events (needs root).
lcpi_catch_test(ship_hold_test ${CMAKE_CURRENT_SOURCE_DIR}/ship_hold_test.cpp)
target_link_libraries(ship_hold_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(ship_hold_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(ship_hold_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(ship_hold_test lcpid lcpictl)
catch_discover_tests(ship_hold_test TEST_PREFIX "ship-hold: " EXTRA_ARGS --warn NoTests
  PROPERTIES LABELS integration RUN_SERIAL TRUE)
