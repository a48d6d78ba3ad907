# kmod_faults.cmake - fault tests of lcpi.ko in a QEMU guest (labels kmod,
# slow), through run-guest.sh as in kmod.cmake (whose lcpi_kmod_test()
# function and variables these use: CMake includes the integration files in
# name order, kmod.cmake first). The checker is tests/kmod/lcpi_kmod_faults.cpp;
# each test boots its own guest and takes well under 3 minutes under TCG,
# but the two short ones, which share kmod.basics's boot.
add_executable(lcpi_kmod_faults ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_kmod_faults.cpp)
target_include_directories(lcpi_kmod_faults PRIVATE ${CMAKE_SOURCE_DIR}/kmod/include)
target_link_libraries(lcpi_kmod_faults PRIVATE Threads::Threads)

# (a) lcpid wedged then SIGKILLed while sampling: drops counted, nothing wedges
lcpi_kmod_test(faults.kill_daemon 170
  -- ${CMAKE_SOURCE_DIR}/tests/kmod/faults-kill-daemon.sh $<TARGET_FILE:lcpi_kmod_faults>
     kill-daemon $<TARGET_FILE:lcpid>)
# (b) rmmod with the device open: EBUSY, then unloads after close
# (faults-unload-open.sh: a part of kmod.basics, kmod.cmake)
# (c) the highest rate: throttled or drops counted, guest responsive
lcpi_kmod_test(faults.max_rate 170
  -- ${CMAKE_SOURCE_DIR}/tests/kmod/faults-max-rate.sh $<TARGET_FILE:lcpi_kmod_faults>)
# (d) every ioctl with hostile arguments: no oops, device works after
# (faults-ioctl.sh: a part of kmod.basics, kmod.cmake)
