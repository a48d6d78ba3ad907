# kmod.cmake - tests of lcpi.ko in a QEMU guest (label "kmod"), through
# scripts/qemu/run-guest.sh: it builds the module against the kernel's
# headers (the installed Debian 6.1 ones, or Debian 13's 6.12 from a cache),
# boots that kernel under TCG with the host's / shared read-only, and runs a
# guest script from tests/kmod/. Each test boots its own guest (the short
# ones share one: kmod.basics); they run one at a time (TCG needs both
# cores). A host without the kernel image, headers or qemu skips them
# (exit 77).
add_executable(lcpi_kmod_check ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_kmod_check.cpp)
target_include_directories(lcpi_kmod_check PRIVATE ${CMAKE_SOURCE_DIR}/kmod/include)

set(LCPI_RUN_GUEST ${CMAKE_SOURCE_DIR}/scripts/qemu/run-guest.sh)
set(LCPI_QEMU_BUILD ${CMAKE_BINARY_DIR}/qemu)

# One guest test: run-guest.sh with ARGN (its options, then -- COMMAND).
function(lcpi_kmod_guest_test test timeout)
  math(EXPR ctest_timeout "${timeout} + 180")  # the harness kills the guest first; a
                                               # first run also fetches a kernel
  add_test(NAME ${test}
    COMMAND ${LCPI_RUN_GUEST} --timeout ${timeout} --dmesg --build-dir ${LCPI_QEMU_BUILD}
            ${ARGN})
  set_tests_properties(${test} PROPERTIES
    LABELS "kmod;integration;slow"
    RUN_SERIAL TRUE
    SKIP_RETURN_CODE 77
    TIMEOUT ${ctest_timeout})
endfunction()

# An x86-64 guest test, run twice: kmod.NAME on this host's Debian 12 kernel
# (6.1) and kmod.6.12.NAME on Debian 13's (trixie), which run-guest.sh
# --suite fetches into a cache outside the build (scripts/qemu/fetch-kernel.sh;
# ~30 s and 500 MB the first time). The module must build warning-free and
# pass on both.
function(lcpi_kmod_test name timeout)
  lcpi_kmod_guest_test(kmod.${name} ${timeout} ${ARGN})
  lcpi_kmod_guest_test(kmod.6.12.${name} ${timeout} --suite trixie ${ARGN})
endfunction()

# The short tests share one boot per kernel (tests/kmod/one_boot.sh: each
# part with the module freshly loaded, every part run, each ending with its
# own dmesg check; a failed part is named in the log as
# "one-boot: PART FAILED"). Parts, in order:
#  (a) reconcile.sh: sample, flush, read, reconcile counts with statistics,
#      ABI sizes;
#  (b) badargs.sh: malformed requests fail with their errno; privileges;
#      single opener;
#  (b2) fallback.sh: the cpu-clock fallback only where the PMU lacks an
#      event, probed on every CPU (errors injected through the module's
#      inject_* parameters);
#  (b3) source.sh: KmodSource (libprofile) against the real module: every
#      counted sample reaches the sink;
#  (b4) events.sh: lcpid with both sources on a host without a PMU:
#      --events cycles,imiss samples cycles as cpu-clock (a labelled
#      fallback) and refuses imiss by name; --events imiss,dmiss fails;
#  (b5) the fault scripts: a killed reader, hostile ioctls, unloading
#      while open, the highest rate (kmod_faults.cmake says what each does);
#  (c) stress.sh: 50 x load/sample/hotplug/flush/stop/unload, reader gone
#      every 5th; clean dmesg (its own boot until 2026-11-29: 8-10 s more).
add_executable(lcpi_kmod_source_check ${CMAKE_SOURCE_DIR}/tests/kmod/kmod_source_check.cpp)
target_link_libraries(lcpi_kmod_source_check PRIVATE lcpiprofile)
set(kmod_dir ${CMAKE_SOURCE_DIR}/tests/kmod)
lcpi_kmod_test(basics 600
  -- ${kmod_dir}/one_boot.sh
     ${kmod_dir}/reconcile.sh $<TARGET_FILE:lcpi_kmod_check>
  :: ${kmod_dir}/badargs.sh $<TARGET_FILE:lcpi_kmod_check>
  :: ${kmod_dir}/fallback.sh $<TARGET_FILE:lcpi_kmod_check>
  :: ${kmod_dir}/source.sh $<TARGET_FILE:lcpi_kmod_source_check>
  :: ${kmod_dir}/events.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
  :: ${kmod_dir}/faults-kill-daemon.sh $<TARGET_FILE:lcpi_kmod_faults> kill-daemon $<TARGET_FILE:lcpid>
  :: ${kmod_dir}/faults-ioctl.sh $<TARGET_FILE:lcpi_kmod_faults>
  :: ${kmod_dir}/faults-unload-open.sh $<TARGET_FILE:lcpi_kmod_faults>
  :: ${kmod_dir}/faults-max-rate.sh $<TARGET_FILE:lcpi_kmod_faults>
  :: ${kmod_dir}/stress.sh $<TARGET_FILE:lcpi_kmod_check> 50)

