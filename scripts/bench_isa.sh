#!/bin/bash
# mhaviz's two x86 kernel paths on one machine, each against torch in the same run.
#
# What it measures: it builds the CLI twice (Release, no GUI, no tests), for
# -march=x86-64-v3 (AVX2 + FMA: the 256-bit kernels) and -march=x86-64-v4 (AVX-512),
# checks each build's numbers once against torch (the forward pass, gradients and AdamW:
# tests/cli/test_torch.py, test_train_torch.py, test_train_adamw.py), then times on
# 1 thread, CPU-time medians, mhaviz interleaved with torch round by round:
#   - the forward pass (scripts/compare_torch.py): torch.nn.MultiheadAttention against
#     `mhaviz bench` at (16, 512, 8), (64, 512, 8), (128, 768, 12), (512, 768, 12) and
#     (1024, 1024, 16); 3 rounds of 0.5 s a side;
#   - a training step (scripts/compare_torch_train.py --grid): the teaching, mhaviz-small
#     and large sizes x {ReLU, GELU} x {pre, post}-LN encoder blocks, vocabulary 64;
#     3 rounds (the large size 2) of about 0.3 s of mhaviz's steps a side.
# Every table is headed by the machine (lscpu's model name), the ISA path the build's
# kernels use, the BLAS torch runs on, the kernels it chose and torch's version. On a CPU
# with AVX-512 the AVX2 build is timed against torch held to its AVX2 kernels
# (compare_torch.py --torch-isa avx2: OpenBLAS's Zen or Haswell set), the torch of a
# laptop without AVX-512; TORCH_ISA=native keeps torch's own choice there. A CPU without AVX-512
# compiles the v4 build (so it is known to compile) but cannot run it: it says so and
# skips it. The AVX-512 path is timed first, so a run cut short keeps it.
#
#   scripts/bench_isa.sh            # about 8 minutes on a 16-core AVX-512 machine, 9 at most
#   QUICK=1 scripts/bench_isa.sh    # one small shape each, 1 round: does it run end to end?
#
# Writes everything under $OUT if set, else ./bench-isa-out: bench-isa.log (all of
# stdout), <level>/forward.txt and forward.json, <level>/train.txt (its last line is the
# JSON), <level>/checks.txt, build-<level>.log. The builds go to $BUILD_ROOT (default
# ./build-isa, outside $OUT: only results travel).
#
# Needs cmake, a C++17 compiler, python3 with numpy and torch, and the CLI's libraries
# (Debian: libeigen3-dev libzip-dev libstb-dev nlohmann-json3-dev libcli11-dev
# zlib1g-dev libutf8proc-dev libsentencepiece-dev gettext pkg-config); no display, no
# GUI packages, no ccache. The torch may be Debian's (which must run on OpenBLAS, not
# the reference BLAS) or pip's, which links MKL: then the comparisons get --any-blas,
# and each report names the BLAS torch really uses.
# Environment: PYTHON (default: python3 if it has torch, else /usr/bin/python3), JOBS
# (build jobs, default all CPUs), ROUNDS (3; the large model's 2), TORCH_ISA (native or
# avx2, for every level; default: avx2 for the v3 build on an AVX-512 CPU), TORCH_MALLOC
# (steady, the default: torch's buffers stay mapped between steps; glibc), BUDGET (seconds the
# whole run may take, default 540: the phases still to run when it is spent are skipped,
# one running is cut short), LEVELS ("v4 v3"), CHECKS=0 skips the
# correctness checks, SKIP_BUILD=1 reuses the builds an earlier run left in $BUILD_ROOT
# (a rerun after a run cut short; a rerun without it rebuilds only what changed).
#
# A machine without those libraries: it says which are missing and stops at once. Then
# build on a Debian machine that has them (scripts/setup.sh build) with
#   BUILD_ONLY=1 scripts/bench_isa.sh     # build-isa/v3, build-isa/v4 and build-isa/lib
# (the shared libraries the CLI needs beyond glibc and libstdc++, found by each binary
# through its RPATH $ORIGIN/../../lib, which also serves their own dependencies), copy
# build-isa/ to the machine and run there
#   SKIP_BUILD=1 scripts/bench_isa.sh
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
out=${OUT:-$PWD/bench-isa-out}
builds=${BUILD_ROOT:-$PWD/build-isa}
py=${PYTHON:-}
jobs=${JOBS:-$(nproc)}
rounds=${ROUNDS:-3}
levels=${LEVELS:-v4 v3}
checks=${CHECKS:-1}
budget=${BUDGET:-540}
shapes=16x512x8,64x512x8,128x768x12,512x768x12,1024x1024x16
sizes=teaching,small,large
variants=relu-pre,relu-post,gelu-pre,gelu-post
seconds=0.5
grid_ms=300
if [ -n "${QUICK:-}" ]; then
  shapes=16x512x8 sizes=teaching,large variants=gelu-pre rounds=1 seconds=0.1 grid_ms=50
fi
mkdir -p "$out" "$builds"
rm -f "$out"/v3/train.txt "$out"/v4/train.txt  # appended to by each training phase
out=$(cd "$out" && pwd)
log="$out/bench-isa.log"
: >"$log"
say() { echo "$*" | tee -a "$log"; }
start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start)) s"; }

