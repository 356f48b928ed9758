#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (ASan + UBSan, coverage on every
# library) and fuzzes each one for a bounded time, one after another.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#     SECONDS_PER_TARGET  default 60 (CI); use e.g. 900 for a long local run
#     TARGET              tokenizer | npz | cli | font (default: all)
#   env: FUZZ_BUILD_DIR (default build-fuzz), JOBS (default 2), FUZZ_FLAGS (extra libFuzzer flags),
#        FUZZ_BUILD_ALL=1 to build every target of the build (the tests too, GUI left out),
#        FUZZ_BUILD_EXTRA="t1 t2" to build these targets beside the fuzzers (CI: the unit
#        tests), so that a sanitizer run of tests can use this same ASan + UBSan build
#        (scripts/sanitize.sh with MHAVIZ_SANITIZE_PREBUILT) instead of compiling a second one
#
# New interesting inputs go to $FUZZ_BUILD_DIR/corpus/<target> (the committed seeds in
# tests/fuzz/corpus/<target> are only read). A crash, leak, timeout or out-of-memory
# stops with exit status 1 and leaves the input in $FUZZ_BUILD_DIR/artifacts/<target>/:
# minimise it (fuzz_<target> -minimize_crash=1 FILE), copy it to
# tests/fuzz/regressions/<target>/ so ctest replays it, fix the bug, and add a unit test.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tokenizer npz cli font)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${JOBS:-2}

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install -y clang libclang-rt-14-dev)" >&2; exit 1; }

mkdir -p "$build"
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
fi
# -O1 with assertions on (no NDEBUG): Eigen's bounds asserts stay armed. Line tables are
# all a sanitizer's report needs (file:line in every frame), and compile faster than -g.
# With FUZZ_BUILD_ALL or FUZZ_BUILD_EXTRA the command line's glue (CLI11 and JSON
# templates, no numeric loops: a third of the compile time), where it is built, is
# built at -O0, which halves its compile time.
glue=""
[ "${FUZZ_BUILD_ALL:-0}" = 1 ] || [ -n "${FUZZ_BUILD_EXTRA:-}" ] && glue="-O0"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" \
  -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_C_FLAGS_FUZZ="-O1 -gline-tables-only" -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
  -DMHAVIZ_GLUE_FLAGS="$glue" -DMHAVIZ_FUZZ=ON -DMHAVIZ_NATIVE=OFF -DMHAVIZ_GUI=OFF "${launcher[@]}" >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log" >&2; exit 1; }
if [ "${FUZZ_BUILD_ALL:-0}" = 1 ]; then
  cmake --build "$build" -j "$jobs"
else
  # shellcheck disable=SC2086  # FUZZ_BUILD_EXTRA is a list of target names
  cmake --build "$build" -j "$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}") ${FUZZ_BUILD_EXTRA:-}
fi

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

status=0
for t in "${targets[@]}"; do
  bin=$build/tests/fuzz/fuzz_$t
  work=$build/corpus/$t
  art=$build/artifacts/$t
  mkdir -p "$work" "$art"
  dict=()
  [ -f "$root/tests/fuzz/$t.dict" ] && dict=(-dict="$root/tests/fuzz/$t.dict")
  seeds=("$root/tests/fuzz/corpus/$t")
  [ -d "$root/tests/fuzz/regressions/$t" ] && seeds+=("$root/tests/fuzz/regressions/$t")
  echo "== fuzz_$t for ${secs}s"
  # -rss_limit_mb / -malloc_limit_mb: a parser that balloons memory is a finding too (inputs
  # are at most 4 KiB, 16 KiB for fonts, so no honest allocation comes near 256 MiB).
  max_len=4096
  [ "$t" = font ] && max_len=16384  # the smallest real fonts are ~4.5 KiB
  if ! "$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2560 -malloc_limit_mb=256 -max_len="$max_len" \
      -print_final_stats=1 -artifact_prefix="$art/" "${dict[@]}" ${FUZZ_FLAGS:-} \
      "$work" "${seeds[@]}" 2>"$build/fuzz_$t.log"; then
    tail -n 60 "$build/fuzz_$t.log" >&2
    echo "fuzz.sh: fuzz_$t found a problem; the input is in $art/" >&2
    status=1
  else
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb|^Done' "$build/fuzz_$t.log" || tail -n 3 "$build/fuzz_$t.log"
  fi
done
exit $status
