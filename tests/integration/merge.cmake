# Merges off the sampling thread (issue 13, item 5): lcpid keeps draining the
# perf rings while a batch of a million entries is written, and a cap on the
# pending entries starts a merge early. As root on this host's perf events.
lcpi_workload(sled ${CMAKE_CURRENT_SOURCE_DIR}/workloads/sled.c)
# Three more sleds that are images of their own (sled.c says why).
foreach(i 1 2 3)
  lcpi_workload(sled${i} ${CMAKE_CURRENT_SOURCE_DIR}/workloads/sled.c)
  target_compile_definitions(workload_sled${i} PRIVATE SLED_VARIANT=${i})
endforeach()

lcpi_catch_test(merge_test ${CMAKE_CURRENT_SOURCE_DIR}/merge_test.cpp)
target_link_libraries(merge_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(merge_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
# The big merge: a million entries (issue 13), 300,000 under the sanitizers,
# whose lcpid is slower to gather and to write them.
if(LCPI_SANITIZE)
  set(LCPI_MERGE_ENTRIES 300000)
else()
  set(LCPI_MERGE_ENTRIES 1000000)
endif()
target_compile_definitions(merge_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads" MERGE_ENTRIES=${LCPI_MERGE_ENTRIES}ULL)
add_dependencies(merge_test lcpid lcpictl workload_sled workload_sled1 workload_sled2
  workload_sled3)
add_test(NAME "daemon: merge" COMMAND merge_test "~[slow]")
set_tests_properties("daemon: merge" PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE TIMEOUT 300)
add_test(NAME "daemon: merge (slow)" COMMAND merge_test "[slow]")
set_tests_properties("daemon: merge (slow)" PROPERTIES
  LABELS "integration;root;slow;scale" RUN_SERIAL TRUE TIMEOUT 900)