any_blas="" pyinfo="python: not needed (BUILD_ONLY)"
if [ -z "${BUILD_ONLY:-}" ]; then
  if [ -z "$py" ]; then  # the first python3 with numpy and torch: PATH's, then Debian's
    for p in python3 /usr/bin/python3; do
      if "$p" -c 'import numpy, torch' >/dev/null 2>&1; then py=$p; break; fi
    done
  fi
  [ -n "$py" ] && "$py" -c 'import numpy, torch' >/dev/null 2>&1 || {
    say "bench_isa: no python3 here imports numpy and torch (${py:-python3, /usr/bin/python3}); set PYTHON to one that does."
    exit 1; }
  # a torch with MKL inside (pip's) is timed as it is; Debian's must be on OpenBLAS
  "$py" -c 'import sys, torch; sys.exit(0 if torch.backends.mkl.is_available() else 1)' && any_blas=--any-blas
  pyinfo=$("$py" -c 'import sys, torch; print(f"{sys.executable} {sys.version.split()[0]}, torch {torch.__version__}")')
fi
generator=""
command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
machine=$(LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Model name: *//p')
cpu_avx512=yes  # x86-64-v4's AVX-512 subsets, all of them
for f in avx512f avx512bw avx512cd avx512dq avx512vl; do grep -qw "$f" /proc/cpuinfo || cpu_avx512=no; done
say "bench_isa: $(date -u '+%Y-%m-%d %H:%M UTC'); ${machine:-unknown CPU}, $(nproc) CPUs, AVX-512: $cpu_avx512;" \
  "$pyinfo;" \
  "$(c++ --version 2>/dev/null | head -n 1); commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
[ -z "${QUICK:-}" ] || say "QUICK: one shape, one variant at two sizes, one round: a smoke test, not a measurement"

runnable() {  # the v4 build runs only on a CPU with AVX-512
  [ "$1" != v4 ] || [ "$cpu_avx512" = yes ]
}
missing_deps() {  # what the CLI's configure step needs, named all at once
  local m=""
  for c in cmake c++ pkg-config msgfmt xgettext msgmerge; do command -v "$c" >/dev/null 2>&1 || m="$m $c"; done
  if command -v pkg-config >/dev/null 2>&1; then
    for p in eigen3 libzip stb libutf8proc sentencepiece nlohmann_json zlib; do
      pkg-config --exists "$p" || m="$m $p(pkg-config)"
    done
  fi
  [ -f /usr/include/CLI/CLI.hpp ] || [ -f /usr/local/include/CLI/CLI.hpp ] || m="$m CLI11"
  echo "$m"
}
if [ -z "${SKIP_BUILD:-}" ]; then
  missing=$(missing_deps)
  if [ -n "$missing" ]; then
    say "bench_isa: cannot build the CLI here, missing:$missing"
    say "  Debian/Ubuntu: apt-get install cmake g++ pkg-config gettext libeigen3-dev libzip-dev libstb-dev \\"
    say "    nlohmann-json3-dev libcli11-dev zlib1g-dev libutf8proc-dev libsentencepiece-dev"
    say "  or build elsewhere with BUILD_ONLY=1, copy $builds here and run with SKIP_BUILD=1 (see this script's header)"
    exit 1
  fi
fi
build() {  # level: configure and build the CLI alone (the kernels are the core's, the
  # same in every target); -march from CMAKE_*_FLAGS, not MHAVIZ_NATIVE, so the path is
  # the level's, not this CPU's
  cmake -S "$root" -B "$builds/$1" $generator -DCMAKE_BUILD_TYPE=Release -DMHAVIZ_NATIVE=OFF -DMHAVIZ_GUI=OFF \
    -DMHAVIZ_TESTS=OFF "-DCMAKE_CXX_FLAGS=-march=x86-64-$1" "-DCMAKE_C_FLAGS=-march=x86-64-$1" \
    '-DCMAKE_BUILD_RPATH=$ORIGIN/../../lib' -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags &&
    cmake --build "$builds/$1" --target mhaviz -j "$2"
}
nlevels=$(echo $levels | wc -w)
pids=""
for level in $levels; do
  dir="$builds/$level"
  if [ -n "${SKIP_BUILD:-}" ]; then
    [ -x "$dir/app/mhaviz" ] || ! runnable "$level" || { say "bench_isa: SKIP_BUILD, but no $dir/app/mhaviz"; exit 1; }
    say "== x86-64-$level: reusing $dir/app/mhaviz (SKIP_BUILD)"
    continue
  fi
  # Both at once, the cores shared: their serial parts (configure, links) overlap.
  say "== building x86-64-$level in $dir ($(((jobs + nlevels - 1) / nlevels)) jobs) [$(elapsed)]"
  build "$level" $(((jobs + nlevels - 1) / nlevels)) >"$out/build-$level.log" 2>&1 &
  pids="$pids $!:$level"
done
for p in $pids; do
  if ! wait "${p%%:*}"; then
    level=${p#*:}
    tail -n 30 "$out/build-$level.log" | tee -a "$log"
    say "bench_isa: the x86-64-$level build failed (whole log: $out/build-$level.log)"
    exit 1
  fi
done
say "builds done [$(elapsed)]"
if [ -n "${BUILD_ONLY:-}" ]; then
  # The libraries a machine without the -dev packages lacks: all but glibc's, libstdc++
  # and libgcc (a newer system has newer ones, which torch's process needs too).
  mkdir -p "$builds/lib"
  for level in $levels; do
    ldd "$builds/$level/app/mhaviz" | awk '$3 ~ /^\// {print $3}' |
      grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so' |
      while read -r l; do  # the second build finds the first's copies through its RPATH
        [ "$(cd "$(dirname "$l")" && pwd -P)" = "$(cd "$builds/lib" && pwd -P)" ] || cp -L "$l" "$builds/lib/"
      done
  done
  say "BUILD_ONLY: $builds holds both builds and lib/ ($(du -sh "$builds/lib" | cut -f1));" \
    "copy it to the machine and run SKIP_BUILD=1 BUILD_ROOT=<that copy> scripts/bench_isa.sh"
  exit 0
fi

for level in $levels; do
  runnable "$level" || continue
  mhaviz="$builds/$level/app/mhaviz"
  mkdir -p "$out/$level"
  say "== x86-64-$level: $("$mhaviz" bench --seq 4 --d-model 8 --heads 2 --repeat 1 | grep '^kernels:')"
  [ "$checks" = 1 ] || continue
  : >"$out/$level/checks.txt"
  # The same numbers as torch (forward, gradients, AdamW): a fast path must be a right one.
  for t in test_torch test_train_torch test_train_adamw; do
    r=0
    "$py" "$root/tests/cli/$t.py" "$mhaviz" >>"$out/$level/checks.txt" 2>&1 || r=$?
    case $r in 0) r=passed ;; 77) r="skipped (no torch)" ;; *) r="FAILED (exit $r; see $level/checks.txt)" ;; esac
    say "   $t.py: $r [$(elapsed)]"
  done
