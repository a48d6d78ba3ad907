# JIT code named from perf's map file: Debian's node with --perf-basic-prof
# runs a hot JavaScript function; lcpiprof -p names it on node's JIT image
# (root: lcpid's perf source samples the whole machine).
add_test(NAME jit-node
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/jit_node.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof>)
set_tests_properties(jit-node PROPERTIES
  LABELS "integration;interop;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
