#!/usr/bin/env python3
"""GUI tests of the Head view: its weights on a seeded layer, and its export against the
window's selection of heads.

    head_view_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from lm_test import close, gui  # noqa: E402

check = g.check


def test_head_view_seeded(mhaviz, d):
    """The head view is offered for the seeded weights too: its weights are the trace's."""
    dump = os.path.join(d, "seeded.json")
    gui(mhaviz, d, "--sentence", "The cat sat on the mat because it was tired.", "--heads", "4", "--d-model", "32",
        "--view", "head-view", "--dump-state", dump)
    final = g.read_json(dump)
    hv = final["views"]["head_view_view"]
    check(final["ok"] and len(hv["heads"]) == 4, f"{len(hv['heads'])} heads in the head view, expected 4")
    close([h["weights"] for h in hv["heads"]], final["trace"]["attention"], "head view vs the seeded trace")


def test_head_view_export(mhaviz, d):
    """The Export section's "head view" writes the head view (SVG here), the same bytes
    `mhaviz export --view head` writes for the same sentence and configuration."""
    args = ["--sentence", "the cat sat on the mat", "--heads", "4", "--d-model", "64", "--view", "head-view"]
    app = g.App(mhaviz, d, args, size=(1280, 1000))
    try:
        app.wait_for(lambda p: p["ok"], "a valid trace")
        r = app.widget("export_path")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held("hv.svg")
        # The Export options sit at the foot of the left column, below the fold.
        g.xdo("mousemove", "--window", app.wid, int(r[0] + r[2] / 2), int(r[1]), "click", "--repeat", "10",
              "--delay", "30", "5")
        v = app.widget("export_view_head")
        app.click(v[0] + v[3] / 2, v[1] + v[3] / 2)
        b = app.widget("export")
        app.click(b[0] + b[2] / 2, b[1] + b[3] / 2)
        p = app.wait_for(lambda p: "head view" in p["export_message"], "the head view's export message")
        check(p["export_message"].startswith("Saved the head view (4 heads)"), f"message {p['export_message']!r}")
        app.quit()
    finally:
        app.kill()
    ref = os.path.join(d, "ref.svg")
    subprocess.run([mhaviz, "export", "--view", "head", *args[:6], "--svg", ref], check=True, capture_output=True)
    with open(os.path.join(d, "hv.svg"), "rb") as f1, open(ref, "rb") as f2:
        mine, theirs = f1.read(), f2.read()
    check(mine.count(b'class="attn"') > 0, "the GUI's head view SVG has no lines")
    check(mine == theirs, "the GUI's head view SVG differs from mhaviz export --view head's")


def test_presented_fills(mhaviz, d):
    """Presented on a projector (1280 x 800 at 150%, 1920 x 1080 at 200%, in Korean) on 3
    tokens, the lines' canvas spreads over the window: at least 60% of its width and 45%
    of its height, and wholly inside it."""
    for (w, h), pct in (((1280, 800), 150), ((1920, 1080), 200)):
        probe = os.path.join(d, f"p{w}.probe.json")
        gui(mhaviz, d, "--sentence", "고양이가 쥐를 잡았다", "--view", "head-view", "--present", "--lang", "ko",
            "--text-size", str(pct), "--width", str(w), "--height", str(h), "--probe", probe)
        p = g.read_json(probe)
        r, win = p["widgets"].get("head_view_canvas"), p["window"]
        check(r and r[2] >= 0.6 * win[0] and r[3] >= 0.45 * win[1], f"{w}x{h} {pct}%: the canvas {r} in {win}")
        check(r[1] + r[3] <= win[1] and r[0] + r[2] <= win[0], f"{w}x{h} {pct}%: the canvas {r} leaves {win}")


TESTS = {
    "seeded": test_head_view_seeded,
    "export": test_head_view_export,
    "presented_fills": test_presented_fills,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "head_view"))