done

# Phases, most wanted first: "kind:sizes:rounds" (the large model's steps are long: one
# round fewer). Each runs under what is left of $BUDGET, so the whole run ends in time
# and a phase cut short keeps the rows it printed.
large_rounds=$((rounds > 2 ? rounds - 1 : rounds))
phases="forward::$rounds train:${sizes%,large}:$rounds"
[ "${sizes%,large}" = "$sizes" ] || phases="$phases train:large:$large_rounds"
for phase in $phases; do
  kind=${phase%%:*} rest=${phase#*:}
  phase_sizes=${rest%%:*} phase_rounds=${rest#*:}
  for level in $levels; do
    mhaviz="$builds/$level/app/mhaviz"
    if ! runnable "$level"; then
      say "== x86-64-$level $kind: this CPU has no AVX-512, so the x86-64-v4 build cannot run here (skipped)"
      continue
    fi
    left=$((budget - ($(date +%s) - start)))
    say ""
    if [ "$left" -lt 30 ]; then
      say "======== x86-64-$level, $kind${phase_sizes:+ $phase_sizes}: skipped, the budget of $budget s is spent [$(elapsed)]"
      continue
    fi
    say "======== x86-64-$level, $kind${phase_sizes:+ $phase_sizes}, 1 thread, $phase_rounds rounds [$(elapsed); $left s left]"
    r=0
    # The AVX2 build meets the torch an AVX2 machine has: on an AVX-512 CPU, torch's
    # BLAS would otherwise run its AVX-512 kernels against mhaviz's 256-bit ones.
    torch_isa=native
    [ "$level" != v3 ] || [ "$cpu_avx512" != yes ] || torch_isa=avx2
    if [ "$kind" = forward ]; then
      timeout "$left" "$py" "$here/compare_torch.py" --mhaviz "$mhaviz" --threads 1 --shapes "$shapes" \
        --rounds "$phase_rounds" --seconds "$seconds" --json "$out/$level/forward.json" $any_blas \
        --torch-isa "${TORCH_ISA:-$torch_isa}" --torch-malloc "${TORCH_MALLOC:-steady}" 2>&1 |
        tee "$out/$level/forward.txt" | tee -a "$log" || r=$?
    else
      timeout "$left" "$py" "$here/compare_torch_train.py" --mhaviz "$mhaviz" --grid --sizes "$phase_sizes" \
        --variants "$variants" --vocabs 64 --rounds "$phase_rounds" --grid-ms "$grid_ms" $any_blas \
        --torch-isa "${TORCH_ISA:-$torch_isa}" --torch-malloc "${TORCH_MALLOC:-steady}" 2>&1 |
        tee -a "$out/$level/train.txt" | tee -a "$log" || r=$?
    fi
    case $r in
      0) ;;
      124) say "bench_isa: x86-64-$level $kind $phase_sizes cut short at the budget of $budget s (rows above kept)" ;;
      *) say "bench_isa: the x86-64-$level $kind comparison failed (exit $r); going on" ;;
    esac
  done
done
say ""
say "bench_isa: done in $(elapsed); results in $out"
