# Call stacks (perf source, frame pointers): a known answer, leaf() called
# 60 % through mid_a and 40 % through mid_b, must come out of lcpiprof
# --callers leaf within 3 points; a pipe read's kernel stack must name the
# system call entry (root: system-wide perf events). The build without
# frame pointers needs the DWARF unwinder (issue 29's next piece).
lcpi_workload(callers_6040 ${CMAKE_CURRENT_LIST_DIR}/workloads/callers_6040.c)
target_compile_options(workload_callers_6040 PRIVATE -fno-omit-frame-pointer
                       -fno-optimize-sibling-calls)
lcpi_workload(pipe_reads ${CMAKE_CURRENT_LIST_DIR}/workloads/pipe_reads.c)
add_test(NAME stacks-known-answer
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/stacks.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof> $<TARGET_FILE:workload_callers_6040>
          $<TARGET_FILE:workload_pipe_reads>)
set_tests_properties(stacks-known-answer PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
