#!/usr/bin/env bash
# mhaviz set-up: installs what is missing (Debian 12 packages), builds, then
#   run   launches the app on a default sentence (headless: prints `mhaviz trace`)
#   test  runs the whole test suite through ctest
#   build only builds
# `run` and `build` install only RUN_PACKAGES (what building and running the app need)
# and build without the tests; `test` adds TEST_PACKAGES (PyTorch, clang, Xvfb, ...).
# Works as root or through sudo; apt-get runs non-interactively.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
action="${1:-run}"
[ $# -gt 0 ] && shift
usage() { echo "usage: scripts/setup.sh [run|test|build|packages run|packages test]" >&2; }
# A mistyped action stops here, before anything is installed or built.
case "$action" in
  run | test | build | packages) ;;
  -h | --help) usage; exit 0 ;;
  *) echo "setup: unknown action '$action'" >&2; usage; exit 2 ;;
esac

# Building and running: compiler, gettext (xgettext, msgfmt: the translations), libraries,
# the OpenGL driver, and the fonts (Korean,
# then the fallbacks for symbols and emoji).
RUN_PACKAGES=(
  build-essential cmake pkg-config gettext
  libeigen3-dev libglfw3-dev libimgui-dev libstb-dev
  libzip-dev zlib1g-dev nlohmann-json3-dev libcli11-dev libutf8proc-dev libgif-dev libsentencepiece-dev
  libgl1-mesa-dri
  fonts-nanum fonts-dejavu-core fonts-noto-core fonts-symbola
)
# The test suite, the fuzzers and the benchmark comparison only.
TEST_PACKAGES=(
  git catch2 python3-glad
  xvfb xauth xdotool x11-xserver-utils
  python3-numpy python3-torch libopenblas0-openmp python3-pil python3-sentencepiece
  python3-nbclient python3-ipykernel python3-nbformat python3-matplotlib
  clang libclang-rt-14-dev clang-format
  ccache
)
PACKAGES=("${RUN_PACKAGES[@]}")
[ "$action" = test ] && PACKAGES+=("${TEST_PACKAGES[@]}")
# `setup.sh packages run|test`: print the list and stop (scripts/setup_size.sh uses it).
if [ "$action" = packages ]; then
  [ "${1:-run}" = test ] && PACKAGES+=("${TEST_PACKAGES[@]}")
  printf '%s\n' "${PACKAGES[@]}"
  exit 0
fi

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -q
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

build_dir="${MHAVIZ_BUILD_DIR:-build}"
tests=OFF
[ "$action" = test ] && tests=ON
launcher=()
# ccache, where installed, makes a rebuild (another clone, the sanitizer builds) cheap.
# Paths are hashed relative to the checkout, so clones in other folders share the cache.
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
fi
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release -DMHAVIZ_TESTS="$tests" "${launcher[@]}"
cmake --build "$build_dir" -j"$(nproc)"

case "$action" in
  build) ;;
  run)
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
      echo "setup: no display, so here is the headless trace (run 'mhaviz' on a desktop for the app):"
      exec "$build_dir/app/mhaviz" trace --sentence "고양이가 쥐를 잡았다" "$@"
    fi
    exec "$build_dir/app/mhaviz" gui --sentence "고양이가 쥐를 잡았다" "$@"
    ;;
  test)
    cd "$build_dir"
    ctest --output-on-failure -j"$(nproc)" "$@"
    ;;
esac
