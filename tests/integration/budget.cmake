# The cost budget (issue #27): lcpid's calibration of what a sample costs,
# on this host's perf events (needs root).
lcpi_catch_test(budget_test ${CMAKE_CURRENT_SOURCE_DIR}/budget_test.cpp)
target_link_libraries(budget_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(budget_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(budget_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(budget_test lcpid lcpictl workload_shares)
# The cases that assert what a calibration measured (tag [calibration])
# run as one test, labelled calibration: the sanitizer tree leaves it out
# (under ASan a loaded host's slopes wandered from 0.4 to 8 us, each
# refused); the other cases give lcpid the cost (--sample-cost) and run in
# both trees.
catch_discover_tests(budget_test TEST_SPEC "~[calibration]" TEST_PREFIX "budget: "
  EXTRA_ARGS --warn NoTests PROPERTIES LABELS integration RUN_SERIAL TRUE)
add_test(NAME "budget:what the calibration measured" COMMAND budget_test "[calibration]")
set_tests_properties("budget:what the calibration measured" PROPERTIES
  LABELS "integration;calibration" RUN_SERIAL TRUE)
