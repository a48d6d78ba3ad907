# shellcheck shell=bash
# sanitize-env.sh - the one sanitizer configuration, sourced by
# scripts/test-sanitize.sh (the test suite under it, part of CI) and
# scripts/fuzz.sh (longer fuzzing runs in the same tree).
#
# The tree (build-san/ unless LCPI_SAN_BUILD_DIR is set) is built by clang
# with AddressSanitizer and UndefinedBehaviorSanitizer (-DLCPI_SANITIZE=ON),
# warnings as errors, and every object instrumented for libFuzzer's coverage
# (-fsanitize=fuzzer-no-link; ASan's runtime supplies the coverage hooks to
# the ordinary programs), so the fuzz targets link with libFuzzer and guide
# themselves through libprofile's own code, and the bounded fuzzing runs
# (fuzz.<target>.run, label slow) are registered in it.
#
# Any sanitizer report fails the program it happened in: the tree is built
# with -fno-sanitize-recover (CMakeLists.txt), and halt_on_error says so
# again here. fuzz/asan.supp hides only reports raised inside libdw itself
# (an elfutils bug the fuzzer found).

LCPI_SAN_BUILD=${LCPI_SAN_BUILD_DIR:-build-san}

export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1:suppressions=$PWD/fuzz/asan.supp"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

# lock_sanitize_tree: waits until no other process builds $LCPI_SAN_BUILD
# (scripts/prebuild.sh in the background, or one an interrupted run left),
# then holds it; unlock_sanitize_tree lets go once built, so that no test
# (a daemon left running) holds it after.
lock_sanitize_tree() {
  mkdir -p "$LCPI_SAN_BUILD"
  exec 9>"$LCPI_SAN_BUILD/.build.lock"
  flock 9
}
unlock_sanitize_tree() { exec 9>&-; }

# configure_sanitize_tree: (re)configures $LCPI_SAN_BUILD; run from the
# repository's root.
configure_sanitize_tree() {
  CC=clang CXX=clang++ cmake -S . -B "$LCPI_SAN_BUILD" \
    -DLCPI_SANITIZE=ON -DLCPI_LIBFUZZER=ON -DLCPI_WERROR=ON \
    -DLCPI_SAN_GUESTS="$([ "${LCPI_SAN_GUESTS:-0}" = 1 ] && echo ON || echo OFF)" \
    -DCMAKE_C_FLAGS=-fsanitize=fuzzer-no-link \
    -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link >/dev/null
}

# build_sanitize_tree [TARGET...]: configures and builds $LCPI_SAN_BUILD
# (those targets, or all) with LCPI_JOBS jobs (default: nproc), under
# lock_sanitize_tree; returns the first failure's status.
build_sanitize_tree() {
  local rc=0
  lock_sanitize_tree
  configure_sanitize_tree || rc=$?
  [ $rc != 0 ] || cmake --build "$LCPI_SAN_BUILD" -j"${LCPI_JOBS:-$(nproc)}" ${1:+--target "$@"} || rc=$?
  unlock_sanitize_tree
  return $rc
}
