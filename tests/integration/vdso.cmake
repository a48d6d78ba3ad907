# The vDSO named: a program that asks the time in a loop spends most of its
# samples in [vdso], and lcpiprof -p names the function (root: system-wide
# perf events).
lcpi_workload(clock_loop ${CMAKE_CURRENT_LIST_DIR}/workloads/clock_loop.c)
add_test(NAME vdso-named
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/vdso.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof> $<TARGET_FILE:workload_clock_loop>)
set_tests_properties(vdso-named PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
