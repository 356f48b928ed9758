#!/usr/bin/env bash
# Writes the mhaviz(1) man page from the binary's own help texts, so the page covers
# every subcommand and never drifts from the flags (CMake runs this at build time).
#   scripts/gen_manpage.sh path/to/mhaviz OUT.1
set -euo pipefail
bin=$1
out=$2
tmp=$(mktemp "${out}.XXXXXX")
trap 'rm -f "$tmp"' EXIT

# Help text as literal troff: backslashes doubled, a leading . or ' protected.
literal() { sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/"; }

version=$("$bin" --version | awk '{print $2}')
commands=$("$bin" --help | sed -n 's/^  mhaviz \[\{0,1\}\([a-z]*\)\]\{0,1\} .*/\1/p' | grep -v '^$')
{
  echo ".TH MHAVIZ 1 \"\" \"mhaviz $version\" \"User Commands\""
  echo ".SH NAME"
  echo "mhaviz \\- multi-head self-attention, every step, live"
  echo ".SH SYNOPSIS"
  for c in $commands; do echo ".B mhaviz $c"; echo ".RI [ flags ]"; echo ".br"; done
  echo ".B mhaviz"
  echo "\\-\\-help | \\-\\-version"
  echo ".SH DESCRIPTION"
  echo "mhaviz teaches multi-head self-attention: it runs real attention on a sentence"
  echo "(English or Korean) and shows every step. With no command it opens the desktop app;"
  echo "the other commands run without a display. Text is normalised to Unicode NFC before"
  echo "it is tokenised."
  echo ".PP"
  echo ".nf"
  "$bin" --help | literal
  echo ".fi"
  for c in $commands; do
    echo ".SH COMMAND: $c" | tr '[:lower:]' '[:upper:]'
    echo ".nf"
    "$bin" "$c" --help | literal
    echo ".fi"
  done
  # bench --train has its own flags (the training step's model and data).
  if "$bin" bench --train --help >/dev/null 2>&1; then
    echo ".SH COMMAND: BENCH \\-\\-TRAIN"
    echo ".nf"
    "$bin" bench --train --help | literal
    echo ".fi"
  fi
  echo ".SH ENVIRONMENT"
  echo ".TP"
  echo ".B MHAVIZ_FONT"
  echo "A TrueType (.ttf) font to draw all text with, instead of NanumGothic. It is checked"
  echo "before use; a file that is missing, not a regular file, over 64 MiB or malformed is refused."
  echo ".TP"
  echo ".B MHAVIZ_ASSETS"
  echo "A directory whose fonts/ and models/ subdirectories are searched first for NanumGothic.ttf"
  echo "and the shipped language model (mhaviz-small)."
  echo ".TP"
  echo ".B XDG_CONFIG_HOME"
  echo "The app's settings live in \$XDG_CONFIG_HOME/mhaviz (default ~/.config/mhaviz)."
  echo ".SH FILES"
  echo ".TP"
  echo ".I <prefix>/share/mhaviz/fonts/NanumGothic.ttf"
  echo "The font, found relative to the binary (<prefix>/bin/mhaviz); then"
  echo "/usr/share/fonts/truetype/nanum. Symbols and emoji come from DejaVu Sans, Noto Sans"
  echo "Symbols 2 and Symbola when installed (fonts-dejavu-core, fonts-noto-core, fonts-symbola)."
  echo ".TP"
  echo ".I <prefix>/share/mhaviz/models/mhaviz-small.npz"
  echo "The shipped bilingual language model (--model mhaviz-small) and its tokenizer"
  echo "(mhaviz-small.model); its validation text is <prefix>/share/mhaviz/corpus/valid.txt.gz."
  echo ".SH EXIT STATUS"
  echo "0 success, 1 runtime error (files, display), 2 usage error (flags)."
} >"$tmp"
mv "$tmp" "$out"
trap - EXIT
