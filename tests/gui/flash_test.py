#!/usr/bin/env python3
"""GUI tests of the Flash view: stepped tile by tile to the end, the context equals the
trace's (`mhaviz trace --npz`).

    flash_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402

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
    ref = g.cli_npz(mhaviz, d, "ref.npz", *args)
    app = g.App(mhaviz, d, args + ["--view", "flash"], size=(1280, 800))
    try:
        p = app.wait_for(lambda p: tiles(p)[1] > 0, "the Flash view's tiles")
        count = tiles(p)[1]
        check(tiles(p)[0] == 0, f"the Flash view starts at tile {tiles(p)[0]}, not 0")
        g.click_until(app, "flash next", lambda p: tiles(p)[0] == 1, "one step")
        g.click_until(app, "flash next", lambda p: tiles(p)[0] == 2, "a second step")
        g.click_until(app, "flash end", lambda p: tiles(p)[0] == count, "the last tile")
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


def test_lesson_fits(mhaviz, d):
    """Lesson 003's Flash steps at 1280 x 800 with 150% text, in Korean and English: the
    tile grid, the block table (every row's last cell, O / l, inside it: no sideways
    scroll), the memory gauge and the comparison with the trace all lie above the
    lesson's band (the table was cut on the right and the gauge below the band)."""
    for step in (6, 7, 8):
        for lang in ("ko", "en"):
            where, p, view = g.lesson_step_probe(mhaviz, d, "003", step, lang)
            w = p["widgets"]
            check(tiles(p)[0] >= 1, f"{where}: no tile run, nothing in the table ({tiles(p)})")
            for k in ("flash grid", "flash_rows", "flash memory", "flash diff"):
                g.check_within(where, k, w.get(k), view)
            ends = [k for k in w if k.startswith("flash_row_end ")]
            check(ends, f"{where}: no rows in the block table")
            for k in ends:
                g.check_within(where, k, w[k], w["flash_rows"])


TESTS = {
    "stepped": test_flash_view,
    "lesson_fits": test_lesson_fits,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "flash", needs_numpy=True))
