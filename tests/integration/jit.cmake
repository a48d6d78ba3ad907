# JIT code named by the runtime itself: Debian's node runs a hot JavaScript
# function, with --perf-basic-prof (perf's map file, jit-node) and with
# --perf-prof (a jitdump, jit-node.jitdump); lcpiprof -p names it on node's
# JIT image (root: lcpid's perf source samples the whole machine).
foreach(mode map jitdump)
  set(name jit-node)
  if(mode STREQUAL "jitdump")
    set(name jit-node.jitdump)
  endif()
  add_test(NAME ${name}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/jit_node.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
            $<TARGET_FILE:lcpiprof> ${mode})
  set_tests_properties(${name} PROPERTIES
    LABELS "integration;interop;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
endforeach()
