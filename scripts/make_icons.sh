#!/usr/bin/env bash
# Renders assets/icons/mhaviz.svg to the PNG sizes a desktop menu uses
# (assets/icons/mhaviz-N.png, installed as share/icons/hicolor/NxN/apps/mhaviz.png).
# The PNGs are committed, so building and installing need no SVG renderer; run this
# again after editing the SVG. Needs ImageMagick (apt-get install imagemagick).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../assets/icons"
command -v convert >/dev/null || { echo "make_icons.sh: needs ImageMagick's convert" >&2; exit 1; }
for n in 16 24 32 48 64 128 256; do
  convert -background none -density 300 mhaviz.svg -resize "${n}x${n}" -strip "PNG32:mhaviz-$n.png"
done
ls -l mhaviz-*.png
