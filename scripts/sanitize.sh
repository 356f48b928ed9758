#!/usr/bin/env bash
# Builds the whole test suite a second time with AddressSanitizer, UndefinedBehavior-
# Sanitizer and LeakSanitizer (or ThreadSanitizer), and runs ctest there. Any sanitizer
# report fails the run.
#
#   scripts/sanitize.sh [BUILD_DIR] [-- extra ctest args]
#     BUILD_DIR  default build-asan (next to build/)
#   env: MHAVIZ_SANITIZER=thread for ThreadSanitizer instead (build-tsan; the core's
#        thread pool; GUI tests left out: Mesa's own threads are not instrumented),
#        JOBS (default 2), CC/CXX (default: the system compiler, gcc),
#        MHAVIZ_SANITIZE_GUI=0 to leave out the GUI tests (ctest label "gui"),
#        MHAVIZ_SANITIZE_GUI=all to run all of them; by default only the GUI tests
#        labelled "asan" run (one at a time, after the rest: they share Xvfb and take
#        the CPU): those that reach code no other test reaches (the views, fonts and
#        wide glyphs, the training and language-model threads, exports, settings).
#        The whole GUI suite still runs in the normal build.
#        MHAVIZ_SANITIZE_TARGETS="t1 t2": build only these targets (the TSan stage
#        needs only the core's tests)
#        MHAVIZ_SANITIZE_PREBUILT=DIR: build nothing; run the tests in DIR, a build made
#        with ASan + UBSan already (CI: scripts/fuzz.sh's clang build with the unit
#        tests in FUZZ_BUILD_EXTRA, so one sanitizer build serves the fuzzers and the tests)
#
# Called by .ci/run; exit status 0 only if every test passed with no sanitizer report.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
kind=${MHAVIZ_SANITIZER:-address}
case "$kind" in
  address) build=$root/build-asan ;;
  thread) build=$root/build-tsan ;;
  *) echo "sanitize.sh: MHAVIZ_SANITIZER must be address or thread, got '$kind'" >&2; exit 2 ;;
esac
if [ $# -gt 0 ] && [ "$1" != "--" ]; then build=$1; shift; fi
[ "${1:-}" = "--" ] && shift
jobs=${JOBS:-2}

# -O1 keeps Eigen fast enough; Debug keeps assertions (Eigen's bounds checks) on.
# float-cast-overflow is not part of gcc's -fsanitize=undefined.
san="-fsanitize=address,undefined,float-cast-overflow -fno-omit-frame-pointer -fno-sanitize-recover=all"
link="-fsanitize=address,undefined"
gui=ON
thread_tests=OFF  # core_thread_tests: the threaded core tests in a binary of their own
if [ "$kind" = thread ]; then san="-fsanitize=thread"; link="$san"; gui=OFF; thread_tests=ON; fi
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  # -g puts the build folder in the hash unless told not to: clones in other folders
  # then share the cache too (debug paths stay relative to the checkout).
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
fi
prebuilt=${MHAVIZ_SANITIZE_PREBUILT:-}
if [ -n "$prebuilt" ]; then
  build=$(cd "$prebuilt" && pwd)
  grep -qE -- "^MHAVIZ_FUZZ:BOOL=ON|-fsanitize=[a-z,-]*address" "$build/CMakeCache.txt" ||
    { echo "sanitize.sh: $build is not an AddressSanitizer build" >&2; exit 2; }
  [ "$kind" = address ] || { echo "sanitize.sh: MHAVIZ_SANITIZE_PREBUILT is an AddressSanitizer build" >&2; exit 2; }
else
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Debug -DMHAVIZ_NATIVE=OFF -DMHAVIZ_GUI=$gui -DMHAVIZ_THREAD_TESTS=$thread_tests "${launcher[@]}" \
  -DCMAKE_C_FLAGS_DEBUG="-O1 -g $san" -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g $san" \
  -DCMAKE_EXE_LINKER_FLAGS="$link" -DCMAKE_SHARED_LINKER_FLAGS="$link"
targets=()
for t in ${MHAVIZ_SANITIZE_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j "$jobs" "${targets[@]}"
fi

# exitcode=66: a sanitizer failure must not pass for mhaviz's own exit status 1 or 2,
# which the CLI tests expect for bad input. Leak reports count as failures.
export ASAN_OPTIONS="detect_leaks=1:exitcode=66:abort_on_error=0:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1"
export LSAN_OPTIONS="suppressions=$root/tests/sanitize/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=66"
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1"
# Tests that measure memory use scale their bounds for ASan's shadow memory.
export MHAVIZ_SANITIZED=$kind

cd "$build"
status=0
ctest --output-on-failure -j "$jobs" -LE "gui|long" "$@" || status=1

# GUI tests (label gui, under Xvfb with Mesa's llvmpipe). The sanitizers run fine there,
# but Mesa dlclose()s its DRI driver at exit, and LeakSanitizer then reports the blocks
# the driver's globals still pointed to (240 bytes from "<unknown module>"). Preloading
# the driver keeps it mapped, so those blocks stay reachable and real leaks still count.
gui_labels=(-L gui)
[ "${MHAVIZ_SANITIZE_GUI:-asan}" = all ] || gui_labels=(-L asan)
if [ "$kind" = address ] && [ "${MHAVIZ_SANITIZE_GUI:-asan}" != 0 ] && ctest -N "${gui_labels[@]}" | grep -q "Total Tests: [1-9]"; then
  dri=""
  for d in "/usr/lib/$(gcc -print-multiarch 2>/dev/null)/dri" /usr/lib64/dri /usr/lib/dri; do
    [ -f "$d/swrast_dri.so" ] && { dri="$d/swrast_dri.so"; break; }
  done
  if [ -n "$dri" ]; then
    LD_PRELOAD="$dri${LD_PRELOAD:+:$LD_PRELOAD}" ASAN_OPTIONS="$ASAN_OPTIONS:verify_asan_link_order=0" \
      ctest --output-on-failure "${gui_labels[@]}" "$@" || status=1
  else
    echo "sanitize.sh: Mesa's swrast_dri.so not found; GUI tests run without leak detection" >&2
    ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" ctest --output-on-failure "${gui_labels[@]}" "$@" || status=1
  fi
fi
exit $status
