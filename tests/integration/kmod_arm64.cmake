# kmod_arm64.cmake - lcpi.ko on a real PMU: tests in an arm64 QEMU guest
# (labels kmod, integration, slow, and debug-kernel for those on the debug
# kernel, set at the end; names kmod.arm64.*), through
# `run-guest.sh --arch arm64` with kmod.cmake's lcpi_kmod_guest_test() (CMake
# includes the integration files in name order, kmod.cmake first). QEMU
# emulates an Arm PMUv3 there, so hardware cycles really overflow and
# interrupt; no x86 guest here has a PMU. The guest cannot run this host's
# x86 programs: what it runs is built here, static, for arm64, with
# aarch64-linux-gnu-g++ (the checkers need only kmod/include). A host
# without the cross compiler or qemu-system-aarch64 skips (exit 77);
# run-guest.sh fetches the kernel into ${LCPI_CACHE:-~/.cache/lcpi} once.

find_program(LCPI_AARCH64_CXX aarch64-linux-gnu-g++)
find_program(LCPI_AARCH64_CC aarch64-linux-gnu-gcc)
find_program(LCPI_AARCH64_NM aarch64-linux-gnu-nm)
set(LCPI_ARM64_DIR ${CMAKE_BINARY_DIR}/arm64)

# The shares and storm checkers also build for this host (so -Werror covers
# them).
foreach(c lcpi_kmod_shares lcpi_kmod_storm)
  add_executable(${c} ${CMAKE_SOURCE_DIR}/tests/kmod/${c}.cpp)
  target_include_directories(${c} PRIVATE ${CMAKE_SOURCE_DIR}/kmod/include)
endforeach()

# the tests that boot the debug kernel (below: (d), (e), (f))
set(debug_kernel_guests kmod.arm64.nmi kmod.arm64.pinned kmod.arm64.stress
  kmod.arm64.faults.unload_open kmod.arm64.precise)

