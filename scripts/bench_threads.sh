#!/bin/sh
# Many cores: mhaviz against Debian's PyTorch (OpenBLAS) at 1, 4, 8 and 16 threads, in
# one run: the attention forward pass at (seq 512, d_model 768, 12 heads), and the
# training step of the large model (4 layers, d_model 256, 8 heads, seq 128, batch 32,
# ReLU) and of mhaviz-small's shape (2 layers, d_model 128, seq 64, batch 64, GELU,
# 4000 tokens). Wall-clock medians of interleaved rounds (on more than one thread the
# calling thread's CPU time leaves out the helpers), then one table. About 3 minutes on
# an idle 16-core machine; run it where nothing else runs.
#
# usage: scripts/bench_threads.sh [path/to/mhaviz] [threads, default 1,4,8,16]
# PYTHON=path/to/python3 times that python's torch instead of Debian's; its BLAS (pip's
# torch links MKL) is then named in the output rather than refused. KEEP=dir keeps the
# raw results (forward.json, train.txt) there.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mhaviz=${1:-$here/../build/app/mhaviz}
threads=${2:-1,4,8,16}
py=${PYTHON:-/usr/bin/python3}
any_blas=
[ "$py" = /usr/bin/python3 ] || any_blas=--any-blas
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

echo "machine: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$py" - <<'PY'
import torch
c = torch.__config__
keep = ("BLAS_INFO", "Math Kernel Library", "ATen parallel backend", "OpenMP", "MKL-DNN")
lines = [p.strip(" -") for p in (c.show() + c.parallel_info()).replace(",", "\n").splitlines()]
print(f"torch {torch.__version__}: " + "; ".join(dict.fromkeys(p for p in lines if any(k in p for k in keep))))
PY
# Both scripts drop OPENBLAS_CORETYPE before torch loads (OpenBLAS picks its kernels).
"$py" "$here/compare_torch.py" --mhaviz "$mhaviz" --threads "$threads" --shapes 512x768x12 --rounds 3 \
  --seconds 0.5 --json "$tmp/forward.json" $any_blas
"$py" "$here/compare_torch_train.py" --mhaviz "$mhaviz" --threads "$threads" --models large,small --rounds 3 \
  --repeat 12 | tee "$tmp/train.txt"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -z "${KEEP:-}" ] || cp "$tmp/forward.json" "$tmp/train.txt" "$KEEP/"

"$py" - "$tmp/forward.json" "$tmp/train.txt" <<'PY'
import json, sys
fwd = json.load(open(sys.argv[1]))["results"]
train = json.loads(open(sys.argv[2]).read().strip().splitlines()[-1])["rows"]
cells = {}
for r in fwd:
    cells.setdefault(r["threads"], {})["forward (512, 768, 12)"] = (r["mhaviz_ms"], r["torch_ms"])
for r in train:
    cells.setdefault(r["threads"], {})["train " + r["model"]] = (r["mhaviz_ms"], r["torch_ms"])
cols = ["forward (512, 768, 12)", "train large", "train small"]
print("\n| threads | " + " | ".join(f"{c}: mhaviz / torch ms (ratio)" for c in cols) + " |")
print("|---|" + "---|" * len(cols))
one = cells.get(min(cells), {})
for t in sorted(cells):
    row = []
    for c in cols:
        m, tt = cells[t].get(c, (float("nan"), float("nan")))
        row.append(f"{m:.1f} / {tt:.1f} ({tt / m:.2f}x)")
    print(f"| {t} | " + " | ".join(row) + " |")
print("\nspeed-up over 1 thread (mhaviz / torch):")
for t in sorted(cells):
    print(f"  {t:2d} threads: " + ", ".join(
        f"{c} {one[c][0] / cells[t][c][0]:.1f}x / {one[c][1] / cells[t][c][1]:.1f}x" for c in cols if c in one and c in cells[t]))
PY
