#!/usr/bin/env python3
"""GUI tests of the Train view: the real window under Xvfb, driven with xdotool,
checked through --probe and --dump-state against `mhaviz trace --model` of the
checkpoint the view saved.

    train_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import click_until, close  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

check = g.check
TRAIN_TIMEOUT = 150  # seconds for 800 steps on a loaded 2-core machine (about 5 s when idle)


def train_status(p):
    return p.get("train", {}).get("status")


def press_train(app):
    """Clicks Train and waits until the run has started (or already finished)."""
    runs = app.probe()["train"]["runs"]
    click_until(app, "train_start", lambda p: p["train"]["runs"] == runs + 1, "a new run to start")


def wait_finished(app):
    return app.wait_for(lambda p: train_status(p) == "finished", "training to finish", timeout=TRAIN_TIMEOUT)


def set_num_heads(app, n, tries=3):
    """Ctrl+click the num_heads slider (ImGui's text entry), type n, Enter (again if a
    key was lost on a loaded machine)."""
    for attempt in range(tries):
        r = app.widget("num_heads")
        g.xdo("mousemove", "--window", app.wid, int(r[0] + r[2] / 2), int(r[1] + r[3] / 2), "sleep", g.HOLD)
        g.xdo("keydown", "ctrl", "sleep", g.HOLD, "mousedown", 1, "sleep", g.HOLD, "mouseup", 1, "sleep", g.HOLD,
              "keyup", "ctrl", "sleep", g.HOLD)
        app.key("ctrl", "a")
        app.type_held(str(n))
        app.key("Return")
        try:
            return app.wait_for(lambda p: p["num_heads"] == n and not p["focused_text"], f"num_heads = {n}",
                                timeout=4 if attempt + 1 < tries else 20)
        except g.Fail:
            if attempt + 1 == tries:
                raise
            print(f"note: typed num_heads = {n} again")


def type_into(app, field, text, pred, what, tries=3):
    """Selects all of `field` and types `text` until the probe satisfies `pred`: on a
    loaded machine a held key is now and then seen twice or not at all, and retyping
    is what a user would do."""
    for attempt in range(tries):
        r = app.widget(field)
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held(text)
        try:
            return app.wait_for(pred, what, timeout=4 if attempt + 1 < tries else 20)
        except g.Fail:
            if attempt + 1 == tries:
                raise
            print(f"note: typed {text!r} into {field} again ({what} did not follow)")


def trace_model(mhaviz, d, model, tokens, layer=0):
    out = os.path.join(d, f"ref{layer}.json")
    subprocess.run([mhaviz, "trace", "--quiet", "--model", model, "--tokens", " ".join(map(str, tokens)),
                    "--layer", str(layer), "--json", out], check=True, cwd=d)
    return g.read_json(out)


# --- tests ------------------------------------------------------------------

def test_offsets(mhaviz, d):
    """Open the Train tab, click Train, wait: offsets with 2 heads reaches the target
    accuracy, the two heads take different offsets, and the heatmaps shown (the grid
    and every other view's trace) equal `mhaviz trace --model` of the saved checkpoint."""
    app = g.App(mhaviz, d, ["--sentence", "the cat sat"], size=(1600, 1000))
    try:
        click_until(app, "tab train", lambda p: p["view"] == "train", "the Train tab")
        p = app.wait_for(lambda p: p["num_heads"] == 2 and p["d_model"] == 16, "the task's defaults in Configuration")
        check(train_status(p) == "idle", f"training started before Train was pressed: {p['train']}")
        press_train(app)
        p = wait_finished(app)
        labels = sorted(h["label"] for h in p["train"]["heads"])
        check(labels == ["2-back", "previous-token"], f"head labels {labels}: expected one head per offset")
        check(all(h["score"] >= 0.8 for h in p["train"]["heads"]), f"weak labels {p['train']['heads']}")
        # Save from the GUI.
        type_into(app, "train_path", "model.npz", lambda p: p["train"]["path"] == "model.npz", "the path")
        click_until(app, "train_save", lambda p: p["train"]["message"].startswith("Saved"), "the checkpoint to be saved")
        # Replay from step 0: the timeline walks forward on its own, and the views follow it.
        click_until(app, "timeline_play", lambda p: 0 <= p["train"]["timeline"] < 10, "the replay to start")
        p = app.wait_for(lambda p: p["train"]["timeline"] >= 12, "the replay to move on", timeout=30)
        check(p["train"]["source"].endswith(f"at step {p['train']['shown_step']}"),
              f"the views show {p['train']['source']!r} while the timeline is at step {p['train']['shown_step']}")
        click_until(app, "timeline_play", lambda p: True, "the replay to stop")
        # Follow: back to the newest snapshot, the model that was saved.
        click_until(app, "timeline_follow", lambda p: p["train"]["timeline"] == -1 and p["train"]["shown_step"] == 800,
                    "the timeline to follow the newest snapshot")
        final = app.quit()
    finally:
        app.kill()
    tv = final["views"]["train_view"]
    check(tv["status"] == "finished" and len(tv["runs"]) == 1, f"status {tv['status']}, {len(tv['runs'])} runs")
    run = tv["runs"][0]
    check(run["step"] == 800 and run["curve_points"] == 800, f"run {run}")
    check(min(run["heldout_accuracy"]) >= 0.95, f"held-out accuracy {run['heldout_accuracy']} below 0.95")
    check(run["story"].startswith("step 0: noise"), f"story {run['story']!r}")
    model = os.path.join(d, "model.npz")
    check(os.path.exists(model), "the Save button wrote no model.npz")
    ref = trace_model(mhaviz, d, model, tv["probe_tokens"])
    # The grid as drawn, and the trace every other view reads (layer 0 of the model).
    close(tv["attention"][0], ref["attention"], 1e-6, "the Train view's grid vs trace --model")
    check(final["trace"]["tokens"] == ref["tokens"], f"tokens {final['trace']['tokens']} != {ref['tokens']}")
    close(final["trace"]["attention"], ref["attention"], 1e-6, "the views' trace vs trace --model")
    check(final["sentence"] == " ".join(map(str, tv["probe_tokens"])), f"sentence {final['sentence']!r}")


def test_one_then_two_heads(mhaviz, d):
    """Train with 1 head, then with 2: both runs' curves are kept, and they show the
    lesson (1 head: the 2-back target stays near chance; 2 heads: both solved)."""
    app = g.App(mhaviz, d, ["--view", "train", "--heads", "1"], size=(1600, 1000))
    try:
        app.wait_for(lambda p: p["view"] == "train" and p["num_heads"] == 1, "the Train view with 1 head")
        press_train(app)
        wait_finished(app)
        set_num_heads(app, 2)
        press_train(app)
        p = app.wait_for(lambda p: p["train"]["runs"] == 2 and train_status(p) == "finished", "the second run",
                         timeout=TRAIN_TIMEOUT)
        check("plot accuracy 1" in p["widgets"], "no 2-back accuracy plot on screen")
        final = app.quit()
    finally:
        app.kill()
    runs = final["views"]["train_view"]["runs"]
    check(len(runs) == 2, f"{len(runs)} runs kept")
    check("1 head," in runs[0]["label"] and "2 heads," in runs[1]["label"], f"labels {[r['label'] for r in runs]}")
    check(all(r["curve_points"] == 800 and r["shown"] for r in runs), f"curves {[r['curve_points'] for r in runs]}")
    one, two = runs[0]["heldout_accuracy"], runs[1]["heldout_accuracy"]
    check(one[0] >= 0.9 and one[1] <= 0.5, f"1 head: held-out accuracy {one}, expected one offset solved, not both")
    check(min(two) >= 0.95, f"2 heads: held-out accuracy {two}")


def test_frame_time(mhaviz, d):
    """Frames keep coming while training runs on its worker: --train-autostart, then
    --stats. The median is printed for the notes (speed is never asserted in a test)."""
    stats, dump = os.path.join(d, "stats.json"), os.path.join(d, "dump.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--view", "train", "--train-autostart", "--frames", "120", "--width", "1280",
                    "--height", "800", "--stats", stats, "--dump-state", dump], check=True, env=env, cwd=d)
    st, tv = g.read_json(stats), g.read_json(dump)["views"]["train_view"]
    check(st["frames"] == 120, f"frames {st['frames']}")
    check(tv["runs"] and tv["runs"][0]["step"] > 0, f"the run did not advance during the frames: {tv['runs']}")
    print(f"median frame {st['median_frame_ms']:.2f} ms (cpu {st['median_frame_cpu_ms']:.2f} ms) while training "
          f"reached step {tv['runs'][0]['step']} of 800 in 120 frames")