if(LCPI_AARCH64_CXX AND LCPI_AARCH64_CC AND LCPI_AARCH64_NM)
  set(arm64_warnings -Wall -Wextra)
  if(LCPI_WERROR)
    list(APPEND arm64_warnings -Werror)
  endif()
  set(arm64_checkers lcpi_kmod_check lcpi_kmod_faults lcpi_kmod_shares lcpi_kmod_storm)
  set(arm64_outputs)
  foreach(c ${arm64_checkers})
    add_custom_command(OUTPUT ${LCPI_ARM64_DIR}/${c}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LCPI_ARM64_DIR}
      COMMAND ${LCPI_AARCH64_CXX} -std=c++20 -O2 -static ${arm64_warnings}
              -I${CMAKE_SOURCE_DIR}/kmod/include -o ${LCPI_ARM64_DIR}/${c}
              ${CMAKE_SOURCE_DIR}/tests/kmod/${c}.cpp
      DEPENDS ${CMAKE_SOURCE_DIR}/tests/kmod/${c}.cpp ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_device.h
              ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_nm.h ${CMAKE_SOURCE_DIR}/kmod/include/lcpi_abi.h
      COMMENT "Building ${c} for the arm64 guest (static)"
      VERBATIM)
    list(APPEND arm64_outputs ${LCPI_ARM64_DIR}/${c})
  endforeach()
  # A workload of tests/integration/workloads/, static and non-PIE so the
  # addresses `nm -S` prints here (into NAME.nm) are the ones the guest
  # samples; -O1 keeps its loops apart (noinline) and the same code. ARGN:
  # more compiler and linker flags.
  function(lcpi_arm64_workload name)
    add_custom_command(OUTPUT ${LCPI_ARM64_DIR}/${name} ${LCPI_ARM64_DIR}/${name}.nm
      COMMAND ${CMAKE_COMMAND} -E make_directory ${LCPI_ARM64_DIR}
      COMMAND ${LCPI_AARCH64_CC} -O1 -static -no-pie ${arm64_warnings} ${ARGN}
              -o ${LCPI_ARM64_DIR}/${name} ${CMAKE_SOURCE_DIR}/tests/integration/workloads/${name}.c
      COMMAND sh -c "\"$0\" -S --defined-only \"$1\" >\"$2\""
              ${LCPI_AARCH64_NM} ${LCPI_ARM64_DIR}/${name} ${LCPI_ARM64_DIR}/${name}.nm
      DEPENDS ${CMAKE_SOURCE_DIR}/tests/integration/workloads/${name}.c
      COMMENT "Building the ${name} workload for the arm64 guest (static)"
      VERBATIM)
    set(arm64_outputs ${arm64_outputs} ${LCPI_ARM64_DIR}/${name} ${LCPI_ARM64_DIR}/${name}.nm
        PARENT_SCOPE)
  endfunction()
  # the known shares
  lcpi_arm64_workload(shares)
  # the storm's short-lived process, linked at 256 MiB so its text cannot
  # overlap the checker's (at 4 MiB, where the child runs until exec), its
  # clock read from the counter register (no vDSO pcs); -u has the linker
  # define the bounds of its text, which nm then lists
  lcpi_arm64_workload(tiny -DTINY_COUNTER_CLOCK -Wl,-Ttext-segment=0x10000000
    -Wl,-u,__executable_start -Wl,-u,etext)
  # Multiplexing on a real (emulated) PMU: more cycles counters than it has
  add_custom_command(OUTPUT ${LCPI_ARM64_DIR}/lcpi_multiplex_check
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LCPI_ARM64_DIR}
    COMMAND ${LCPI_AARCH64_CC} -O2 -static ${arm64_warnings}
            -o ${LCPI_ARM64_DIR}/lcpi_multiplex_check
            ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_multiplex_check.c
    DEPENDS ${CMAKE_SOURCE_DIR}/tests/kmod/lcpi_multiplex_check.c
    COMMENT "Building lcpi_multiplex_check for the arm64 guest (static)"
    VERBATIM)
  list(APPEND arm64_outputs ${LCPI_ARM64_DIR}/lcpi_multiplex_check)
  # bench/cost's floor (the perf core's own ring output) for
  # bench/cost/pmu_handler.sh, which compares the PMU interrupt's length
  # with perf's consumer and with lcpi.ko's in the guest (docs/kmod.md)
  add_custom_command(OUTPUT ${LCPI_ARM64_DIR}/lcpi-cost-floor
    COMMAND ${CMAKE_COMMAND} -E make_directory ${LCPI_ARM64_DIR}
    COMMAND ${LCPI_AARCH64_CC} -O2 -static ${arm64_warnings}
            -o ${LCPI_ARM64_DIR}/lcpi-cost-floor ${CMAKE_SOURCE_DIR}/bench/cost/floor.c
    DEPENDS ${CMAKE_SOURCE_DIR}/bench/cost/floor.c
    COMMENT "Building lcpi-cost-floor for the arm64 guest (static)"
    VERBATIM)
  list(APPEND arm64_outputs ${LCPI_ARM64_DIR}/lcpi-cost-floor)
  add_custom_target(lcpi_arm64_guest ALL DEPENDS ${arm64_outputs})

  # (a) the shares workload sampled by hardware cycles (no cpu-clock
  # fallback) lands within 2 points of its known shares
  lcpi_kmod_guest_test(kmod.arm64.shares 150 --arch arm64
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/shares.sh ${LCPI_ARM64_DIR}/lcpi_kmod_shares
       ${LCPI_ARM64_DIR}/shares ${LCPI_ARM64_DIR}/shares.nm)
  # (b) the x86 guest's scripts with the arm64 checkers, where a PMU event
  # (cycles) samples beside cpu-clock: load/sample/hotplug/unload rounds
  # (10, not 50: TCG emulates a whole ISA here), rmmod while open, and the
  # highest rate, here of PMU cycles (cpu-clock's is kmod.faults.max_rate)
  lcpi_kmod_guest_test(kmod.arm64.stress 200 --no-load --arch arm64 --debug
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/stress.sh ${LCPI_ARM64_DIR}/lcpi_kmod_check 10)
  lcpi_kmod_guest_test(kmod.arm64.faults.unload_open 120 --arch arm64 --debug
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/faults-unload-open.sh ${LCPI_ARM64_DIR}/lcpi_kmod_faults)
  lcpi_kmod_guest_test(kmod.arm64.faults.max_rate_cycles 170 --arch arm64
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/faults-max-rate.sh ${LCPI_ARM64_DIR}/lcpi_kmod_faults
       --cycles)
  # the x86 guest's storm and kill-daemon tests need lcpid, an x86 program
  # here: the arm64 checkers play its part. 500 short-lived processes
  # sampled by PMU cycles are attributed by pid and address; the reader,
  # sampling PMU cycles, is wedged and killed, and every sample is accounted
  # exactly (docs/kmod.md says why a checker and not a cross-built lcpid)
  lcpi_kmod_guest_test(kmod.arm64.storm 200 --arch arm64
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/storm.sh ${LCPI_ARM64_DIR}/lcpi_kmod_storm
       ${LCPI_ARM64_DIR}/tiny ${LCPI_ARM64_DIR}/tiny.nm)
  lcpi_kmod_guest_test(kmod.arm64.faults.kill_reader 170 --arch arm64
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/faults-kill-daemon.sh ${LCPI_ARM64_DIR}/lcpi_kmod_faults
       kill-reader --cycles)
  # (c) the PMU multiplexes 12 cycles counters on its 7, and the times
  # lcpid's perf source reads (read_format TOTAL_TIME_ENABLED|RUNNING) show
  # it: running < enabled for each, none starved. The module is not needed.
  lcpi_kmod_guest_test(kmod.arm64.multiplex 90 --no-load --arch arm64
    -- ${LCPI_ARM64_DIR}/lcpi_multiplex_check)
  # the module asks for the highest precise_ip the PMU accepts (3 down to
  # 0) and GET_INFO reports it; the emulated PMUv3 accepts every level, so
  # the module's inject_precise refuses levels to exercise the lowering
  lcpi_kmod_guest_test(kmod.arm64.precise 90 --arch arm64 --debug
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/precise.sh ${LCPI_ARM64_DIR}/lcpi_kmod_check)
  # a user's pinned cycles counters take every counter of the PMU: the
  # module's unpinned cycles event is created but never runs, and START
  # says so (GET_INFO's LCPI_EVENT_INFO_NOT_RUNNING) instead of sampling
  # nothing silently

  # (d) the handler in NMI context: an arm64 kernel with pseudo-NMIs, built
  # once into the cache by build-nmi-kernel.sh (~10 min on 2 cores the first
  # time: a test of its own, the fixture of the tests that boot it, so their
  # timeouts leave it out), takes the PMU overflow as an NMI; the shares
  # still land within 2 points and every handler run was an NMI
  add_test(NAME kmod.arm64.nmi.kernel COMMAND ${CMAKE_SOURCE_DIR}/scripts/qemu/build-nmi-kernel.sh)
  # Label debug-kernel (at the end): scripts/test.sh, run whole as CI runs
  # it, builds this kernel in the background (at SCHED_IDLE, from its
  # start) and runs the tests with this label in a second ctest pass, after
  # every other test, so that the build has the CPU they and the builds
  # leave idle and this test waits only for what is left (docs/kmod.md).
  set_tests_properties(kmod.arm64.nmi.kernel PROPERTIES
    LABELS "kmod;integration;slow" RUN_SERIAL TRUE SKIP_RETURN_CODE 77 TIMEOUT 2400
    FIXTURES_SETUP lcpi_nmi_kernel)
  lcpi_kmod_guest_test(kmod.arm64.nmi 200 --arch arm64 --nmi
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/nmi.sh ${LCPI_ARM64_DIR}/lcpi_kmod_shares
       ${LCPI_ARM64_DIR}/shares ${LCPI_ARM64_DIR}/shares.nm)
  # (e) on the same kernel, under lockdep, KASAN and UBSAN: a user's pinned
  # cycles counters take every counter of the PMU; the module's unpinned
  # cycles event is created but never runs, and START says so (GET_INFO's
  # LCPI_EVENT_INFO_NOT_RUNNING) instead of sampling nothing silently
  lcpi_kmod_guest_test(kmod.arm64.pinned 120 --arch arm64 --nmi
    -- ${CMAKE_SOURCE_DIR}/tests/kmod/pinned.sh ${LCPI_ARM64_DIR}/lcpi_kmod_check)
  # (f) the module's other paths on the same debug kernel, booted without
  # pseudo-NMIs (--debug: the PMU's overflow an ordinary interrupt, as on
  # Debian's kernel), so lockdep, KASAN and UBSAN watch load/sample/
  # hotplug/unload rounds, unload while open and the precise_ip lowering
  # (tests/kmod/dmesg-check.sh ends each script): +61 s in all (docs/kmod.md).
  # Not moved (each timed out there, 2026-11-26): kmod.arm64.storm (500
  # processes; a fork+exec takes ~0.3 s on the debug kernel), and
  # .faults.max_rate_cycles and .faults.kill_reader, PMU cycles at the
  # 10,000 floor, where an interrupt on the debug kernel outlasts the period
  # and the guest's perf_cpu_time_max_percent=0 keeps perf from lowering the
  # rate (kill_reader's log: rcu_sched stalls on CPU 0). kmod.arm64.shares
  # stays on Debian's kernel (the same check runs on the debug kernel as
  # kmod.arm64.nmi); kmod.arm64.multiplex loads no module.
  # (d), (e) and (f) boot the kernel kmod.arm64.nmi.kernel builds
  set_tests_properties(${debug_kernel_guests} PROPERTIES FIXTURES_REQUIRED lcpi_nmi_kernel)
else()
  foreach(t arm64.shares arm64.stress arm64.faults.unload_open arm64.faults.max_rate_cycles
            arm64.multiplex arm64.precise arm64.pinned arm64.storm arm64.faults.kill_reader arm64.nmi.kernel arm64.nmi)
    add_test(NAME kmod.${t} COMMAND sh -c
      "echo 'no aarch64-linux-gnu-g++/gcc/nm (g++-aarch64-linux-gnu): scripts/setup.sh installs it' >&2; exit 77")
    set_tests_properties(kmod.${t} PROPERTIES LABELS "kmod;integration;slow" SKIP_RETURN_CODE 77)
  endforeach()
endif()
# the tests that boot the debug kernel, and the test that builds it
set_property(TEST kmod.arm64.nmi.kernel ${debug_kernel_guests} APPEND PROPERTY LABELS debug-kernel)
