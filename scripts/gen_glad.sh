#!/bin/sh
# Regenerates third_party/glad (OpenGL 3.3 core loader, no extensions) with the
# glad 2 generator from Debian's python3-glad. The output is committed so a build
# needs no Python; rerun this only to change the GL version or glad itself.
set -eu
cd "$(dirname "$0")/.."
rm -rf third_party/glad
glad --reproducible --api gl:core=3.3 --extensions "" --out-path third_party/glad c
