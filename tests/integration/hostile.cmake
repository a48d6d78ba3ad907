# The standing adversary (hostile_test.cpp, hostile_scenario.h; as root on
# this host's perf events; the user is nobody): each attack alone, then all
# at once, beside a victim of known shares: a program on a file system that
# stops answering (hang_fs, FUSE), one that leaves a FIFO at its own path
# (fifo_swap), 2 GB programs without build-id, control clients that dribble
# bytes, 150,000 executable mappings and forks (map_flood), a JIT whose
# perf map names a range the store cannot hold (perf_map_spin) and files of
# 30,000 program headers over the whole file, mapped executable. lcpid keeps
# sampling, answers status, ends on SIGTERM with everything flushed, and
# the victim's shares land within 3 points.

lcpi_workload(late_map ${CMAKE_CURRENT_SOURCE_DIR}/workloads/late_map.c)
lcpi_workload(perf_map_spin ${CMAKE_CURRENT_SOURCE_DIR}/workloads/perf_map_spin.c)
# Without a build-id, so that lcpid has to open and identify the file.
lcpi_workload(fifo_swap ${CMAKE_CURRENT_SOURCE_DIR}/workloads/fifo_swap.c)
target_link_options(workload_fifo_swap PRIVATE -Wl,--build-id=none)

pkg_check_modules(FUSE3 IMPORTED_TARGET fuse3)
if(NOT FUSE3_FOUND)
  add_test(NAME "hostile: hang_fs" COMMAND sh -c
    "echo 'no libfuse3 (libfuse3-dev, fuse3): scripts/setup.sh installs them' >&2; exit 1")
  set_tests_properties("hostile: hang_fs" PROPERTIES LABELS "integration;root")
  return()
endif()
add_executable(workload_hang_fs ${CMAKE_CURRENT_SOURCE_DIR}/workloads/hang_fs.c)
set_target_properties(workload_hang_fs PROPERTIES OUTPUT_NAME hang_fs
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/workloads)
target_link_libraries(workload_hang_fs PRIVATE PkgConfig::FUSE3)
if(LCPI_SANITIZE)
  target_compile_options(workload_hang_fs PRIVATE -fno-sanitize=all)
  target_link_options(workload_hang_fs PRIVATE -fno-sanitize=all)
endif()

lcpi_catch_test(hostile_test ${CMAKE_CURRENT_SOURCE_DIR}/hostile_test.cpp
  ${CMAKE_CURRENT_SOURCE_DIR}/hostile_scenario.cpp)
target_link_libraries(hostile_test PRIVATE lcpiprofile Catch2::Catch2)
# tests/unit for image/crafted_elf.h (the whole-file program headers).
target_include_directories(hostile_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
  ${CMAKE_SOURCE_DIR}/tests/unit)
target_compile_definitions(hostile_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(hostile_test lcpid lcpictl workload_shares workload_shares_nobid workload_tiny
  workload_fifo_swap workload_late_map workload_perf_map_spin workload_map_flood workload_hang_fs)
# The sanitizer tree runs the attacks together only: "all attacks at once"
# checks each attack reached lcpid, as each one alone does, so every path
# runs sanitized; alone, each is 14-17 s more of that tree's tests (110 s
# for the seven). The gcc tree runs each alone too, where a victim's shares
# under one attack are measured apart.
if(LCPI_SANITIZE)
  set(hostile_cases "all attacks at once*")
else()
  set(hostile_cases "")
endif()
# One label only: catch_discover_tests passes PROPERTIES on flat, so a
# list would be split (and RUN_SERIAL lost with it, as it once was here).
catch_discover_tests(hostile_test TEST_SPEC ${hostile_cases} TEST_PREFIX "hostile: "
  EXTRA_ARGS --warn NoTests PROPERTIES LABELS integration RUN_SERIAL TRUE)
