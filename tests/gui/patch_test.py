#!/usr/bin/env python3
"""GUI tests of the Patch view: its layer x head grid of "recovered", every layer's heads
together, and each head's positions, against `mhaviz patch --json` on the same
sentences and target.

    patch_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display or no xdotool).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from lm_test import MODEL  # noqa: E402

check = g.check


def differences(view, cli, tol=1e-9):
    """Where the view's report differs from patch --json's (the same function: exact up
    to `tol` of each value's scale)."""
    out = []
    for side in ("clean", "corrupt"):
        if view[side]["pieces"] != cli[side]["pieces"] or abs(view[side]["logp"] - cli[side]["logp"]) > tol:
            out.append(f"{side}: {view[side]} vs {cli[side]}")
    if view["target"] != cli["target"]:
        out.append(f"target {view['target']} vs {cli['target']}")
    if [(h["layer"], h["head"]) for h in view["heads"]] != [(h["layer"], h["head"]) for h in cli["heads"]]:
        return out + ["different heads"]
    for a, b in zip(view["heads"], cli["heads"]):
        for k in ("recovered", "logp"):
            if abs(a[k] - b[k]) > tol * max(1.0, abs(b[k])):
                out.append(f"{a['name']} {k}: {a[k]} vs {b[k]}")
        if len(a["positions"]) != len(b["positions"]) or any(
                abs(x - y) > tol * max(1.0, abs(y)) for x, y in zip(a["positions"], b["positions"])):
            out.append(f"{a['name']} positions: {a['positions']} vs {b['positions']}")
    for a, b in zip(view["layers"], cli["layers"]):
        if abs(a["recovered"] - b["recovered"]) > tol * max(1.0, abs(b["recovered"])):
            out.append(f"layer {a['layer']}: {a['recovered']} vs {b['recovered']}")
    return out


def test_equals_patch(mhaviz, d):
    """The view's numbers for the honorific example equal `patch --json`'s; a report with
    two heads' numbers swapped is told apart."""
    clean, corrupt, target = "할머니께서 방에서", "형이 방에서", "주무"
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", "할머니께서 방에서 주무신다", "--view", "patch",
                            "--patch-clean", clean, "--patch-corrupt", corrupt, "--patch-target", target],
                size=(1920, 1080))
    try:
        app.wait_for(lambda p: "patch_grid" in p["widgets"], "the patch grid", timeout=300)
        app.shot("patch.png")
        final = app.quit()
    finally:
        app.kill()
    view = final["views"]["patch_view"]
    check("error" not in view, f"the view's patch failed: {view.get('error')}")
    r = subprocess.run([mhaviz, "patch", "--model", MODEL, "--clean", clean, "--corrupt", corrupt, "--target", target,
                        "--json"], capture_output=True, text=True, cwd=d)
    check(r.returncode == 0, f"mhaviz patch: status {r.returncode}: {r.stderr[:300]}")
    cli = json.loads(r.stdout)
    diff = differences(view, cli)
    check(not diff, "the Patch view equals patch --json: " + "; ".join(diff[:6]))
    wrong = json.loads(json.dumps(view))
    a, b = wrong["heads"][0], wrong["heads"][-1]
    a["recovered"], b["recovered"] = b["recovered"], a["recovered"]
    check(a["recovered"] == b["recovered"] or differences(wrong, cli), "with two heads swapped the comparison fails")


TESTS = {
    "equals_patch": test_equals_patch,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "gui_patch"))