def test_load_checkpoint(mhaviz, d):
    """A checkpoint from `mhaviz train --out` loads in the Train view and drives every
    view; typed ids run through it; a word outside its vocabulary is refused with a
    message that names the vocabulary."""
    model = os.path.join(d, "cli.npz")
    subprocess.run([mhaviz, "train", "--task", "offsets", "--steps", "60", "--out", model], check=True, cwd=d,
                   capture_output=True)
    app = g.App(mhaviz, d, ["--view", "train"], size=(1600, 1000))
    try:
        type_into(app, "train_path", "cli.npz", lambda p: p["train"]["path"] == "cli.npz", "the path")
        click_until(app, "train_load", lambda p: p["train"]["message"].startswith("Loaded"), "the checkpoint to load")
        type_into(app, "sentence", "3 1 4 1 5 9", lambda p: p["tokens"] == "3 1 4 1 5 9".split() and p["ok"],
                  "the typed ids")
        app.type_held(" cat")
        p = app.wait_for(lambda p: not p["ok"], "a word outside the vocabulary")
        check("not a token of the trained model" in p["error"] and "0 1 2" in p["error"], f"error {p['error']!r}")
        type_into(app, "sentence", "3 1 4 1 5 9", lambda p: p["tokens"] == "3 1 4 1 5 9".split() and p["ok"],
                  "the ids again")
        final = app.quit()
    finally:
        app.kill()
    ref = trace_model(mhaviz, d, model, [3, 1, 4, 1, 5, 9])
    close(final["trace"]["attention"], ref["attention"], 1e-6, "the views' trace of the loaded model vs trace --model")
    check(final["views"]["train_view"]["source"]["name"] == "cli.npz", f"source {final['views']['train_view']['source']}")


