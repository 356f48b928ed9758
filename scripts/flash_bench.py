#!/usr/bin/python3
"""Standard against Flash attention, and torch's matmul/softmax path, in one run.

For n = 256, 512, ..., 32768 tokens at one shape (default d_model 512, 8 heads) it
times one multi-head attention sublayer three ways, each in its own process so that
each peak resident set is its own:

  mhaviz bench --attention standard   (every head's n x n scores and weights kept;
                                       refused past its cap: the refusal is recorded)
  mhaviz bench --attention flash      (tiles and an online softmax, nothing n x n)
  torch 1.13, written out with matmuls: q k^T * scale, softmax, attn v, W_O (Debian's
                                       torch has no scaled_dot_product_attention)

on 1 thread, CPU time of the calling thread (median), and the peak RSS that
os.wait4 reports for each process. Torch runs while its n x n tensors (scores and
weights, 2 * heads * n^2 * 4 bytes) fit --torch-max-bytes. Then it fits
log(time) and log(peak memory) against log(n) by least squares over the larger sizes
and prints the slopes (2 for n^2, 1 for n) and a Markdown table for docs/flash.md.

Honesty rules (as scripts/compare_torch.py): torch on OpenBLAS, OPENBLAS_CORETYPE
unset, torch's allocator steady (--torch-malloc glibc: glibc's default, which faults its
freed buffers in again on the next run), one thread each; the machine, BLAS, torch version and load average are printed.

usage: /usr/bin/python3 scripts/flash_bench.py [--mhaviz build/app/mhaviz] [--d-model 512]
           [--heads 8] [--max-n 32768] [--torch-max-bytes 1.2e9] [--json OUT.json]
           [--torch-malloc steady|glibc]
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

os.environ.pop("OPENBLAS_CORETYPE", None)  # before torch loads OpenBLAS

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import blas_report, load_average  # noqa: E402

TORCH_CHILD = r"""
import ctypes, os, resource, statistics, sys, time
os.environ.pop("OPENBLAS_CORETYPE", None)
if sys.argv[5] == "steady":  # glibc keeps torch's buffers mapped (compare_torch.set_torch_malloc)
    libc = ctypes.CDLL("libc.so.6")
    libc.mallopt(-4, 0), libc.mallopt(-1, 1 << 30), libc.mallopt(-2, 64 << 20)
import torch
torch.set_num_threads(1)
n, d, h, reps = (int(a) for a in sys.argv[1:5])
hd = d // h
g = torch.Generator().manual_seed(0)
x = torch.randn(n, d, generator=g)
W = [torch.randn(d, d, generator=g) / d ** 0.5 for _ in range(4)]
b = [torch.zeros(d) for _ in range(4)]
def mha(x):
    q = (x @ W[0] + b[0]).view(n, h, hd).transpose(0, 1)
    k = (x @ W[1] + b[1]).view(n, h, hd).transpose(0, 1)
    v = (x @ W[2] + b[2]).view(n, h, hd).transpose(0, 1)
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / hd ** 0.5)
    attn = torch.softmax(scores, dim=-1)  # kept, as need_weights=True keeps it
    context = torch.matmul(attn, v)
    out = context.transpose(0, 1).reshape(n, d) @ W[3] + b[3]
    return out, attn
with torch.no_grad():
    mha(x)  # warm-up
    cpu = []
    for _ in range(reps):
        c0 = time.thread_time()
        out, attn = mha(x)
        cpu.append((time.thread_time() - c0) * 1e3)
        del out, attn
