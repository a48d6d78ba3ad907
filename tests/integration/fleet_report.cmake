# lcpiprof --fleet over two clickhouse-server shards (a Distributed table):
# two lcpid hosts shipped one to each shard; per image and per procedure the
# fleet report equals the two local reports summed, counts and names; a
# label filter keeps exactly one unit's processes; lcpidiff --fleet's two
# sides are lcpiprof --fleet's over two time ranges. Label "fleet". Skipped
# (77) without clickhouse-server or root.
add_test(NAME fleet-report
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fleet_report.sh $<TARGET_FILE:lcpiprof> $<TARGET_FILE:lcpi-ship>
          $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl> $<TARGET_FILE:workload_tiny>
          $<TARGET_FILE:lcpidiff>)
set_tests_properties(fleet-report PROPERTIES
  LABELS "integration;root;fleet" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 180)
