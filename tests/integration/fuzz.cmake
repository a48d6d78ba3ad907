# fuzz.cmake - the fuzz targets of fuzz/ as tests.
#
# fuzz.<target>.replay (labels unit;fuzz, in the default suite): every kept
#   input of every fuzz/corpus/*/ (seeds and the crashers found so far) runs
#   once through the target. Under gcc the targets are replay executables,
#   under clang libFuzzer binaries (-runs=0 executes the corpus and exits).
# fuzz.<target>.run (labels slow;fuzz): a bounded 30 s fuzzing run (20 s for
#   fuzz_jit_merge, 10 s for fuzz_cgroup_label), two at a time beside other tests, in a
#   libFuzzer tree only: the sanitizer tree, build-san/, which
#   scripts/test-sanitize.sh builds and tests (so CI runs them). New inputs
#   go to <build>/fuzz/work/<target>, crashers to <build>/fuzz/artifacts/.
#   A crash fails the test and leaves the input; scripts/fuzz.sh runs longer.

# A sanitizer build halts on any report by itself (-fno-sanitize-recover);
# the options are scripts/sanitize-env.sh's (CI) or the caller's. The fuzz
# targets append one thing, so a hand-run `ctest -R fuzz` has it too: the
# suppression of reports raised inside libdw itself (fuzz/asan.supp, a
# known elfutils bug, not lcpi's).
set(LCPI_FUZZ_ENV
  "ASAN_OPTIONS=string_append::suppressions=${CMAKE_SOURCE_DIR}/fuzz/asan.supp")
file(GLOB LCPI_FUZZ_CORPORA LIST_DIRECTORIES true ${CMAKE_SOURCE_DIR}/fuzz/corpus/*)

foreach(target fuzz_elf_image fuzz_kmod_buffer fuzz_perf_map fuzz_profile_db fuzz_jit_merge
               fuzz_cgroup_label)
  add_test(NAME fuzz.${target}.replay
    COMMAND $<TARGET_FILE:${target}> -runs=0 ${LCPI_FUZZ_CORPORA})
  set_tests_properties(fuzz.${target}.replay PROPERTIES LABELS "unit;fuzz" TIMEOUT 120
    ENVIRONMENT_MODIFICATION "${LCPI_FUZZ_ENV}")

  if(LCPI_LIBFUZZER)
    set(work ${CMAKE_BINARY_DIR}/fuzz/work/${target})
    set(artifacts ${CMAKE_BINARY_DIR}/fuzz/artifacts)
    file(MAKE_DIRECTORY ${work} ${artifacts})
    # 30 s each; the whole-path target (fuzz_jit_merge) 20 s: CI time is
    # tight, and scripts/fuzz.sh runs longer. A run uses one core and times
    # nothing, so it need not run alone (RUN_SERIAL kept a core idle).
    set(seconds 30)
    if(target STREQUAL "fuzz_jit_merge")
      set(seconds 20)
    elseif(target STREQUAL "fuzz_cgroup_label")
      set(seconds 10)  # a small parser of text: 10 s covers it
    endif()
    add_test(NAME fuzz.${target}.run
      COMMAND $<TARGET_FILE:${target}> -max_total_time=${seconds} -timeout=10 -rss_limit_mb=2048
              -print_final_stats=1 -artifact_prefix=${artifacts}/${target}-
              ${work} ${CMAKE_SOURCE_DIR}/fuzz/corpus/${target})
    set_tests_properties(fuzz.${target}.run PROPERTIES
      LABELS "slow;fuzz" TIMEOUT 1800 ENVIRONMENT_MODIFICATION "${LCPI_FUZZ_ENV}")
  endif()
endforeach()
