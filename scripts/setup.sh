#!/usr/bin/env bash
# mhaviz set-up: installs what is missing (Debian 12 packages), builds, then
#   run   launches the app on a default sentence (headless: prints `mhaviz trace`)
#   test  runs the whole test suite through ctest
#   build only builds
# Works as root or through sudo; apt-get runs non-interactively.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
action="${1:-run}"
[ $# -gt 0 ] && shift

PACKAGES=(
  build-essential cmake pkg-config git
  libeigen3-dev libglfw3-dev libimgui-dev catch2 libstb-dev
  libzip-dev nlohmann-json3-dev libcli11-dev
  libsentencepiece-dev libutf8proc-dev zlib1g-dev
  python3-glad fonts-nanum
  xvfb xauth xdotool libgl1-mesa-dri
  python3-numpy python3-torch libopenblas0-openmp python3-sentencepiece
  clang libclang-rt-14-dev
)

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
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
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
  *)
    echo "usage: scripts/setup.sh [run|test|build]" >&2
    exit 2
    ;;
esac
