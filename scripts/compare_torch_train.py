#!/usr/bin/python3
"""One training step of mhaviz against PyTorch, measured side by side in one run.

A training step is the forward pass over a batch, the mean cross-entropy, the backward
pass, global-norm clipping and one AdamW update. For each model below, the same
checkpoint (written by `mhaviz train --steps 0`) is rebuilt in torch by
tests/cli/torch_model.py, and both sides step on the same batch: `mhaviz bench --train`
and the torch loop, interleaved round by round, on 1 thread and then on 2. Printed:
the medians and the ratio torch_ms / mhaviz_ms (> 1: mhaviz is faster), and on 1 thread
the same for the calling thread's CPU time (immune to waiting for a core when the
machine is shared).

Honesty rules, as scripts/compare_torch.py: torch must run on OpenBLAS (Debian's
libopenblas0-openmp); OPENBLAS_CORETYPE is removed from the environment (--torch-isa avx2:
set to the AVX2 kernels of a CPU without AVX-512); torch's buffers stay mapped between steps (--torch-malloc
glibc: glibc's default, faulting them in again each step); both sides get
the same thread count; torch runs in float32 with torch.optim.AdamW (foreach off, the
default on CPU in torch 1.13) and clip_grad_norm_.

The grid (--grid): every {attention only, encoder block} x {pre, post} x {ReLU, GELU}
(the activation only for the encoder block) at each size of SIZES, each vocabulary of
--vocabs, one target per position (a language model's head), on 1 thread, CPU time;
printed as a Markdown table (docs/performance.md). The torch side there is the
fastest plain torch: F.layer_norm and F.cross_entropy(ignore_index=-1) in place of
tests/cli/torch_model.py's spelled-out LayerNorm and masked mean (--torch-plain keeps
those, as the --models runs do).

usage: /usr/bin/python3 scripts/compare_torch_train.py [--mhaviz build/app/mhaviz]
           [--rounds 5] [--repeat 20] [--threads 1,2] [--models teaching,teaching1,teaching2,large,small]
       /usr/bin/python3 scripts/compare_torch_train.py --grid [--sizes teaching,...] [--vocabs 11,64,4000]
           [--variants attention-pre,...] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cli"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# First: it sets OPENBLAS_CORETYPE and the like (--torch-isa) before torch is loaded.
import compare_torch  # noqa: E402  (the machine, ISA and BLAS report)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import torch_model  # noqa: E402

# name: (flags shared by both sides, batch, seq)
MODELS = {
    # the teaching size: the offsets demo's model
    "teaching": (["--layers", "1", "--heads", "2", "--d-model", "16", "--norm", "pre", "--pos", "learned",
                  "--mask", "causal", "--vocab", "11"], 128, 16),
    "teaching1": (["--layers", "1", "--heads", "4", "--d-model", "64", "--norm", "pre", "--block", "encoder",
                   "--pos", "learned", "--mask", "causal", "--vocab", "11"], 128, 16),
    "teaching2": (["--layers", "2", "--heads", "4", "--d-model", "64", "--norm", "pre", "--block", "encoder",
                   "--pos", "learned", "--mask", "causal", "--vocab", "11"], 128, 16),
    "large": (["--layers", "4", "--heads", "8", "--d-model", "256", "--norm", "pre", "--block", "encoder",
               "--pos", "learned", "--mask", "causal", "--vocab", "11"], 32, 128),
    # mhaviz-small's shape: GELU, a vocabulary of 4000, one target (a language model)
    "small": (["--layers", "2", "--heads", "4", "--d-model", "128", "--norm", "pre", "--block", "encoder",
               "--activation", "gelu", "--pos", "learned", "--mask", "causal", "--vocab", "4000", "--offsets", "1"],
              64, 64),
}

# The grid's sizes: name -> (shape flags, batch, seq).
SIZES = {
    "teaching": (["--layers", "1", "--heads", "2", "--d-model", "16"], 128, 16),
    "teaching1": (["--layers", "1", "--heads", "4", "--d-model", "64"], 128, 16),
    "teaching2": (["--layers", "2", "--heads", "4", "--d-model", "64"], 128, 16),
    "small": (["--layers", "2", "--heads", "4", "--d-model", "128"], 64, 64),  # mhaviz-small's shape
    "large": (["--layers", "4", "--heads", "8", "--d-model", "256"], 32, 128),
}
# The grid's variants: name -> flags.
VARIANTS = {
    "attention-pre": ["--block", "attention", "--norm", "pre"],
    "attention-post": ["--block", "attention", "--norm", "post"],
    "relu-pre": ["--block", "encoder", "--norm", "pre", "--activation", "relu"],
    "relu-post": ["--block", "encoder", "--norm", "post", "--activation", "relu"],
    "gelu-pre": ["--block", "encoder", "--norm", "pre", "--activation", "gelu"],
    "gelu-post": ["--block", "encoder", "--norm", "post", "--activation", "gelu"],
}


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=3600)


def mhaviz_step_ms(mhaviz, flags, batch, seq, threads, repeat):
    r = run([mhaviz, "bench", "--train", "--batch", str(batch), "--seq", str(seq), "--threads", str(threads),
             "--repeat", str(repeat)] + flags)
    if r.returncode != 0:
        raise SystemExit(f"mhaviz bench --train failed: {r.stderr}")
    j = json.loads(r.stdout.strip().splitlines()[-1])
    return j["median_ms"], j["cpu_median_ms"]


def fast_layer_norm(x, gamma, beta, eps):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], gamma, beta, eps)


def fast_forward_loss(cfg, P, tokens, targets):
    """torch_model.forward_loss with torch's fused LayerNorm and cross-entropy."""
    saved = torch_model.layer_norm
    torch_model.layer_norm = fast_layer_norm
    try:
        all_logits = torch_model.forward_logits(cfg, P, tokens)
    finally:
        torch_model.layer_norm = saved
    total = 0
    for k, logits in enumerate(all_logits):
        total = total + torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                          targets[:, :, k].reshape(-1), ignore_index=-1,
                                                          reduction="sum")
    return total / int((targets >= 0).sum())


