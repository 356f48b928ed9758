#!/usr/bin/env python3
"""GUI tests of the Flash and Cost views: the real window under Xvfb, checked through
--dump-state's "views" against `mhaviz trace --npz` and the shape-flow table.

    cost_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gui_test as g  # noqa: E402
import teach_test as tt  # noqa: E402  (click_until, dump_run, cli_npz)

check = g.check

SENTENCE = "the quick brown fox jumps over the lazy dog"


def tiles(p):
    w = p["widgets"].get("flash_tiles")
    return (int(w[0]), int(w[1])) if w else (-1, -1)


def test_flash_view(mhaviz, d):
    """The Flash view stepped tile by tile to the end: its context equals the trace's
    (within 1e-5, also against `mhaviz trace --npz`), for a causal mask and tiles that
    divide nothing."""
    import numpy as np
    args = ["--sentence", SENTENCE, "--heads", "2", "--d-model", "16", "--mask", "causal", "--seed", "5"]
    ref = tt.cli_npz(mhaviz, d, "ref.npz", *args)
    app = g.App(mhaviz, d, args + ["--view", "flash"], size=(1280, 800))
    try:
        p = app.wait_for(lambda p: tiles(p)[1] > 0, "the Flash view's tiles")
        count = tiles(p)[1]
        check(tiles(p)[0] == 0, f"the Flash view starts at tile {tiles(p)[0]}, not 0")
        tt.click_until(app, "flash next", lambda p: tiles(p)[0] == 1, "one step")
        tt.click_until(app, "flash next", lambda p: tiles(p)[0] == 2, "a second step")
        tt.click_until(app, "flash end", lambda p: tiles(p)[0] == count, "the last tile")
        app.settle(3)
    finally:
        app.quit()
    v = g.read_json(app.final_path)["views"]["flash_view"]
    n = v["seq"]
    br, bc = v["br"], v["bc"]
    want_tiles = -(-n // br) * -(-v["seq_kv"] // bc)
    check(v["tiles"] == want_tiles == count, f"{v['tiles']} tiles (probe {count}), expected {want_tiles}")
    check(v["finished"] and v["done"] == count, f"not finished: {v['done']} of {count}")
    check(v["max_diff"] is not None and v["max_diff"] < 1e-5, f"max difference {v['max_diff']}")
    ctx = np.array(v["context"], dtype=np.float64)
    want = ref["context"][0, v["head"]].astype(np.float64)
    check(ctx.shape == want.shape, f"context shape {ctx.shape} vs {want.shape}")
    err = float(np.abs(ctx - want).max())
    check(err < 1e-5, f"the Flash view's context differs from trace --npz by {err}")
    print(f"flash view: {count} tiles of {br} x {bc}, max diff {v['max_diff']:.3g}, vs npz {err:.3g}")


def test_cost_view(mhaviz, d):
    """The Cost view's FLOPs are the shape-flow table's (grouped: scores + softmax +
    weights x V, and the four projections), its table's numbers the O() formulas at
    the current n and d_model, and its bytes n^2 x heads x 4."""
    for extra in (["--heads", "4", "--d-model", "32"], ["--heads", "2", "--d-model", "16", "--block", "encoder"]):
        j = tt.dump_run(mhaviz, d, "--sentence", SENTENCE, "--view", "cost", *extra)
        v = j["views"]["cost_view"]
        flow = j["trace"]["shape_flow"]
        by = {r["tensor"]: r["flops"] for r in flow}
        core = sum(r["flops"] for r in flow if r["tensor"] in ("scores", "attn", "context"))
        proj = sum(r["flops"] for r in flow if r["tensor"] in ("q", "k", "v", "attn_out"))
        check(core > 0 and proj > 0, f"no attention rows in the flow: {by}")
        check(v["core_flops"] == core, f"core FLOPs {v['core_flops']} != shape flow's {core}")
        check(v["projection_flops"] == proj, f"projection FLOPs {v['projection_flops']} != shape flow's {proj}")
        n, dm, h = v["n"], v["d_model"], v["num_heads"]
        check(n == len(j["trace"]["tokens"]), f"n {n} vs {len(j['trace']['tokens'])} tokens")
        check(v["rnn"] == n * dm * dm and v["cnn"] == 3 * n * dm * dm and v["self_attention"] == n * n * dm,
              f"table numbers {v['rnn']}, {v['cnn']}, {v['self_attention']} at n {n}, d {dm}")
        check(v["weights_bytes"] == n * n * h * 4, f"weights bytes {v['weights_bytes']}")
        check(v["crossover_2d"] == 2 * dm and abs(v["crossover_n"] - 2 * dm) <= dm // 4 + 2,
              f"crossover {v['crossover_n']} far from 2d = {2 * dm}")
        print(f"cost view {extra}: core {core}, projections {proj}, crossover n = {v['crossover_n']}")


TESTS = {
    "flash_view": test_flash_view,
    "cost_view": test_cost_view,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "cost", needs_numpy=True))
