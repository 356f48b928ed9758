#!/usr/bin/python3
"""mhaviz against PyTorch, measured side by side in one run.

Times `mhaviz bench` and torch.nn.MultiheadAttention (batch_first, need_weights=True,
average_attn_weights=False: the same work, per-head attention weights included) on the
same shapes, interleaved round by round, on 1 thread and then on 2, and prints the
medians and the ratio torch_ms / mhaviz_ms (> 1: mhaviz is faster).

Before timing it checks, once, that both sides compute the same numbers: the same
weights and input go through `mhaviz trace --norm none` and through torch, and the
attention output and the per-head weights must agree to 1e-5.

Honesty rules: torch must run on OpenBLAS (Debian's libopenblas0-openmp) rather than the
reference BLAS, which is about 50x slower; OPENBLAS_CORETYPE is removed from the
environment so OpenBLAS picks its own kernels for the CPU (--torch-isa avx2 holds it, and
ATen and MKL, to their AVX2 kernels instead: the torch of a CPU without AVX-512, for an
AVX2 build of mhaviz timed on an AVX-512 machine); torch's allocator keeps its buffers
mapped between runs (--torch-malloc glibc: glibc's default, which returns them to the OS
and faults them in again, a cost that varies run to run); both sides get the same
thread count. The report names the machine (lscpu's model name), the instruction set
mhaviz's kernels were built for (AVX-512, AVX2 or portable), the BLAS and torch's
version. --any-blas accepts another torch build (pip's torch links MKL): the
report then names that BLAS and version instead of refusing.

usage: /usr/bin/python3 scripts/compare_torch.py [--mhaviz build/app/mhaviz] [--rounds 3]
           [--seconds 0.5] [--threads 1,2] [--shapes 16x512x8,64x512x8,...] [--json OUT.json]
           [--any-blas] [--torch-isa native|avx2] [--torch-malloc steady|glibc]
"""
import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time


def _torch_isa_argument():
    """--torch-isa's value, read before argparse runs: it must be in the environment
    before torch (and with it OpenBLAS) is loaded, which read it once."""
    for i, arg in enumerate(sys.argv):
        if arg == "--torch-isa" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if arg.startswith("--torch-isa="):
            return arg.split("=", 1)[1]
    return "native"


def _cpu_vendor():
    try:
        with open("/proc/cpuinfo") as f:
            return next((l.split(":", 1)[1].strip() for l in f if l.startswith("vendor_id")), "")
    except OSError:
        return ""


# native: OpenBLAS (and MKL) pick their own kernels for this CPU. avx2: torch is held to
# the 256-bit kernels it would run on a CPU without AVX-512, so that an AVX2 build of
# mhaviz, timed on an AVX-512 machine, meets the torch a student's AVX2 laptop has:
# OpenBLAS's Zen (AMD) or Haswell (Intel) kernels, MKL's AVX2 ones, ATen's AVX2 dispatch.
TORCH_ISA = _torch_isa_argument()
for _var in ("OPENBLAS_CORETYPE", "MKL_ENABLE_INSTRUCTIONS", "ATEN_CPU_CAPABILITY"):
    os.environ.pop(_var, None)
if TORCH_ISA == "avx2":
    os.environ["OPENBLAS_CORETYPE"] = "Zen" if _cpu_vendor() == "AuthenticAMD" else "Haswell"
    os.environ["MKL_ENABLE_INSTRUCTIONS"] = "AVX2"
    os.environ["ATEN_CPU_CAPABILITY"] = "avx2"

import numpy as np  # noqa: E402
import torch  # noqa: E402

SHAPES = [(16, 512, 8), (64, 512, 8), (128, 768, 12), (512, 768, 12), (1024, 1024, 16)]
BLAS_ALTERNATIVE = "libblas.so.3-x86_64-linux-gnu"


def flops(n, d):
    return 8 * n * d * d + 4 * n * n * d


def run(args, env=None):
    return subprocess.run(args, capture_output=True, text=True, env=env, timeout=3600)


