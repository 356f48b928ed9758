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
import harness as g  # noqa: E402

check = g.check

SENTENCE = "the quick brown fox jumps over the lazy dog"


def tiles(p):
    w = p["widgets"].get("flash_tiles")
    return (int(w[0]), int(w[1])) if w else (-1, -1)


def test_cost_view(mhaviz, d):
    """The Cost view's FLOPs are the shape-flow table's (grouped: scores + softmax +
    weights x V, and the four projections), its table's numbers the O() formulas at
    the current n and d_model, and its bytes n^2 x heads x 4."""
    for extra in (["--heads", "4", "--d-model", "32"], ["--heads", "2", "--d-model", "16", "--block", "encoder"]):
        j = g.dump_run(mhaviz, d, "--sentence", SENTENCE, "--view", "cost", *extra)
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
        # Memory: the n x n rows' bytes, every other step's output but the input and the
        # reshapes (split heads, concat), the learned numbers; n^2 overtakes the rest
        # where 8 h n^2 >= (activations per token) n + parameters, found by counting up.
        def numel(r):
            out = 1
            for e in r["shape"]:
                out *= e
            return out
        nxn = sum(4 * numel(r) for r in flow if r["tensor"] in ("scores", "attn"))
        skip = ("x", "scores", "attn", "concat")
        act = sum(4 * numel(r) for r in flow if r["tensor"] not in skip and r["step"] != "split heads")
        par = sum(4 * r["param_count"] for r in flow)
        b = v["bytes"]
        check(b["weights"] == nxn == 8 * h * n * n, f"n x n bytes {b['weights']} vs the flow's {nxn}")
        check(b["activations"] == act, f"activation bytes {b['activations']} vs the flow's {act}")
        check(b["parameters"] == par, f"parameter bytes {b['parameters']} vs the flow's {par}")
        first = 1
        while 8 * h * first * first < act // n * first + par:
            first += 1
        check(b["weights_overtake_n"] == first, f"n^2 overtakes at {b['weights_overtake_n']}, by counting {first}")
        print(f"cost view {extra}: core {core}, projections {proj}, crossover n = {v['crossover_n']}, "
              f"bytes n^2 {nxn} / activations {act} / parameters {par}, n^2 takes over at n = {first}")


def test_cost_sweep(mhaviz, d):
    """The Cost view's measured times: the sweep runs on its worker thread while the
    window keeps drawing (frames counted while it ran, and the probe's frame counter
    moved on between a point measured and the end), measures the n values it states,
    every time positive, the standard path refused past 1024 tokens with a message
    naming Flash attention, and its times growing with n once n^2 dominates."""
    args = ["--sentence", SENTENCE, "--heads", "4", "--d-model", "32", "--view", "cost"]
    app = g.App(mhaviz, d, args, size=(1280, 800))
    try:
        first = app.wait_for(lambda p: p.get("cost", {}).get("started"), "the sweep to start")
        last = app.wait_for(lambda p: p["cost"]["finished"], "the sweep to finish", timeout=120)
        app.settle(2)
    finally:
        app.quit()
    c = last["cost"]
    check(c["measured"] == c["total"] == 16, f"measured {c['measured']} of {c['total']}")
    check(last["frame"] > first["frame"] or first["cost"]["finished"],
          f"no frame drawn while the sweep ran (frame {first['frame']} -> {last['frame']})")
    v = g.read_json(app.final_path)["views"]["cost_view"]
    sw = v["sweep"]
    check(sw["finished"] and not sw["error"], f"sweep not finished: {sw}")
    check(sw["frames_while_running"] >= 3,
          f"the window drew {sw['frames_while_running']} frames while the sweep ran: the UI thread waited on it")
    check(sw["d_model"] == 32 and sw["num_heads"] == 4, f"sweep at d_model {sw['d_model']}, {sw['num_heads']} heads")
    pts = sw["points"]
    ns = [p["n"] for p in pts]
    check(ns == [16, 32, 64, 128, 256, 512, 1024, 2048], f"sweep n values {ns}")
    for p in pts:
        check(p["flash_ms"] is not None and p["flash_ms"] > 0 and p["flash_runs"] >= 3, f"Flash at n {p['n']}: {p}")
        if p["n"] <= 1024:
            check(p["standard_ms"] is not None and p["standard_ms"] > 0 and p["standard_runs"] >= 3,
                  f"standard at n {p['n']}: {p}")
        else:
            check(p["standard_ms"] is None and "Flash attention" in p.get("standard_refused", ""),
                  f"standard at n {p['n']} should be refused with a message naming Flash attention: {p}")
    std = [p["standard_ms"] for p in pts if p["n"] >= 128 and p["standard_ms"] is not None]
    check(all(b > a for a, b in zip(std, std[1:])), f"standard times do not grow with n from 128 on: {std}")
    check(sw["standard_slope_last3"] > 1.3, f"standard slope over n = 256..1024 is {sw['standard_slope_last3']}")
    print(f"cost sweep: standard ms {[round(x, 3) for x in std]} (n 128..1024), slope "
          f"{sw['standard_slope_last3']:.2f}; flash slope {sw['flash_slope_last3']:.2f}; "
          f"{sw['frames_while_running']} frames drawn while it ran")


