# The soak test (issue 13): lcpid with a window every 2 s, 40 s of retention,
# a 6 MiB size cap (the kernel's symbols take 5) and 40 pids per window, for
# 100 s (two and a half retention spans: its last third is steady state)
# over hundreds of distinct binaries started in a loop: size and RSS level off, retention
# drops and counts, every sample is accounted for, --since/--until agree with
# the windows. Writes soak.csv and soak.png under its build folder (root,
# gnuplot-nox). bench/results/soak.md has a longer run.
add_test(NAME soak
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/soak.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof> $<TARGET_FILE:workload_blip> ${CMAKE_CURRENT_BINARY_DIR}/soak 100)
set_tests_properties(soak PROPERTIES
  LABELS "integration;root;slow;scale" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 300)
