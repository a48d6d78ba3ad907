# Where lcpid reads images from (needs root): programs run from a private
# mount namespace, and programs deleted after they ran. The namespace
# workloads have no build-id, so lcpid must find and check the file itself
# (device and inode) rather than take the kernel's build-id.
foreach(variant nobid alt)
  add_executable(workload_shares_${variant} ${CMAKE_CURRENT_SOURCE_DIR}/workloads/shares.c)
  set_target_properties(workload_shares_${variant} PROPERTIES OUTPUT_NAME shares_${variant}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/workloads)
  target_compile_options(workload_shares_${variant} PRIVATE -O1 -g -fno-inline)
  target_link_options(workload_shares_${variant} PRIVATE -Wl,--build-id=none)
  if(LCPI_SANITIZE)
    target_compile_options(workload_shares_${variant} PRIVATE -fno-sanitize=all)
    target_link_options(workload_shares_${variant} PRIVATE -fno-sanitize=all)
  endif()
endforeach()
target_compile_definitions(workload_shares_alt PRIVATE SHARES_ALT)

lcpi_catch_test(images_test ${CMAKE_CURRENT_SOURCE_DIR}/images_test.cpp)
target_link_libraries(images_test PRIVATE lcpiprofile Catch2::Catch2)
target_include_directories(images_test PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(images_test PRIVATE
  LCPID_PATH="$<TARGET_FILE:lcpid>" LCPICTL_PATH="$<TARGET_FILE:lcpictl>"
  LCPIPROF_PATH="$<TARGET_FILE:lcpiprof>" LCPILIST_PATH="$<TARGET_FILE:lcpilist>"
  WORKLOAD_DIR="${CMAKE_CURRENT_BINARY_DIR}/workloads")
add_dependencies(images_test lcpid lcpictl lcpiprof lcpilist workload_shares
  workload_shares_nobid workload_shares_alt workload_tiny)
catch_discover_tests(images_test TEST_PREFIX "images: " EXTRA_ARGS --warn NoTests
  PROPERTIES LABELS integration RUN_SERIAL TRUE)
