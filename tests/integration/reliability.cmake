# Reliability and security of lcpid and the tools (issue 7), end to end as
# root on this host's perf events: daemon faults, process churn, privilege
# and load. One executable per file; test cases tagged [slow] in Catch2 run
# as a separate CTest entry labelled "slow" (ctest -LE slow leaves them out).
# What each test proved, with its figures: docs/reliability.md.

# Workloads: versioned.c built under four names (own symbol, own build-id),
# a static blip for churn, the churn driver, and the pid-reuse helper.
foreach(name reuse_a reuse_b replaced_v1 replaced_v2)
  lcpi_workload(${name} ${CMAKE_CURRENT_SOURCE_DIR}/workloads/versioned.c)
  target_compile_definitions(workload_${name} PRIVATE NAME=${name})
endforeach()
foreach(w blip churn pid_reuse evil_name)
  lcpi_workload(${w} ${CMAKE_CURRENT_SOURCE_DIR}/workloads/${w}.c)
endforeach()
target_link_options(workload_blip PRIVATE -static)

foreach(t reliability churn load)
  lcpi_catch_test(${t}_test ${CMAKE_CURRENT_SOURCE_DIR}/${t}_test.cpp)
  target_link_libraries(${t}_test PRIVATE lcpiprofile Catch2::Catch2)
  target_include_directories(${t}_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_compile_definitions(${t}_test PRIVATE
    LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
    LCPIPROF_PATH="$<TARGET_FILE:lcpiprof>"
    WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
  add_dependencies(${t}_test lcpid lcpictl lcpiprof workload_shares workload_tiny
    workload_reuse_a workload_reuse_b workload_replaced_v1 workload_replaced_v2
    workload_blip workload_churn workload_pid_reuse workload_evil_name workload_sled)
  # One CTest entry per file and speed (catch_discover_tests cannot pass a
  # list of labels through PROPERTIES: only the first would stick).
  # The load test's two lengths differ only in duration: a tree runs one,
  # the gcc tree the longer one (slow, scale) and the sanitizer tree, which
  # leaves scale tests out, the shorter one.
  if(t STREQUAL "load" AND NOT LCPI_SANITIZE)
    continue()
  endif()
  add_test(NAME "reliability: ${t}" COMMAND ${t}_test "~[slow]")
  set_tests_properties("reliability: ${t}" PROPERTIES
    LABELS "integration;root;reliability" RUN_SERIAL TRUE TIMEOUT 900)
endforeach()
foreach(t churn load)
  add_test(NAME "reliability: ${t} (slow)" COMMAND ${t}_test "[slow]")
  set_tests_properties("reliability: ${t} (slow)" PROPERTIES
    LABELS "integration;root;reliability;slow;scale" RUN_SERIAL TRUE TIMEOUT 1800)
endforeach()