def test_model_flag(mhaviz, d):
    """`mhaviz gui --model M.npz --tokens IDS --layer 1`: a 2-layer checkpoint drives the
    views from the start; layer 1's trace and the inspector's attn equal `trace --model`.
    Bad flags: --tokens without --model is a usage error (2), a missing file or an id
    outside the vocabulary a runtime error (1), each with a message."""
    model = os.path.join(d, "ind.npz")
    subprocess.run([mhaviz, "train", "--task", "induction", "--layers", "2", "--steps", "30", "--out", model],
                   check=True, cwd=d, capture_output=True)
    ids = [0, 4, 4, 5, 2, 1, 9, 7]
    dump = os.path.join(d, "dump.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--frames", "3", "--model", model, "--tokens", " ".join(map(str, ids)), "--layer",
                    "1", "--view", "inspect", "--inspect", "attn", "--view-head", "1", "--dump-state", dump],
                   check=True, env=env, cwd=d)
    final = g.read_json(dump)
    ref = trace_model(mhaviz, d, model, ids, layer=1)
    check(final["ok"] and final["sentence"] == " ".join(map(str, ids)), f"sentence {final['sentence']!r}")
    close(final["trace"]["attention"], ref["attention"], 1e-6, "layer 1 in the views vs trace --model --layer 1")
    iv = final["views"]["inspect_view"]
    close(iv["values"], ref["attention"][1], 1e-6, "the inspector's attn[head 1] vs trace --model")
    # Head count and GQA describe the trained model, not the Configuration panel's layer.
    rc, settings = ref["config"], final["settings"]["config"]
    check((settings["d_model"], settings["num_heads"]) != (rc["d_model"], rc["num_heads"]),
          f"the panel's configuration {settings} should differ from the model's {rc} for this check")
    hc, gq = final["views"]["counts_view"], final["views"]["gqa_view"]
    check(hc["d_model"] == rc["d_model"] and [r["current"] for r in hc["rows"]].count(True) == 1 and
          next(r for r in hc["rows"] if r["current"])["num_heads"] == rc["num_heads"], f"head count view {hc}")
    check(gq["num_heads"] == rc["num_heads"] and gq["head_dim"] == rc["d_model"] // rc["num_heads"], f"GQA view {gq}")
    for args, code, words in [(["--tokens", "1 2"], 2, "give the checkpoint with --model"),
                              (["--model", os.path.join(d, "missing.npz")], 1, "missing.npz"),
                              (["--model", model, "--tokens", "3 99"], 1, "outside the model's vocabulary")]:
        r = subprocess.run([mhaviz, "gui", "--frames", "2", *args], env=env, cwd=d, capture_output=True, text=True)
        check(r.returncode == code and words in r.stderr, f"{args}: status {r.returncode}, stderr {r.stderr!r}")


def test_exports(mhaviz, d):
    """The Export buttons: the grid SVG at a timeline position mid-run has, cell by cell,
    the weights the Train view shows there; the GIF opens in PIL with one frame per
    snapshot; the curves CSV has every step and ends at the loss the view shows."""
    try:
        from PIL import Image
    except ImportError:
        raise g.Skip("PIL (python3-pil) is not installed")
    import re
    app = g.App(mhaviz, d, ["--view", "train", "--train-autostart"], size=(1600, 1000))
    try:
        wait_finished(app)
        click_until(app, "timeline_play", lambda p: 0 <= p["train"]["timeline"] < 8, "the replay to start")
        app.wait_for(lambda p: p["train"]["timeline"] >= 6, "the replay to reach a snapshot mid-run", timeout=30)
        p = click_until(app, "timeline_play", lambda p: True, "the replay to stop")
        for button, suffix in [("Grid SVG", "-grid.svg"), ("GIF", ".gif"), ("Curves CSV", "-curves.csv"),
                               ("Grid PNG", "-grid.png"), ("Curves PNG", "-curves.png")]:
            click_until(app, "train_export " + button,
                        lambda p, suffix=suffix: p["train"]["message"].startswith("Saved") and
                        suffix in p["train"]["message"], f"the {button} export", tries=2)
        final = app.quit()
    finally:
        app.kill()
    tv = final["views"]["train_view"]
    check(0 < tv["shown_step"] < 800, f"the timeline is at step {tv['shown_step']}, not mid-run")
    svg = open(os.path.join(d, "mhaviz-train-grid.svg"), encoding="utf-8").read()
    check(f"step {tv['shown_step']} of 800" in svg, f"the SVG's caption does not say step {tv['shown_step']}")
    cells = re.findall(r'data-layer="(\d+)" data-head="(\d+)" data-row="(\d+)" data-col="(\d+)"[^>]*>'
                       r'<title>[^<]*: (masked, weight 0|[0-9.]+)</title>', svg)
    grid = tv["attention"]
    check(len(cells) == sum(len(h) * len(h) for layer in grid for h in layer), f"{len(cells)} cells in the SVG")
    for layer, head, row, col, w in cells:
        shown = grid[int(layer)][int(head)][int(row)][int(col)]
        value = 0.0 if w.startswith("masked") else float(w)
        check(abs(value - shown) <= 6e-5, f"SVG cell {layer},{head},{row},{col} = {w}, the view shows {shown}")
    gif = Image.open(os.path.join(d, "mhaviz-train.gif"))
    snaps = tv["runs"][0]["snapshots"]
    check(gif.n_frames == min(snaps, 120) and gif.size[0] > 100 and gif.size[1] > 100,
          f"GIF: {gif.n_frames} frames of {gif.size}, expected {min(snaps, 120)} frames")
    rows = open(os.path.join(d, "mhaviz-train-curves.csv"), encoding="utf-8").read().strip().split("\n")
    check(len(rows) == 801 and rows[0].startswith("step,"), f"CSV: {len(rows)} lines, header {rows[0]!r}")
    header = rows[0].split(",")
    last = dict(zip(header, rows[-1].split(",")))
    check(abs(float(last["loss"]) - tv["runs"][0]["loss"]) <= 1e-6 * max(1.0, tv["runs"][0]["loss"]),
          f"the CSV's last loss {last['loss']} != the view's {tv['runs'][0]['loss']}")
    for png in ("mhaviz-train-grid.png", "mhaviz-train-curves.png"):
        w, h = g.png_size(os.path.join(d, png))
        check(w > 100 and h > 100, f"{png} is {w} x {h}")


TESTS = {
    "offsets": test_offsets,
    "one_then_two_heads": test_one_then_two_heads,
    "frame_time": test_frame_time,
    "load_checkpoint": test_load_checkpoint,
    "model_flag": test_model_flag,
    "exports": test_exports,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "train", needs_numpy=True))