def blas_report(any_blas=False):
    """Which BLAS torch really uses: the alternatives link and the library mapped in."""
    lines, ok = [], True
    try:
        r = run(["update-alternatives", "--query", BLAS_ALTERNATIVE])
        value = next((l.split(":", 1)[1].strip() for l in r.stdout.splitlines() if l.startswith("Value:")), "")
    except OSError:  # no update-alternatives: not a Debian system
        value = ""
    lines.append(f"update-alternatives {BLAS_ALTERNATIVE}: {value or '(not found)'}")
    torch.mm(torch.ones(64, 64), torch.ones(64, 64))  # make sure the BLAS is loaded
    with open("/proc/self/maps") as f:
        mapped = sorted({l.split()[-1] for l in f if ("blas" in l.lower() or "mkl" in l.lower()) and "/" in l})
    lines.append("BLAS libraries mapped into this torch process: " + (", ".join(mapped) or "(none: linked into torch)"))
    info = torch.__config__.show()
    blas_info = "BLAS_INFO=" + (re.search(r"BLAS_INFO=([^,\s]+)", info) or [None, "?"])[1]
    # pip's torch links MKL statically: its build summary names the version
    mkl = next((l.strip(" -") for l in info.splitlines() if "Math Kernel Library" in l), "")
    lines.append(f"torch build: {blas_info}{', ' + mkl if mkl else ''}, torch {torch.__version__}")
    if not any("openblas" in m for m in mapped) and any_blas:
        lines.append("not OpenBLAS: torch's own BLAS (above), accepted by --any-blas; name it with the numbers.")
    elif not any("openblas" in m for m in mapped):
        ok = False
        lines.append("NOT OpenBLAS: torch would run on the reference BLAS (about 50x slower); install "
                     "libopenblas0-openmp (apt-get install -y libopenblas0-openmp) and make it the "
                     f"{BLAS_ALTERNATIVE} alternative.")
    elif not any("openblas-openmp" in m for m in mapped):
        lines.append("note: OpenBLAS is not the OpenMP build (libopenblas0-openmp).")
    else:
        lines.append("libopenblas0-openmp is the active BLAS.")
    return ok, lines


def cpu_model():
    """lscpu's model name (the machine a number was measured on), or the platform's."""
    try:
        r = run(["lscpu"], env=dict(os.environ, LC_ALL="C"))
        name = next((l.split(":", 1)[1].strip() for l in r.stdout.splitlines() if l.startswith("Model name:")), "")
    except OSError:
        name = ""
    return name or platform.processor() or platform.machine()


def cpu_vector_flags():
    """The CPU's widest vector extensions (x86 flags from /proc/cpuinfo)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((l.split(":", 1)[1].split() for l in f if l.startswith("flags")), [])
    except OSError:
        flags = []
    return [f for f in ("avx512f", "avx2", "fma") if f in flags]


def mhaviz_kernels(mhaviz):
    """(isa, line): the instruction set mhaviz's kernels were built for, from a tiny bench."""
    r = run([mhaviz, "bench", "--seq", "4", "--d-model", "8", "--heads", "2", "--repeat", "1"])
    if r.returncode != 0:
        raise SystemExit(f"mhaviz bench failed (exit {r.returncode}): {r.stderr.strip()}")
    lines = r.stdout.strip().splitlines()
    isa = json.loads(lines[-1]).get("isa", "unknown (a build from before bench named it)")
    return isa, next((l for l in lines if l.startswith("kernels:")), "kernels: " + isa)


def set_torch_malloc(mode):
    """steady: glibc's allocator keeps torch's buffers mapped (no mmap, no trim), as
    mhaviz keeps its workspaces. By default glibc returns every big buffer to the OS when
    torch frees it, and the next step faults it in again: on a virtual machine that took a
    training step of the large model from 0.69 s to 1.4-2.5 s of torch's CPU time, varying
    step to step, a cost of the allocator, not of torch's kernels. Returns the report line."""
    if mode == "glibc":
        return "torch's allocator: glibc's default (big buffers returned to the OS and faulted in again each step)"
    import ctypes
    libc = ctypes.CDLL("libc.so.6")
    m_trim_threshold, m_top_pad, m_mmap_max = -1, -2, -4
    ok = (libc.mallopt(m_mmap_max, 0) == 1 and libc.mallopt(m_trim_threshold, 1 << 30) == 1
          and libc.mallopt(m_top_pad, 64 << 20) == 1)
    if not ok:
        return "torch's allocator: glibc's default (mallopt refused the steady settings)"
    return "torch's allocator: steady (glibc mallopt: no mmap, no trim; its buffers stay mapped between runs)"


