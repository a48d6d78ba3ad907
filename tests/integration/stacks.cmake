# Call stacks (perf source, frame pointers): a known answer, leaf() called
# 60 % through mid_a and 40 % through mid_b, must come out of lcpiprof
# --callers leaf within 3 points; a pipe read's kernel stack must name the
# system call entry (root: system-wide perf events). The same program
# built without frame pointers (-O2 -fomit-frame-pointer) must give the
# same answer through the DWARF unwinder, and stacks through libc's qsort
# (Debian's libc keeps no frame pointers) must reach main.
lcpi_workload(callers_6040 ${CMAKE_CURRENT_LIST_DIR}/workloads/callers_6040.c)
target_compile_options(workload_callers_6040 PRIVATE -fno-omit-frame-pointer
                       -fno-optimize-sibling-calls)
lcpi_workload(callers_6040_nofp ${CMAKE_CURRENT_LIST_DIR}/workloads/callers_6040.c)
target_compile_options(workload_callers_6040_nofp PRIVATE -O2 -fomit-frame-pointer
                       -fno-optimize-sibling-calls)
lcpi_workload(qsort_calls ${CMAKE_CURRENT_LIST_DIR}/workloads/qsort_calls.c)
target_compile_options(workload_qsort_calls PRIVATE -O2 -fomit-frame-pointer)
lcpi_workload(pipe_reads ${CMAKE_CURRENT_LIST_DIR}/workloads/pipe_reads.c)
add_test(NAME stacks-known-answer
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stacks.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof> $<TARGET_FILE:workload_callers_6040>
          $<TARGET_FILE:workload_pipe_reads> $<TARGET_FILE:workload_callers_6040_nofp>
          $<TARGET_FILE:workload_qsort_calls>)
set_tests_properties(stacks-known-answer PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
# Agreement with `perf record --call-graph dwarf` on Debian's python3
# (stripped of .symtab, no frame pointers): the callers of
# _PyEval_EvalFrameDefault within 3 points (python_stacks_compare.py says
# why), both tools sampling the same 15-second run (~35 s in all).
add_test(NAME stacks-python-perf-agreement
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/python_stacks.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof> ${CMAKE_CURRENT_LIST_DIR}/workloads/python_callers.py)
set_tests_properties(stacks-python-perf-agreement PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
