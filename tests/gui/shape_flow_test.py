#!/usr/bin/env python3
"""GUI test of the Shape flow view: the table it shows, for a batch of B sentences,
against `mhaviz trace --json`'s shape flow of the one sentence the window runs.

    shape_flow_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402

check = g.check

# Lesson 000's x = torch.randn(32, 10, 512) with 8 heads: a sentence of 10 tokens.
SENTENCE = "the cat sat on the mat and the dog ran"


def test_batch(mhaviz, d):
    """Batch B: every shape's first axis is B and the rest the sentence's; the FLOPs are
    B times the sentence's; the parameters are the same (shared by the batch)."""
    args = ["--sentence", SENTENCE, "--heads", "8", "--d-model", "512"]
    ref = os.path.join(d, "trace.json")
    subprocess.run([mhaviz, "trace", "--quiet", "--json", ref, *args], check=True, cwd=d)
    flow = g.read_json(ref)["shape_flow"]
    check(flow[0]["shape"] == [1, 10, 512], f"the sentence is not 10 tokens: {flow[0]['shape']}")
    for batch in (1, 32):
        j = g.dump_run(mhaviz, d, *args, "--view", "shape-flow", "--flow-batch", str(batch), name=f"b{batch}.json")
        v = j["views"]["shape_flow_view"]
        check(v["batch"] == batch, f"batch {v['batch']}, asked {batch}")
        check(len(v["rows"]) == len(flow), f"{len(v['rows'])} rows shown, the trace has {len(flow)}")
        for shown, one in zip(v["rows"], flow):
            where = f"batch {batch}, {one['step']}"
            check(shown["tensor"] == one["tensor"], f"{where}: tensor {shown['tensor']}")
            check(shown["shape"] == [batch] + one["shape"][1:], f"{where}: shape {shown['shape']} from {one['shape']}")
            check(shown["flops"] == batch * one["flops"], f"{where}: FLOPs {shown['flops']} != {batch} x {one['flops']}")
            check(shown["param_count"] == one["param_count"], f"{where}: parameters {shown['param_count']}")
        split = next(r for r in v["rows"] if r["step"] == "split heads")
        print(f"batch {batch}: split heads {split['shape']}, total FLOPs {sum(r['flops'] for r in v['rows']):,}")
    check(split["shape"] == [32, 8, 10, 64], f"lesson 000's (32, 8, 10, 64): {split['shape']}")


def test_bad_batch(mhaviz, d):
    """A batch out of 1..4096 is refused before the window opens, with the range."""
    for bad in ("0", "5000", "many"):
        r = subprocess.run([mhaviz, "gui", "--flow-batch", bad, "--frames", "1"], capture_output=True, text=True, cwd=d,
                           timeout=60)
        check(r.returncode in (1, 2) and "--flow-batch" in r.stderr, f"--flow-batch {bad}: {r.returncode} {r.stderr!r}")


def test_presented_whole(mhaviz, d):
    """Presented on a projector (1280 x 800 at 150%, 1920 x 1080 at 200%, in Korean), no
    cell of the table is cut short with "…" (the parameters, the total): where the
    diagram beside it would squeeze the table, the diagram gives way."""
    for (w, h), pct in (((1280, 800), 150), ((1920, 1080), 200)):
        j = g.dump_run(mhaviz, d, "--sentence", "고양이가 쥐를 잡았다", "--view", "shape-flow", "--present", "--lang",
                       "ko", "--text-size", str(pct), "--width", str(w), "--height", str(h), name=f"p{w}.json",
                       frames=4)
        f = j["layout"]["flow"]
        check(f["shortened"] == 0 and not f["scroll_x"], f"{w}x{h} {pct}%: {f['shortened']} cells shortened ({f})")


TESTS = {
    "batch": test_batch,
    "presented_whole": test_presented_whole,
    "bad_batch": (test_bad_batch, False),
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "shape_flow"))
