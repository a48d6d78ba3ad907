# What one user's mappings cost lcpid (mapping_flood_test.cpp, as root on
# this host's perf events; the user is nobody): a process maps executable
# pages at hundreds of thousands of addresses and forks sleeping children;
# lcpid's RSS grows by a bounded amount, and what it refused is counted.

lcpi_workload(map_flood ${CMAKE_CURRENT_SOURCE_DIR}/workloads/map_flood.c)

lcpi_catch_test(mapping_flood_test ${CMAKE_CURRENT_SOURCE_DIR}/mapping_flood_test.cpp)
target_link_libraries(mapping_flood_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(mapping_flood_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(mapping_flood_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(mapping_flood_test lcpid lcpictl workload_map_flood)
add_test(NAME "hostile: mapping flood" COMMAND mapping_flood_test)
set_tests_properties("hostile: mapping flood" PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE TIMEOUT 120)