print(statistics.median(cpu))
"""


def peak_of(args, env=None):
    r = subprocess.run(["/usr/bin/time", "-v", *args], capture_output=True, text=True, env=env)
    peak = None
    for line in r.stderr.splitlines():
        if "Maximum resident set size (kbytes):" in line:
            peak = int(line.split(":")[1]) * 1024
    return r, peak


def mhaviz_point(mhaviz, attention, n, d, h):
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    r, peak = peak_of([mhaviz, "bench", "--attention", attention, "--seq", str(n), "--d-model", str(d),
                       "--heads", str(h), "--threads", "1"], env)
    if r.returncode != 0:
        msg = [l for l in r.stderr.splitlines() if "error:" in l]
        return {"refused": r.returncode, "message": msg[0] if msg else ""}
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return {"cpu_ms": j["cpu_median_ms"], "wall_ms": j["median_ms"], "repeat": j["repeat"],
            "peak_bytes": peak, "peak_rss_mb_self": j["peak_rss_mb"]}


def torch_point(n, d, h, malloc="steady"):
    reps = 5 if n <= 2048 else 3
    r, peak = peak_of([sys.executable, "-c", TORCH_CHILD, str(n), str(d), str(h), str(reps), malloc])
    if r.returncode != 0:
        return {"refused": r.returncode, "message": (r.stderr.strip().splitlines() or [""])[0]}
    return {"cpu_ms": float(r.stdout.strip()), "peak_bytes": peak, "repeat": reps}


def slope(points, key, min_n, base=0.0):
    """Least-squares slope of log(value - base) against log(n) over n >= min_n."""
    xs = [math.log(n) for n, p in points if key in p and n >= min_n and p[key] > base]
    ys = [math.log(p[key] - base) for n, p in points if key in p and n >= min_n and p[key] > base]
    if len(xs) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mhaviz", default="build/app/mhaviz")
    ap.add_argument("--d-model", type=int, default=512)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--min-n", type=int, default=256)
    ap.add_argument("--max-n", type=int, default=32768)
    ap.add_argument("--torch-max-bytes", type=float, default=1.2e9,
                    help="torch runs while its scores and weights take at most this many bytes")
    ap.add_argument("--time-fit-min-n", type=int, default=0,
                    help="fit time slopes over n >= this (default 4 d_model: from there on the n^2 d of the "
                         "attention core is at least twice the 8 n d^2 of the projections)")
    ap.add_argument("--memory-fit-min-n", type=int, default=512,
                    help="fit memory slopes over n >= this, of the peak less the peak at 16 tokens")
    ap.add_argument("--json", help="write every measurement here")
    ap.add_argument("--torch-malloc", choices=("steady", "glibc"), default="steady",
                    help="steady (default): torch's buffers stay mapped between runs; glibc: the allocator's default")
    a = ap.parse_args()
    ok, blas = blas_report()
    import torch
    print(f"machine: {platform.node()}, {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"load average before: {load_average()}")
    with open("/proc/cpuinfo") as f:
        model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "?")
    print(f"cpu: {model}; torch {torch.__version__}")
    for line in blas:
        print(line)
    print(f"torch's allocator: {a.torch_malloc}")
    if not ok:
        sys.exit("torch is not on OpenBLAS: the comparison would be unfair (see above).")
    d, h = a.d_model, a.heads
    ns = []
    n = a.min_n
    while n <= a.max_n:
        ns.append(n)
        n *= 2
    # What each process holds before the sizes matter (the binary, torch's import): the
    # peak at 16 tokens, subtracted before the memory slopes are fitted.
    base = {"standard": mhaviz_point(a.mhaviz, "standard", 16, d, h), "flash": mhaviz_point(a.mhaviz, "flash", 16, d, h),
            "torch": torch_point(16, d, h, a.torch_malloc)}
    print("baselines (16 tokens):", json.dumps(base), flush=True)
    rows = []
    for n in ns:
        row = {"n": n, "load_before": load_average()}
        row["standard"] = mhaviz_point(a.mhaviz, "standard", n, d, h)
        row["flash"] = mhaviz_point(a.mhaviz, "flash", n, d, h)
        if 2 * h * n * n * 4 <= a.torch_max_bytes:
            row["torch"] = torch_point(n, d, h, a.torch_malloc)
        else:
            row["torch"] = {"skipped": f"scores and weights would take {2 * h * n * n * 4 / 1e9:.1f} GB"}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(f"load average after: {load_average()}")

    def series(kind):
        return [(r["n"], r[kind]) for r in rows if "cpu_ms" in r[kind]]

    fits = {}
    tmin = a.time_fit_min_n or 4 * d
    for kind in ("standard", "flash", "torch"):
        pts = series(kind)
        fits[kind] = {"time_slope": slope(pts, "cpu_ms", tmin),
                      "memory_slope": slope(pts, "peak_bytes", a.memory_fit_min_n, base[kind].get("peak_bytes", 0)),
                      "time_points": sum(1 for n, _ in pts if n >= tmin),
                      "memory_points": sum(1 for n, _ in pts if n >= a.memory_fit_min_n),
                      "base_peak_bytes": base[kind].get("peak_bytes")}
    print(f"fits: time over n >= {tmin}, memory (peak less the 16-token peak) over n >= {a.memory_fit_min_n}")
    print("fitted slopes of log(time) and log(peak memory) against log(n):", json.dumps(fits))

    def cell(p, key, scale, fmt):
        if "refused" in p:
            return "refused (exit %d)" % p["refused"]
        if "skipped" in p:
            return "not run"
        x = p[key] / scale
        return fmt % x if x >= 10 else "%.3g" % x

    print()
    print("| n | standard: CPU ms | standard: peak MB | flash: CPU ms | flash: peak MB | torch: CPU ms | torch: peak MB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        s, f, t = r["standard"], r["flash"], r["torch"]
        print(f"| {r['n']} | {cell(s, 'cpu_ms', 1, '%.1f')} | {cell(s, 'peak_bytes', 1e6, '%.0f')} | "
              f"{cell(f, 'cpu_ms', 1, '%.1f')} | {cell(f, 'peak_bytes', 1e6, '%.0f')} | "
              f"{cell(t, 'cpu_ms', 1, '%.1f')} | {cell(t, 'peak_bytes', 1e6, '%.0f')} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"d_model": d, "heads": h, "torch_malloc": a.torch_malloc, "base": base, "rows": rows,
                       "fits": fits, "blas": blas,
                       "torch": torch.__version__, "cpu": model}, f, indent=1)


if __name__ == "__main__":
    main()