class TorchStep:
    def __init__(self, ckpt, batch, seq, vocab, lr=3e-3, fast=False):
        self.loss = fast_forward_loss if fast else torch_model.forward_loss
        self.cfg, params = torch_model.load_checkpoint(ckpt)
        self.P = torch_model.to_torch(params, torch.float32)
        decay = [p for p in self.P.values() if p.dim() >= 2]
        keep = [p for p in self.P.values() if p.dim() < 2]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": keep, "weight_decay": 0.0}],
                                     lr=lr)
        rng = np.random.default_rng(0)
        tokens, targets = torch_model.random_batch(rng, batch, seq, vocab, self.cfg["num_targets"])
        self.tokens = torch.tensor(tokens, dtype=torch.int64)
        self.targets = torch.tensor(targets, dtype=torch.int64)

    def step(self):
        loss = self.loss(self.cfg, self.P, self.tokens, self.targets)
        self.opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(self.P.values()), 1.0)
        self.opt.step()

    def median_ms(self, repeat):
        """Median wall-clock ms and median CPU ms of the calling thread per step."""
        self.step()  # warm-up
        times, cpu = [], []
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.thread_time()
            self.step()
            cpu.append((time.thread_time() - c0) * 1000)
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times), statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mhaviz", default="build/app/mhaviz")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per model (default 5; the grid's 3)")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--models", default="teaching,teaching1,teaching2,large")
    ap.add_argument("--grid", action="store_true", help="the grid of sizes x variants x vocabularies (1 thread)")
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--vocabs", default="11,64,4000")
    ap.add_argument("--variants", default=",".join(VARIANTS))
    ap.add_argument("--torch-plain", action="store_true", help="the grid's torch with torch_model.py's own LayerNorm")
    ap.add_argument("--grid-ms", type=float, default=300.0, help="the grid's mhaviz CPU ms per measurement")
    ap.add_argument("--torch-malloc", choices=("steady", "glibc"), default="steady",
                    help="steady (default): torch's buffers stay mapped between steps; glibc: the allocator's default")
    ap.add_argument("--torch-isa", choices=("native", "avx2"), default="native",
                    help="avx2: torch held to its AVX2 kernels, as on a CPU without AVX-512")
    ap.add_argument("--any-blas", action="store_true",
                    help="time a torch that does not use OpenBLAS (e.g. pip's, with MKL) instead of refusing")
    args = ap.parse_args()
    ok, isa, lines = compare_torch.machine_report(os.path.abspath(args.mhaviz), args.any_blas,
                                                   args.torch_malloc)
    print(lines[0])
    for l in lines[1:]:
        print("  " + l)
    if not ok:
        sys.exit(1)
    args.machine, args.isa = lines, isa
    if args.grid:
        grid(args)
        return
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models.split(","):
            flags, batch, seq = MODELS[name]
            ckpt = os.path.join(tmp, name + ".npz")
            r = run([args.mhaviz, "train", "--task", "offsets", "--steps", "0", "--seq", str(seq), "--batch", str(batch),
                     "--out", ckpt]
                    + flags)
            if r.returncode != 0:
                raise SystemExit(f"mhaviz train --steps 0 failed: {r.stderr}")
            repeat = max(3, args.repeat // 4 if name in ("large", "small") else args.repeat)
            for threads in [int(t) for t in args.threads.split(",")]:
                torch.set_num_threads(threads)
                ts = TorchStep(ckpt, batch, seq, int(flags[flags.index("--vocab") + 1]))
                mine, theirs = [], []
                for _ in range(args.rounds or 5):
                    mine.append(mhaviz_step_ms(args.mhaviz, flags, batch, seq, threads, repeat))
                    theirs.append(ts.median_ms(repeat))
                m = statistics.median(x[0] for x in mine)
                t = statistics.median(x[0] for x in theirs)
                mc = statistics.median(x[1] for x in mine)
                tc = statistics.median(x[1] for x in theirs)
                rows.append((name, threads, batch, seq, m, t, mc, tc))
                # CPU time is the calling thread's: on 1 thread it is the step's cost without
                # the time spent waiting for a core on a shared machine; on 2 it leaves out
                # the helper thread, so only the wall-clock ratio compares there.
                cpu = f"   cpu {mc:8.3f} / {tc:8.3f} ms ratio {tc / mc:5.2f}x" if threads == 1 else ""
                print(f"{name:10s} threads {threads}  batch {batch} seq {seq}:  mhaviz {m:9.3f} ms   "
                      f"torch {t:9.3f} ms   ratio {t / m:5.2f}x{cpu}", flush=True)
    print(json.dumps({"machine": args.machine, "isa": args.isa, "torch_isa": compare_torch.TORCH_ISA,
                      "torch_malloc": args.torch_malloc,
                      "rows": [{"model": n, "threads": th, "batch": b, "seq": s, "mhaviz_ms": m, "torch_ms": t,
                                "ratio": t / m, "mhaviz_cpu_ms": mc, "torch_cpu_ms": tc}
                               for n, th, b, s, m, t, mc, tc in rows]}))


def grid(args):
    """Each cell: rounds of (mhaviz bench --train, then the torch loop), 1 thread, the
    calling thread's CPU time; the median over the rounds of each round's median. The
    steps column: rounds x timed steps per round, per side."""
    torch.set_num_threads(1)
    rounds = args.rounds or 3
    print(f"rounds {rounds}; {os.uname().nodename}; load {os.getloadavg()[0]:.1f} at the start; mhaviz kernels: "
          f"{args.isa}; torch kernels: {compare_torch.TORCH_ISA}; torch's allocator: {args.torch_malloc}",
          flush=True)
    print("| size | batch x seq | variant | vocab | torch CPU ms | mhaviz CPU ms | ratio | steps |")
    print("|---|---|---|---|---|---|---|---|", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            shape, batch, seq = SIZES[size]
            for variant in args.variants.split(","):
                for vocab in [int(v) for v in args.vocabs.split(",")]:
                    flags = shape + VARIANTS[variant] + ["--pos", "learned", "--mask", "causal", "--vocab", str(vocab),
                                                         "--offsets", "1"]
                    ckpt = os.path.join(tmp, "grid.npz")
                    r = run([args.mhaviz, "train", "--task", "offsets", "--steps", "0", "--seq", str(seq), "--batch",
                             str(batch), "--out", ckpt] + flags)
                    if r.returncode == 2 and "training memory cap" in r.stderr:
                        # a size mhaviz refuses (over its 1.5 GB budget): nothing to time
                        rows.append({"size": size, "batch": batch, "seq": seq, "variant": variant, "vocab": vocab,
                                     "refused": r.stderr.strip()})
                        print(f"| {size} | {batch} x {seq} | {variant} | {vocab} | - | refused: over the training "
                              "memory cap | - | - |", flush=True)
                        continue
                    if r.returncode != 0:
                        raise SystemExit(f"mhaviz train --steps 0 failed: {r.stderr}")
                    ts = TorchStep(ckpt, batch, seq, vocab, fast=not args.torch_plain)
                    # Steps per measurement: about --grid-ms of mhaviz's CPU time (2 to 20).
                    probe = mhaviz_step_ms(args.mhaviz, flags, batch, seq, 1, 1)[1]
                    repeat = max(2, min(20, int(args.grid_ms / max(probe, 1e-3))))
                    mine, theirs = [], []
                    for _ in range(rounds):
                        mine.append(mhaviz_step_ms(args.mhaviz, flags, batch, seq, 1, repeat)[1])
                        theirs.append(ts.median_ms(repeat)[1])
                    mc, tc = statistics.median(mine), statistics.median(theirs)
                    rows.append({"size": size, "batch": batch, "seq": seq, "variant": variant, "vocab": vocab,
                                 "torch_cpu_ms": tc, "mhaviz_cpu_ms": mc, "ratio": tc / mc, "steps": repeat,
                                 "rounds": rounds})
                    print(f"| {size} | {batch} x {seq} | {variant} | {vocab} | {tc:.2f} | {mc:.2f} | {tc / mc:.2f}x "
                          f"| {rounds} x {repeat} |", flush=True)
    print(f"load {os.getloadavg()[0]:.1f} at the end")
    print(json.dumps({"machine": args.machine, "isa": args.isa, "torch_isa": compare_torch.TORCH_ISA,
                      "torch_malloc": args.torch_malloc, "rows": rows}))


if __name__ == "__main__":
    main()
