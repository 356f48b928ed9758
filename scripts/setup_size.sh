#!/usr/bin/env bash
# What `scripts/setup.sh run` and `scripts/setup.sh test` would download and install on
# a fresh Debian 12: apt resolves each package list against a minimal system (this
# machine's Priority: required packages plus apt and what they depend on, about what
# `debootstrap --variant=minbase` gives), with an empty package cache. Nothing is
# installed; with --download, the packages are fetched into a temporary directory (then
# deleted) and the time that took is printed.
# Needs current apt lists (apt-get update).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A dpkg status file holding only the minimal base system.
python3 - "$work/status" <<'PY'
import re, sys
entries = {}
for e in open("/var/lib/dpkg/status", encoding="utf-8").read().split("\n\n"):
    m = re.search(r"^Package: (\S+)$", e, re.M)
    if m and "Status: install ok installed" in e:
        entries[m.group(1)] = e
def deps(e):
    out = []
    for field in ("Depends", "Pre-Depends"):
        m = re.search(r"^%s: (.*)$" % field, e, re.M)
        for alt in (m.group(1).split(",") if m else []):
            names = [re.sub(r"[ (:].*", "", a.strip()) for a in alt.split("|")]
            out.append(next((n for n in names if n in entries), None))
    return [n for n in out if n]
todo = [n for n, e in entries.items() if re.search(r"^Priority: required$", e, re.M)] + ["apt"]
base = set()
while todo:
    n = todo.pop()
    if n in base or n not in entries:
        continue
    base.add(n)
    todo += deps(entries[n])
open(sys.argv[1], "w", encoding="utf-8").write("\n\n".join(entries[n] for n in sorted(base)) + "\n")
PY
mkdir -p "$work/archives/partial"

download=${1:-}
for set in run test; do
  mapfile -t pkgs < <(scripts/setup.sh packages "$set")
  if [ "$download" = --download ]; then
    rm -rf "$work/archives" && mkdir -p "$work/archives/partial"
    start=$(date +%s.%N)
    apt-get install -qq --download-only -o Dir::State::status="$work/status" -o APT::Sandbox::User=root \
      -o Dir::Cache::archives="$work/archives" "${pkgs[@]}" >/dev/null
    end=$(date +%s.%N)
    mb=$(find "$work/archives" -name '*.deb' -printf '%s\n' | awk '{ b += $1 } END { printf "%.1f", b / 1e6 }')
    echo "setup.sh $set: downloaded $mb MB in $(awk "BEGIN { printf \"%.0f\", $end - $start }") s"
    rm -rf "$work/archives" && mkdir -p "$work/archives/partial"
  fi
  apt-get install -qq --print-uris \
    -o Dir::State::status="$work/status" -o Dir::Cache::archives="$work/archives" \
    "${pkgs[@]}" 2>/dev/null | awk -v set="$set" '
      { n++; bytes += $3 }
      END { printf "setup.sh %-4s  %4d packages, %7.1f MB to download\n", set, n, bytes / 1e6 }'
done
