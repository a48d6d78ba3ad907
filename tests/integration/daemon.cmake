# lcpid end to end on this host's perf events (needs root). The workloads are
# small C programs built here with known behaviour.
foreach(w shares tiny exec_first exec_second syscalls)
  lcpi_workload(${w} ${CMAKE_CURRENT_SOURCE_DIR}/workloads/${w}.c)
endforeach()

lcpi_catch_test(daemon_test ${CMAKE_CURRENT_SOURCE_DIR}/daemon_test.cpp)
target_link_libraries(daemon_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(daemon_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(daemon_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads" LCPI_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_dependencies(daemon_test lcpid lcpictl workload_shares workload_tiny workload_exec_first
  workload_exec_second workload_syscalls)
catch_discover_tests(daemon_test TEST_PREFIX "lcpid: " EXTRA_ARGS --warn NoTests
  PROPERTIES LABELS integration RUN_SERIAL TRUE)

# The drain thread alone (lcpid_core), on this host's perf events.
lcpi_catch_test(drainer_test ${CMAKE_CURRENT_SOURCE_DIR}/drainer_test.cpp)
target_link_libraries(drainer_test PRIVATE lcpid_core lcpi_kmod_headers Catch2::Catch2)
catch_discover_tests(drainer_test TEST_PREFIX "drainer: " EXTRA_ARGS --warn NoTests
  PROPERTIES LABELS integration)