def machine_report(mhaviz, any_blas=False, torch_malloc="steady"):
    """The lines every table's heading needs: machine, mhaviz's ISA path, BLAS, torch.
    Returns (ok, isa, lines); ok is False when torch would not run on OpenBLAS."""
    isa, kernels = mhaviz_kernels(mhaviz)
    lines = [f"machine: {cpu_model()} ({os.cpu_count()} CPUs; vector extensions: "
             f"{', '.join(cpu_vector_flags()) or 'none found'}), load average {load_average()[0]:.2f}",
             f"mhaviz {kernels} [isa {isa}]"]
    ok, blas = blas_report(any_blas)
    lines += blas + torch_kernels_report() + [set_torch_malloc(torch_malloc)]
    return ok, isa, lines


def openblas_core():
    """The kernel set OpenBLAS chose (openblas_get_corename), or "" when torch's BLAS is
    not OpenBLAS."""
    import ctypes
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "libopenblas" in l and "/" in l})
    for lib in libs:
        try:
            get = ctypes.CDLL(lib).openblas_get_corename
            get.restype = ctypes.c_char_p
            return get().decode()
        except (OSError, AttributeError):
            continue
    return ""


def torch_kernels_report():
    """Which vector kernels torch runs: the BLAS's and ATen's own (--torch-isa)."""
    core = openblas_core()
    aten = next((l.split(":", 1)[1].strip() for l in torch.__config__.show().splitlines()
                 if "CPU capability usage" in l), "not reported")
    if TORCH_ISA == "avx2":
        head = ("torch held to AVX2 (--torch-isa avx2), as on a CPU without AVX-512: "
                f"OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']}, MKL_ENABLE_INSTRUCTIONS=AVX2, "
                "ATEN_CPU_CAPABILITY=avx2")
    else:
        head = "torch's own choice of kernels for this CPU (OPENBLAS_CORETYPE unset)"
    return [head, f"OpenBLAS kernels: {core or '(not OpenBLAS)'}; ATen CPU capability: {aten}"]


def torch_weights_to_npz(mha, x, path_w, path_x):
    d = mha.embed_dim
    W = mha.in_proj_weight.detach().numpy()
    b = mha.in_proj_bias.detach().numpy()
    # torch computes x @ W.T (column-vector convention); mhaviz's W_q is (d_model, d_model)
    # with Q = x W_q (row-vector convention): W_q = in_proj_weight[:d].T.
    np.savez(path_w, W_q=W[:d].T, W_k=W[d:2 * d].T, W_v=W[2 * d:].T,
             b_q=b[:d], b_k=b[d:2 * d], b_v=b[2 * d:],
             W_o=mha.out_proj.weight.detach().numpy().T, b_o=mha.out_proj.bias.detach().numpy())
    np.savez(path_x, x=x.numpy())


def check_same_numbers(mhaviz, n, d, h, seed=0):
    """Same weights and input through both: returns (attn_out error, attn error)."""
    torch.manual_seed(seed)
    mha = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
    with torch.no_grad():  # torch starts biases at 0: make them count
        mha.in_proj_bias.uniform_(-0.5, 0.5)
        mha.out_proj.bias.uniform_(-0.5, 0.5)
    x = torch.randn(1, n, d)
    with torch.inference_mode():
        out, attn = mha(x, x, x, need_weights=True, average_attn_weights=False)
    with tempfile.TemporaryDirectory() as tmp:
        pw, px, po = (os.path.join(tmp, f) for f in ("w.npz", "x.npz", "trace.npz"))
        torch_weights_to_npz(mha, x, pw, px)
        r = run([mhaviz, "trace", "--input", px, "--weights", pw, "--heads", str(h), "--norm", "none",
                 "--npz", po, "--quiet"])
        if r.returncode != 0:
            raise SystemExit(f"mhaviz trace failed (exit {r.returncode}): {r.stderr.strip()}")
        z = np.load(po)
        return float(np.abs(z["attn_out"] - out.numpy()).max()), float(np.abs(z["attn"] - attn.numpy()).max())


def time_mhaviz(mhaviz, n, d, h, threads, seconds):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    # A short calibration run sets --repeat so one measurement takes about `seconds`.
    r = run([mhaviz, "bench", "--seq", str(n), "--d-model", str(d), "--heads", str(h),
             "--threads", str(threads), "--repeat", "3"], env)
    if r.returncode != 0:
        raise SystemExit(f"mhaviz bench failed (exit {r.returncode}): {r.stderr.strip()}")
    est = json.loads(r.stdout.strip().splitlines()[-1])["median_ms"]
    repeat = max(5, min(2000, int(seconds * 1000 / max(est, 1e-3))))
    r = run([mhaviz, "bench", "--seq", str(n), "--d-model", str(d), "--heads", str(h),
             "--threads", str(threads), "--repeat", str(repeat)], env)
    if r.returncode != 0:
        raise SystemExit(f"mhaviz bench failed (exit {r.returncode}): {r.stderr.strip()}")
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j["median_ms"], j["min_ms"], j["cpu_median_ms"]


