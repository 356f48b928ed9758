#!/usr/bin/env python3
"""GUI tests of the Importance view: its bars and in-context learning curve against `mhaviz
ablate --json`, mean ablation, a trained offsets model's per-offset drop, and a
measurement cancelled when the model changes.

    importance_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from lm_test import MODEL, SENTENCE, close  # noqa: E402

check = g.check


WINDOWS = 64  # the Importance view's default amount of validation text


def ablate_json(mhaviz, d, *args):
    r = subprocess.run([mhaviz, "ablate", "--json", *args], cwd=d, capture_output=True, text=True)
    check(r.returncode == 0, f"mhaviz ablate {' '.join(args)}: status {r.returncode}: {r.stderr}")
    return json.loads(r.stdout)


def measure_in_window(mhaviz, d, args, slow=True):
    """Opens the Importance view, waits (on the probe's frames) until the worker has
    finished, and returns the final dump's importance view and the last probe. With
    `slow` (mhaviz-small: seconds of work), the window must have drawn frames while it
    measured: the UI thread never waits. A tiny task model may finish within a frame."""
    app = g.App(mhaviz, d, [*args, "--view", "importance"], size=(1920, 1080))
    running_frames = set()
    try:
        def seen(p):
            imp = p.get("importance", {})
            if imp.get("state") == "running":
                running_frames.add(p["frame"])
            return imp.get("state") in ("done", "error")
        p = app.wait_for(seen, "the Importance view's measurement", timeout=300)
        check(p["importance"]["state"] == "done", f"the measurement failed: {p['importance']}")
        p = app.settle()
        final = app.quit()
    finally:
        app.kill()
    check(not slow or len(running_frames) >= 2,
          f"the window drew {len(running_frames)} frame(s) while measuring: the measurement is not on a worker thread")
    return final["views"]["importance_view"], p


def check_table(view, ref, what):
    check(view["available"], f"{what}: the view has no table ({view})")
    check(view["model"] == ref["model"] and view["reference"] == ref["reference"] and view["mode"] == ref["mode"],
          f"{what}: measured on {view['model']}, {view['reference']}, {view['mode']}; the CLI on {ref['model']}, "
          f"{ref['reference']}, {ref['mode']}")
    close(view["base"]["loss"], ref["base"]["loss"], f"{what}: the intact model's loss")
    close(view["base"]["accuracy"], ref["base"]["accuracy"], f"{what}: the intact model's accuracy")
    check([h["name"] for h in view["heads"]] == [h["name"] for h in ref["heads"]],
          f"{what}: heads in the order {[h['name'] for h in view['heads']]}, the CLI's "
          f"{[h['name'] for h in ref['heads']]}")
    for mine, theirs in zip(view["heads"], ref["heads"]):
        n = theirs["name"]
        close(mine["increase"], theirs["increase"], f"{what}: {n}'s bar (loss increase)")
        close(mine["loss"], theirs["loss"], f"{what}: {n}'s loss")
        close(mine["accuracy"], theirs["accuracy"], f"{what}: {n}'s accuracy")
        check(mine["label"] == theirs.get("label", ""), f"{what}: {n} labelled {mine['label']!r}, the CLI "
                                                        f"{theirs.get('label')!r}")
    check(len(view["all_heads_of_layer"]) == len(ref["all_heads_of_layer"]), f"{what}: the layers' bars")
    for mine, theirs in zip(view["all_heads_of_layer"], ref["all_heads_of_layer"]):
        check(mine["layer"] == theirs["layer"], f"{what}: layer bars in another order")
        close(mine["increase"], theirs["increase"], f"{what}: layer {theirs['layer']}'s bar")


def check_bars_drawn(p, view):
    for h in view["heads"]:
        check(f"importance_bar {h['name']}" in p["widgets"], f"no bar drawn for {h['name']}")
    check("importance_icl_plot" in p["widgets"], "no in-context learning plot drawn")


def test_importance_equals_cli(mhaviz, d):
    """mhaviz-small: every bar of the Importance view (each head knocked out alone, each
    layer's heads at once) equals `mhaviz ablate --model mhaviz-small --windows 64 --json`;
    the previous-token head L0H0 is the tallest bar and the induction head's bar is not
    above it; the window kept drawing while the worker measured."""
    ref = ablate_json(mhaviz, d, "--model", "mhaviz-small", "--windows", str(WINDOWS))
    view, p = measure_in_window(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE])
    check(view["windows"] == WINDOWS, f"the view measured on {view['windows']} windows, expected {WINDOWS}")
    check_table(view, ref, "zero ablation")
    check_bars_drawn(p, view)
    top = view["heads"][0]
    check(top["label"] == "previous-token" and top["layer"] == 0,
          f"the tallest bar is {top['name']} ({top['label']}), not layer 0's previous-token head")


def test_icl_equals_cli(mhaviz, d):
    """The Importance view's in-context learning curve (loss per piece of A, first copy
    and second, intact and without the induction head) equals `mhaviz ablate --icl
    --json`, and shows the induction head's signature: the second copy is cheaper
    intact, and not without it."""
    ref = ablate_json(mhaviz, d, "--model", "mhaviz-small", "--icl")
    view, _ = measure_in_window(mhaviz, d, ["--model", MODEL])
    icl = view["icl"]
    check(icl["heads"] == [h["name"] for h in ref["heads"]], f"knocked out {icl['heads']}, the CLI {ref['heads']}")
    check(icl["span"] == ref["span"] and icl["sequences"] == ref["sequences"],
          f"span {icl['span']} x {icl['sequences']}, the CLI {ref['span']} x {ref['sequences']}")
    for side in ("plain", "ablated"):
        for key in ("first", "second", "first_curve", "second_curve"):
            close(icl[side][key], ref[side][key], f"ICL {side} {key}")
    check(icl["plain"]["second"] < icl["plain"]["first"] - 2.0 and
          icl["ablated"]["second"] > icl["plain"]["second"] + 2.0,
          f"no induction signature: intact {icl['plain']['first']:.2f} -> {icl['plain']['second']:.2f}, without "
          f"{icl['heads']} {icl['ablated']['first']:.2f} -> {icl['ablated']['second']:.2f}")


def test_importance_mean(mhaviz, d):
    """--importance-mode mean: the bars equal `mhaviz ablate --mode mean --windows 64`."""
    ref = ablate_json(mhaviz, d, "--model", "mhaviz-small", "--mode", "mean", "--windows", str(WINDOWS))
    view, _ = measure_in_window(mhaviz, d, ["--model", MODEL, "--importance-mode", "mean"])
    check(view["mode"] == "mean", f"mode {view['mode']}")
    check_table(view, ref, "mean ablation")


def test_model_as_chosen(mhaviz, d):
    """The Importance view measures the model as chosen: with L1H3 knocked out (gui
    --ablate, as the Model view's switch sets it), its intact loss is `mhaviz ablate
    --heads L1H3`'s loss without L1H3, each head's bar is that head knocked out as well
    (`ablate --heads L0H0,L1H3`), L1H3's own bar is 0, and the view says which heads
    are out."""
    without = ablate_json(mhaviz, d, "--model", "mhaviz-small", "--heads", "L1H3", "--windows", str(WINDOWS))
    pair = ablate_json(mhaviz, d, "--model", "mhaviz-small", "--heads", "L0H0,L1H3", "--windows", str(WINDOWS))
    view, p = measure_in_window(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--ablate", "L1H3"])
    check(view["knocked_out"] == ["L1H3"], f"the view measured with {view['knocked_out']} out, expected L1H3")
    check("importance_knocked" in p["widgets"], "the view does not say which heads stay knocked out")
    # Not a comparison that cannot fail: L1H3 out changes the loss the view starts from.
    check(abs(without["ablated"]["loss"] - without["base"]["loss"]) > 1e-3,
          "knocking L1H3 out changes no loss: the comparison tests nothing")
    close(view["base"]["loss"], without["ablated"]["loss"], "the view's starting loss vs ablate --heads L1H3")
    heads = {h["name"]: h for h in view["heads"]}
    close(heads["L0H0"]["loss"], pair["ablated"]["loss"], "L0H0's loss (L1H3 out too) vs ablate --heads L0H0,L1H3")
    check(heads["L1H3"]["increase"] == 0.0, f"L1H3, already out, costs {heads['L1H3']['increase']} more")


def test_importance_offsets(mhaviz, d):
    """A 2-head offsets model trained here (as the Train view trains it): the Importance
    view's per-target accuracies equal `mhaviz ablate`'s, and knocking out either head
    drops exactly one offset to near chance (1/11) while the other stays right."""
    model = os.path.join(d, "offsets.npz")
    r = subprocess.run([mhaviz, "train", "--task", "offsets", "--offsets", "2", "--heads", "2", "--layers", "1",
                        "--steps", "300", "--threads", "1", "--out", model], cwd=d, capture_output=True, text=True)
    check(r.returncode == 0, f"training the offsets model failed: {r.stderr[-300:]}")
    ref = ablate_json(mhaviz, d, "--model", model)
    view, p = measure_in_window(mhaviz, d, ["--model", model], slow=False)
    check(view["targets"] == ["1-back", "2-back"], f"targets {view['targets']}")
    check_table(view, ref, "offsets model")
    check_bars_drawn(p, view)
    chance = 1.0 / 11
    check(min(view["base"]["accuracy"]) > 0.9, f"the intact model's accuracy {view['base']['accuracy']}")
    lost = []
    for h in view["heads"]:
        acc = h["accuracy"]
        low = [k for k, a in enumerate(acc) if a < chance + 0.15]
        high = [k for k, a in enumerate(acc) if a > 0.85]
        check(len(low) == 1 and len(high) == 1,
              f"knocking out {h['name']} ({h['label']}): accuracy {acc}; expected one offset near chance "
              f"{chance:.3f} and the other high")
        lost += low
    check(sorted(lost) == [0, 1], f"both heads drop the same offset ({lost}): each offset should have its own head")


def test_cancel_on_model_change(mhaviz, d):
    """A measurement on every validation window (about a minute) is cancelled when the
    learner switches to the seeded weights: its worker stops (no thread left) without
    finishing; "Use mhaviz-small" in the view starts it again."""
    from harness import click_until
    app = g.App(mhaviz, d, ["--model", MODEL, "--view", "importance", "--importance-windows", "0"])
    try:
        p = app.wait_for(lambda p: p["importance"]["state"] == "running" and p["importance"]["step"] >= 1,
                         "the measurement to be under way", timeout=120)
        click_until(app, "model_source", lambda p: "source_seeded" in p["widgets"], "the model selector to open")
        click_until(app, "source_seeded", lambda p: p["importance"]["state"] == "idle", "the seeded weights")
        p = app.wait_for(lambda p: p["importance"]["threads"] == 0, "the cancelled worker to stop", timeout=120)
        check(p["importance"]["finished"] == 0, f"the measurement finished instead of stopping: {p['importance']}")
        click_until(app, "importance_use_small", lambda p: p["importance"]["state"] == "running",
                    "the measurement to start again on mhaviz-small")
        app.quit()
    finally:
        app.kill()


def test_presented_so_far(mhaviz, d):
    """Presented at 1280 x 800 with 150% text, in Korean, while the measurement runs the
    view shows the chart's frame, not a progress line alone: a row for every head (a
    bar once measured, else what it waits for) and the in-context learning section; the
    bars drawn while it runs are the final table's numbers."""
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--view", "importance", "--present", "--lang",
                            "ko", "--text-size", "150", "--importance-windows", "256"])
    names = [f"L{l}H{h}" for l in range(2) for h in range(4)]
    try:
        def rows_drawn(p):
            w = p["widgets"]
            return all(f"importance_bar {n}" in w or f"importance_pending {n}" in w for n in names)

        p = app.wait_for(lambda p: p["importance"]["state"] != "running" or "importance_so_far" in p["widgets"],
                         "the chart's frame while it is measured", timeout=120)
        check(p["importance"]["state"] == "running", f"no chart drawn while it was measured: {p['importance']}")
        check(rows_drawn(p), f"while measuring, rows drawn: {sorted(k for k in p['widgets'] if 'importance' in k)}")
        first = p["widgets"]["importance_pending L0H0"] if "importance_pending L0H0" in p["widgets"] else \
            p["widgets"]["importance_bar L0H0"]
        g.check_within("the first head's row", "L0H0", first, [0, 0, *p["window"]])
        p = app.wait_for(lambda p: p["importance"]["state"] == "running" and len(p["importance"]["so_far"] or {}) >= 1,
                         "a head measured while the rest is measured", timeout=300)
        so_far = p["importance"]["so_far"]
        check(rows_drawn(p) and all(f"importance_bar {n}" in p["widgets"] for n in so_far) and
              any(f"importance_pending {n}" in p["widgets"] for n in names if n not in so_far),
              f"while measuring {sorted(so_far)}: {sorted(k for k in p['widgets'] if 'importance' in k)}")
        p = app.wait_for(lambda p: p["importance"]["state"] in ("done", "error"), "the measurement", timeout=300)
        check(p["importance"]["state"] == "done" and "importance_table" in p["widgets"], f"{p['importance']}")
        final = app.quit()
    finally:
        app.kill()
    heads = {h["name"]: h["increase"] for h in final["views"]["importance_view"]["heads"]}
    for n, v in so_far.items():
        check(abs(heads[n] - v) <= 1e-12, f"{n}'s bar while measuring {v}, finally {heads[n]}")


TESTS = {
    "presented_so_far": test_presented_so_far,
    "equals_cli": test_importance_equals_cli,
    "icl_equals_cli": test_icl_equals_cli,
    "mean": test_importance_mean,
    "model_as_chosen": test_model_as_chosen,
    "offsets": test_importance_offsets,
    "cancel_on_model_change": test_cancel_on_model_change,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "importance"))
