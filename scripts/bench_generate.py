#!/usr/bin/python3
"""Time per generated piece with and without the KV cache, from `mhaviz generate --json`.

Runs `mhaviz generate --threads 1 --tokens 63` (from <s>, so the pieces land at
positions 2 to 64) `--runs` times and prints, at the chosen positions, the median
CPU time of the pass that chose the piece: the cached decode step, and the full
recomputation of the sequence that `generate` runs beside it; their ratio; the FLOPs
both ways; and the cache's bytes. CPU time of the one thread, so that time spent
waiting for a core on a busy machine is left out; the load average is printed too.

usage: /usr/bin/python3 scripts/bench_generate.py [--mhaviz build/app/mhaviz]
           [--model mhaviz-small] [--runs 21] [--positions 8,32,64] [--prompt TEXT]
"""
import argparse
import json
import os
import platform
import statistics
import subprocess


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mhaviz", default="build/app/mhaviz")
    ap.add_argument("--model", default="mhaviz-small")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--positions", default="8,32,64")
    ap.add_argument("--prompt", default="")
    a = ap.parse_args()
    positions = [int(p) for p in a.positions.split(",")]
    cached = {p: [] for p in positions}
    full = {p: [] for p in positions}
    last = None
    load_before = os.getloadavg()
    for _ in range(a.runs):
        r = subprocess.run([a.mhaviz, "generate", "--model", a.model, "--prompt", a.prompt, "--tokens", "1024",
                            "--threads", "1", "--json"], capture_output=True, text=True, check=True)
        last = json.loads(r.stdout)
        for s in last["steps"]:
            if s["position"] in cached:
                cached[s["position"]].append(s["cpu_ms_cached"])
                full[s["position"]].append(s["cpu_ms_full"])
    load_after = os.getloadavg()
    steps = {s["position"]: s for s in last["steps"]}
    print(f"{cpu_name()}, {os.cpu_count()} cores; load average {load_before[0]:.1f} before, {load_after[0]:.1f} after; "
          f"1 thread; median CPU ms of {a.runs} runs")
    print(f"{'position':>8}  {'cached ms':>10}  {'full ms':>10}  {'ratio':>6}  {'cached FLOPs':>13}  {'full FLOPs':>13}")
    for p in positions:
        if not cached[p]:
            print(f"{p:>8}  (not reached: the context is {last['context']} pieces)")
            continue
        c, f = statistics.median(cached[p]), statistics.median(full[p])
        s = steps[p]
        print(f"{p:>8}  {c:>10.3f}  {f:>10.3f}  {f / c:>5.1f}x  {s['flops_cached']:>13,.0f}  {s['flops_full']:>13,.0f}")
    c = last["cache"]
    print(f"KV cache after {len(last['ids'])} pieces: 2 x {c['layers']} layers x {c['kv_heads']} kv_heads x "
          f"{c['head_dim']} head_dim x {c['n']} pieces x 4 bytes = {c['bytes']:,} bytes")


if __name__ == "__main__":
    main()
