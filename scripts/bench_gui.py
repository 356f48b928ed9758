#!/usr/bin/env python3
"""Benchmarks of the desktop app under Xvfb + Mesa llvmpipe (not a test: no limits).

    scripts/bench_gui.py [--mhaviz build/app/mhaviz] [--repeats 3]

Runs `mhaviz gui --frames N --stats FILE` for the issue's three cases and prints the
median over repeats of each run's median frame time, recompute time and CPU time
per frame. Wall times suffer when other processes share the CPUs; the CPU time per
frame (all the app's threads, llvmpipe's included) much less.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORDS = ("the cat sat on a mat while dogs ran across green fields and birds sang songs about "
         "old trees near quiet rivers under bright skies").split()


def sentence(n):
    return " ".join(WORDS[(i * 7) % len(WORDS)] for i in range(n))


CASES = [
    # name, gui flags, frames, what to read
    ("16 heads x 64 tokens, 1600x1000, idle frames",
     ["--heads", "16", "--d-model", "512", "--sentence", sentence(64), "--width", "1600", "--height", "1000"], 300),
    ("16 heads x 64 tokens, 1600x1000, --churn (recompute every frame)",
     ["--heads", "16", "--d-model", "512", "--sentence", sentence(64), "--width", "1600", "--height", "1000",
      "--churn"], 300),
    ("recompute: 64 tokens x d_model 512 x 8 heads (--churn)",
     ["--heads", "8", "--d-model", "512", "--sentence", sentence(64), "--width", "1600", "--height", "1000",
      "--churn"], 300),
    ("512 tokens x 16 heads, 1600x1000, idle frames",
     ["--heads", "16", "--d-model", "512", "--sentence", sentence(512), "--width", "1600", "--height", "1000"], 120),
    ("512 tokens x 16 heads, 1600x1000, --churn",
     ["--heads", "16", "--d-model", "512", "--sentence", sentence(512), "--width", "1600", "--height", "1000",
      "--churn"], 60),
]

KEYS = ["median_frame_ms", "median_frame_cpu_ms", "median_recompute_ms", "median_upload_ms",
        "median_ui_ms", "median_draw_ms", "median_swap_ms"]


def run(mhaviz, flags, frames, tmp):
    stats = os.path.join(tmp, "stats.json")
    cmd = ["xvfb-run", "-a", "-s", "-screen 0 1920x1080x24", mhaviz, "gui", "--frames", str(frames),
           "--stats", stats, *flags]
    subprocess.run(cmd, check=True)
    with open(stats) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mhaviz", default=os.path.join(os.path.dirname(__file__), "..", "build", "app", "mhaviz"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--only", help="run only cases whose name contains this text")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags, frames in CASES:
            if args.only and args.only not in name:
                continue
            runs = [run(args.mhaviz, flags, frames, tmp) for _ in range(args.repeats)]
            print(f"{name}  [{runs[0]['gl_renderer']}, {runs[0]['framebuffer'][0]}x{runs[0]['framebuffer'][1]}, "
                  f"seq {runs[0]['seq']}, {frames} frames x {args.repeats} runs]")
            for k in KEYS:
                vals = [r[k] for r in runs]
                print(f"  {k:22s} {statistics.median(vals):8.2f}   runs: {', '.join(f'{v:.2f}' for v in vals)}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