class TorchSide:
    def __init__(self, n, d, h, seed=0):
        torch.manual_seed(seed)
        self.mha = torch.nn.MultiheadAttention(d, h, batch_first=True).eval()
        self.x = torch.randn(1, n, d)

    def once(self):
        self.mha(self.x, self.x, self.x, need_weights=True, average_attn_weights=False)

    def time(self, threads, seconds):
        torch.set_num_threads(threads)
        with torch.inference_mode():
            t0 = time.perf_counter()
            for i in range(50):  # warm-up, like mhaviz bench's
                self.once()
                if i >= 2 and time.perf_counter() - t0 > 0.2:
                    break
            ms, cpu = [], []
            start = time.perf_counter()
            while len(ms) < 5 or (time.perf_counter() - start < seconds and len(ms) < 2000):
                c = time.thread_time()
                t = time.perf_counter()
                self.once()
                ms.append((time.perf_counter() - t) * 1e3)
                cpu.append((time.thread_time() - c) * 1e3)
        return statistics.median(ms), min(ms), statistics.median(cpu)


def load_average():
    try:
        return os.getloadavg()
    except OSError:
        return (float("nan"),) * 3


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mhaviz", default=os.path.join(here, "..", "build", "app", "mhaviz"))
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds per shape (default 3)")
    ap.add_argument("--seconds", type=float, default=0.5, help="time per measurement (default 0.5)")
    ap.add_argument("--threads", default="1,2", help="thread counts, in order (default 1,2)")
    ap.add_argument("--shapes", default=",".join(f"{n}x{d}x{h}" for n, d, h in SHAPES),
                    help="seq x d_model x heads, comma-separated")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--torch-malloc", choices=("steady", "glibc"), default="steady",
                    help="steady (default): torch's buffers stay mapped between runs; glibc: the "
                         "allocator's default, which returns them to the OS and faults them in again")
    ap.add_argument("--torch-isa", choices=("native", "avx2"), default="native",
                    help="avx2: torch's BLAS and ATen held to their AVX2 kernels, as on a CPU without "
                         "AVX-512 (for an AVX2 build of mhaviz timed on an AVX-512 machine)")
    ap.add_argument("--any-blas", action="store_true",
                    help="time a torch that does not use OpenBLAS (e.g. pip's, with MKL) instead of refusing")
    a = ap.parse_args()
    mhaviz = os.path.abspath(a.mhaviz)
    if not os.access(mhaviz, os.X_OK):
        sys.exit(f"compare_torch: no mhaviz binary at {mhaviz}; build it first or pass --mhaviz PATH.")
    shapes = [tuple(int(v) for v in s.split("x")) for s in a.shapes.split(",")]
    thread_counts = [int(t) for t in a.threads.split(",")]

    ok, isa, lines = machine_report(mhaviz, a.any_blas, a.torch_malloc)
    print(lines[0])
    for l in lines[1:]:
        print("  " + l)
    if not ok:
        sys.exit(1)

    # One independent check that the two sides compute the same function.
    print("\nsame numbers? mhaviz trace --weights/--input --norm none vs torch, same weights:")
    worst = 0.0
    for n, d, h in [(16, 512, 8), (33, 96, 12)]:
        e_out, e_attn = check_same_numbers(mhaviz, n, d, h)
        worst = max(worst, e_out, e_attn)
        print(f"  seq {n}, d_model {d}, heads {h}: max |attn_out diff| {e_out:.2e}, "
              f"max |attn diff| {e_attn:.2e}")
    if worst > 1e-5:
        sys.exit(f"compare_torch: the outputs differ by {worst:.3g} (> 1e-5); timings of different "
                 "functions would mean nothing.")
    print("  agree to 1e-5: both time the same function.")

    results = []
    for threads in thread_counts:
        print(f"\n{threads} thread{'s' if threads > 1 else ''}: {a.rounds} interleaved rounds per shape, "
              f"~{a.seconds} s per measurement")
        for n, d, h in shapes:
            side = TorchSide(n, d, h)
            ours, theirs, ours_min, theirs_min, ours_cpu, theirs_cpu = [], [], [], [], [], []
            for r in range(a.rounds):
                # Alternate who goes first, so drift in the machine's load hits both alike.
                order = ("mhaviz", "torch") if r % 2 == 0 else ("torch", "mhaviz")
                for who in order:
                    if who == "mhaviz":
                        med, mn, cpu = time_mhaviz(mhaviz, n, d, h, threads, a.seconds)
                        ours.append(med)
                        ours_min.append(mn)
                        ours_cpu.append(cpu)
                    else:
                        med, mn, cpu = side.time(threads, a.seconds)
                        theirs.append(med)
                        theirs_min.append(mn)
                        theirs_cpu.append(cpu)
            row = {"threads": threads, "seq": n, "d_model": d, "heads": h,
                   "mhaviz_ms": statistics.median(ours), "torch_ms": statistics.median(theirs),
                   "mhaviz_min_ms": min(ours_min), "torch_min_ms": min(theirs_min),
                   "mhaviz_rounds_ms": ours, "torch_rounds_ms": theirs,
                   # CPU time of the calling thread: immune to waiting for a CPU on a busy
                   # machine, and the whole cost when running on one thread.
                   "mhaviz_cpu_ms": statistics.median(ours_cpu), "torch_cpu_ms": statistics.median(theirs_cpu)}
            row["ratio"] = row["torch_ms"] / row["mhaviz_ms"]
            row["cpu_ratio"] = row["torch_cpu_ms"] / row["mhaviz_cpu_ms"]
            results.append(row)
            extra = (f"; CPU time {row['mhaviz_cpu_ms']:.3f} vs {row['torch_cpu_ms']:.3f} ms, ratio "
                     f"{row['cpu_ratio']:.2f}") if threads == 1 else ""
            print(f"  ({n}, {d}, {h}): mhaviz {row['mhaviz_ms']:.3f} ms, torch {row['torch_ms']:.3f} ms, "
                  f"ratio {row['ratio']:.2f}{extra}", flush=True)

    print(f"\nload average at the end: {load_average()[0]:.2f} (other work on the machine adds noise; "
          "medians of interleaved rounds)")
    head = ["threads", "(n, d_model, heads)", "mhaviz ms", "torch ms", "torch/mhaviz",
            "mhaviz GFLOP/s", "torch GFLOP/s", "mhaviz min", "torch min", "CPU ms mhaviz/torch",
            "CPU ratio"]
    rows = []
    for r in results:
        f = flops(r["seq"], r["d_model"])
        rows.append([str(r["threads"]), f"({r['seq']}, {r['d_model']}, {r['heads']})",
                     f"{r['mhaviz_ms']:.3f}", f"{r['torch_ms']:.3f}", f"{r['ratio']:.2f}x",
                     f"{f / r['mhaviz_ms'] / 1e6:.1f}", f"{f / r['torch_ms'] / 1e6:.1f}",
                     f"{r['mhaviz_min_ms']:.3f}", f"{r['torch_min_ms']:.3f}",
                     f"{r['mhaviz_cpu_ms']:.3f} / {r['torch_cpu_ms']:.3f}" if r["threads"] == 1 else "-",
                     f"{r['cpu_ratio']:.2f}x" if r["threads"] == 1 else "-"])
    width = [max(len(x) for x in col) for col in zip(head, *rows)]
    fmt = lambda cells: " | ".join(c.rjust(w) for c, w in zip(cells, width))  # noqa: E731
    print(fmt(head))
    print("-+-".join("-" * w for w in width))
    for r in rows:
        print(fmt(r))
    print("ms: wall-clock medians of interleaved rounds; FLOPs per run: 8*n*d^2 + 4*n^2*d; a ratio > 1 "
          "means mhaviz is faster.\nCPU ms (1 thread only): the calling thread's CPU time per run, which "
          "leaves out time spent waiting for a CPU when other work shares the machine.")
    if a.json:  # temporary file + rename: never a half-written file
        tmp = a.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"machine": lines, "isa": isa, "torch_isa": TORCH_ISA, "torch_malloc": a.torch_malloc,
                       "load_average_end": load_average(), "results": results}, f,
                      indent=1)
        os.replace(tmp, a.json)


if __name__ == "__main__":
    main()