# (c0) dmesg-check.sh, every guest script's last step, over fixture logs
# on the host: each report it must catch, and "DEBUG" that is no BUG
add_test(NAME kmod.harness.dmesg_check
  COMMAND ${CMAKE_SOURCE_DIR}/tests/kmod/dmesg_check_test.sh)
set_tests_properties(kmod.harness.dmesg_check PROPERTIES LABELS "kmod;integration")

# (c1) the harness: a guest kernel that dies while booting, before /init
# ran, is booted once more (Debian 13's 6.12 sometimes does under TCG);
# nothing later is retried. On the host; one guest kernel is enough.
add_test(NAME kmod.harness.boot_retry
  COMMAND ${CMAKE_SOURCE_DIR}/tests/kmod/boot_retry.sh ${LCPI_RUN_GUEST} ${LCPI_QEMU_BUILD})
set_tests_properties(kmod.harness.boot_retry PROPERTIES
  LABELS "kmod;integration;slow" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 600)

# (c2) per-CPU memory follows the online CPUs (2 online of 4 possible) and
# an offline CPU's counts still reconcile
lcpi_kmod_test(memory 150 --smp 2,maxcpus=4
  -- ${CMAKE_SOURCE_DIR}/tests/kmod/memory.sh $<TARGET_FILE:lcpi_kmod_check>)

# lcpid --source kmod in the guest: the daemon's known-shares, storm,
# accounting and throttle tests give the same answers as the perf source on
# the host (the module counts the events perf throttles), and the cost
# budget's governor lowers the module's period (budget_test); call stacks
# through the perf event beside the module give stacks.sh's known answers
# with frame pointers and in the kernel (its parts 1 and 2; stacks.cmake
# builds their workloads). On 6.1 only, the
# longest guest test (about 160 s): what it adds is lcpid's, above the
# module, and lcpid meets 6.12's module in kmod.6.12.basics (events.sh,
# source.sh).
lcpi_kmod_guest_test(kmod.daemon 560
  -- ${CMAKE_SOURCE_DIR}/tests/kmod/daemon.sh $<TARGET_FILE:daemon_test>
     $<TARGET_FILE:budget_test>
     ${CMAKE_CURRENT_SOURCE_DIR}/stacks.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
     $<TARGET_FILE:lcpiprof> $<TARGET_FILE:workload_callers_6040>
     $<TARGET_FILE:workload_pipe_reads>)

# Kernel code loaded after lcpid started: Debian's sha3_generic, loaded and
# kept busy through AF_ALG, is named (crypto_sha3_update on [sha3_generic]) after lcpid
# re-reads kallsyms, not filed on the unresolved [kernel] image. On 6.1
# only: Debian 13's 6.12 builds sha3_generic in, and its guest sees only the
# host's /lib/modules.
lcpi_kmod_guest_test(kmod.late-module 120
  -- ${CMAKE_SOURCE_DIR}/tests/kmod/late_module.sh $<TARGET_FILE:lcpid> $<TARGET_FILE:lcpictl>
     $<TARGET_FILE:lcpiprof>)