def test_cost_sweep_restart(mhaviz, d):
    """A new configuration while the sweep runs cancels it and starts another at the new
    shapes (a new id); the window keeps drawing, and the new sweep finishes at the new
    d_model."""
    args = ["--sentence", SENTENCE, "--heads", "4", "--d-model", "256", "--view", "cost"]
    app = g.App(mhaviz, d, args, size=(1280, 800))
    try:
        first = app.wait_for(lambda p: p.get("cost", {}).get("started"), "the sweep to start")
        rect = app.widget("d_model")
        # The slider's left end: the smallest d_model (a few numbers per head: a short sweep).
        p = g.click_until(app, [rect[0] + 2, rect[1], 6, rect[3]],
                           lambda p: p["d_model"] != 256 and p["cost"]["id"] >= 2, "a new sweep for the new d_model")
        was_running = not first["cost"]["finished"]
        last = app.wait_for(lambda p: p["cost"]["finished"] and p["cost"]["id"] >= 2,
                            "the new sweep to finish", timeout=120)
        app.settle(2)
    finally:
        app.quit()
    j = g.read_json(app.final_path)
    sw = j["views"]["cost_view"]["sweep"]
    dm = j["views"]["cost_view"]["d_model"]
    check(dm != 256 and sw["d_model"] == dm, f"the sweep measured d_model {sw['d_model']}, the view shows {dm}")
    check(sw["id"] >= 2 and sw["finished"] and sw["measured"] == sw["total"], f"new sweep: {sw['id']}, {sw['measured']} of {sw['total']}")
    check(last["frame"] > p["frame"], "frames drawn after the restart")
    print(f"restart: d_model 256 -> {dm}, sweep id {sw['id']}, first sweep still running at the click: {was_running}")


def check_labels_apart(where, p):
    """Each plot's "your sentence" label clear of its crossing marker's label (at a
    short sentence both sit near the plot's bottom), and inside the plot's axes (which
    clip it)."""
    w = p["widgets"]
    for plot, pre in (("cost axes", "cost "), ("cost bytes axes", "cost bytes ")):
        a, b = w.get(pre + "sentence label"), w.get(pre + "marker label")
        check(a is not None and b is not None, f"{where}: no {pre}labels probed: {sorted(w)}")
        apart = a[0] + a[2] <= b[0] or b[0] + b[2] <= a[0] or a[1] + a[3] <= b[1] or b[1] + b[3] <= a[1]
        check(apart, f"{where}: the sentence's label {a} covers the marker's {b} ({plot})")
        g.check_within(where, pre + "sentence label", a, w[plot])


def test_labels_apart(mhaviz, d):
    """The Cost view presented at a projector's and a large screen's sizes, in Korean and
    English: its labels do not write over each other (the sentence's n over n = 2d's)."""
    for size, pct, lang in (((1280, 800), 150, "ko"), ((1280, 800), 100, "en"), ((1920, 1080), 200, "en"),
                            ((1920, 1080), 150, "ko")):
        where = f"{size[0]}x{size[1]} {pct}% {lang}"
        probe = os.path.join(d, f"cost{size[0]}_{pct}{lang}.probe.json")
        r = subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "6", "--width", str(size[0]), "--height",
                            str(size[1]), "--text-size", str(pct), "--lang", lang, "--view", "cost", "--present",
                            "--probe", probe], cwd=d, capture_output=True, text=True, timeout=g.RUN_TIMEOUT)
        check(r.returncode == 0, f"{where}: exited {r.returncode}: {r.stderr[-800:]}")
        check_labels_apart(where, g.read_json(probe))


def test_lesson_fits(mhaviz, d):
    """Lesson 001's Cost steps (6 and 7) at 1280 x 800 with 150% text, in Korean and
    English: the table, both plots and both crossing notes (where n^2 overtakes) lie
    above the lesson's band (the notes were below it, the plots cut by it)."""
    for step in (6, 7):
        for lang in ("ko", "en"):
            where, p, view = g.lesson_step_probe(mhaviz, d, "001", step, lang)
            for k in ("cost table", "cost plot", "cost bytes plot", "cost crossing", "cost bytes crossing"):
                g.check_within(where, k, p["widgets"].get(k), view)
            check_labels_apart(where, p)


TESTS = {
    "lesson_fits": test_lesson_fits,
    "labels_apart": test_labels_apart,
    "cost_view": test_cost_view,
    "cost_sweep": test_cost_sweep,
    "cost_sweep_restart": test_cost_sweep_restart,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "cost", needs_numpy=True))
