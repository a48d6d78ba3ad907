# lcpi-ship into a clickhouse-server of the test's own (Debian 12's 18.16, a
# child process on loopback ports): a real lcpid database with closed
# windows (root: system-wide perf events) and a program whose name holds a
# tab, a newline, a backslash and 0xff; shipped, the counts per image and
# event in ClickHouse equal the database's exactly; shipped again, killed
# after its rows and after its commit, and with the server stopped and
# restarted mid-ship, no window arrives twice. Skipped (77) without
# clickhouse-server or root.
add_test(NAME fleet-ship
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/fleet_ship.sh $<TARGET_FILE:lcpi-ship> $<TARGET_FILE:lcpid>
          $<TARGET_FILE:lcpictl> $<TARGET_FILE:workload_tiny>)
set_tests_properties(fleet-ship PROPERTIES
  LABELS "integration;root" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 120)
