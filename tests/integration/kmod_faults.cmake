# kmod_faults.cmake - fault tests of lcpi.ko in a QEMU guest (labels kmod,
# slow), through run-guest.sh as in kmod.cmake (whose lcpi_kmod_test()
# function and variables these use: CMake includes the integration files in
# name order, kmod.cmake first). The checker is tests/kmod/lcpi_kmod_faults.cpp;
# the arm64 guest tests (kmod_arm64.cmake) use it too.
add_executable(lcpi_kmod_faults ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_kmod_faults.cpp)
target_include_directories(lcpi_kmod_faults PRIVATE ${CMAKE_SOURCE_DIR}/kmod/include)
target_link_libraries(lcpi_kmod_faults PRIVATE Threads::Threads)

# The x86-64 fault scripts are parts of kmod.basics (kmod.cmake), which
# shares one boot per kernel among the short guest tests:
# (a) faults-kill-daemon.sh: lcpid wedged then SIGKILLed while sampling:
#     drops counted, nothing wedges
# (b) faults-unload-open.sh: rmmod with the device open: EBUSY, then
#     unloads after close
# (c) faults-max-rate.sh: the highest rate: throttled or drops counted,
#     guest responsive
# (d) faults-ioctl.sh: every ioctl with hostile arguments: no oops, device
#     works after
