# The cost budget (issue #27): lcpid's calibration of what a sample costs,
# on this host's perf events (needs root).
lcpi_catch_test(budget_test ${CMAKE_CURRENT_SOURCE_DIR}/budget_test.cpp)
target_link_libraries(budget_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(budget_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(budget_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(budget_test lcpid lcpictl workload_shares)
catch_discover_tests(budget_test TEST_PREFIX "budget: " EXTRA_ARGS --warn NoTests
  PROPERTIES LABELS integration RUN_SERIAL TRUE)
