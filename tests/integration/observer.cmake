# The observer in the profile (issue #27): a real lcpid run's reports state
# what the profile cost and carry lcpid's own samples as [lcpi: observer]
# (needs root).
lcpi_catch_test(observer_cost_test ${CMAKE_CURRENT_SOURCE_DIR}/observer_cost_test.cpp)
target_link_libraries(observer_cost_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(observer_cost_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(observer_cost_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  LCPIPROF_PATH="$<TARGET_FILE:lcpiprof>" WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(observer_cost_test lcpid lcpictl lcpiprof workload_shares)
catch_discover_tests(observer_cost_test TEST_PREFIX "observer: " EXTRA_ARGS --warn NoTests
  PROPERTIES LABELS integration RUN_SERIAL TRUE)
