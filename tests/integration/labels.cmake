# Labels end to end: a workload run in a cgroup of its own (a systemd scope
# where systemd runs, else a cgroup made by hand as a unit's would be) and
# the same program outside it; lcpid reads each one's cgroup at its exec, and
# lcpiprof --label unit=... keeps exactly the first, --by unit sums it (root:
# system-wide perf events, and moving a process between cgroups).
add_test(NAME labels-unit
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/labels.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
          $<TARGET_FILE:lcpiprof> $<TARGET_FILE:workload_tiny>)
set_tests_properties(labels-unit PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
