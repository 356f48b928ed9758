#!/usr/bin/env python3
"""GUI tests of the Examples view: the worked example and the hand calculation against the
lesson's own numbers, the weight editor, and the .npz files it loads and saves.

    examples_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import click, click_until, dump_run, cli_npz, close  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

check = g.check


def softmax(row):
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


def lesson_concat_by_hand(w_scale=None):
    """The lesson's concat, computed the way the lesson does it on paper: head h
    sees dimensions 2h, 2h+1 of each word (W_Q = W_K = W_V = I), scores q.k / sqrt(2)."""
    X = [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]
    concat = [[0.0] * 4 for _ in range(3)]
    for h in range(2):
        part = [row[2 * h:2 * h + 2] for row in X]
        for i in range(3):
            scores = [sum(a * b for a, b in zip(part[i], part[j])) / math.sqrt(2) for j in range(3)]
            w = softmax(scores)
            for c in range(2):
                concat[i][2 * h + c] = sum(w[j] * part[j][c] for j in range(3))
    return concat


def test_lesson_preset(mhaviz, d):
    """--preset lesson: the inspector's concat and the query view's sum are the hand-computed numbers."""
    dump = dump_run(mhaviz, d, "--preset", "lesson", "--view", "inspector", "--inspect", "concat",
                    "--view-head", "1", "--view-query", "0")
    check(dump["ok"], f"lesson did not compute: {dump['error']}")
    v = dump["views"]
    # --view inspector: the Inspect view's old name still opens it (under its name).
    check(v["view"] == "inspect", f"view {v['view']}")
    hand = lesson_concat_by_hand()
    iv = v["inspect_view"]
    check(iv["tensor"] == "concat" and iv["shape"] == [1, 3, 4], f"inspector shows {iv.get('tensor')} {iv.get('shape')}")
    close(iv["values"], hand, 1e-5, "inspector concat vs hand calculation")
    # One query step by step: head 1, token 0 ("word1") reads dimensions 2-3.
    q = v["query_view"]
    check(q["head"] == 1 and q["query"] == 0 and q["query_token"] == "word1", f"query view selection {q['head']} {q['query']}")
    check(q["q"] == [3.0, 4.0], f"q of word1 in head 1 is {q['q']}, expected [3, 4]")
    check([k["dot"] for k in q["keys"]] == [25.0, 53.0, 81.0], f"q.k {[k['dot'] for k in q['keys']]}")
    check(abs(q["divisor"] - math.sqrt(2)) < 1e-6, f"divisor {q['divisor']}")
    close(q["context"], hand[0][2:4], 1e-5, "the query view's sum vs hand")
    close(q["context"], q["trace_context"], 1e-5, "the query view's sum vs the trace's context row")
    check(q["max_abs_diff"] <= 1e-5, f"max_abs_diff {q['max_abs_diff']}")
    # Each weight x v_j is the weight times v_j, and the weights sum to 1.
    for k in q["keys"]:
        close(k["weighted_v"], [k["weight"] * x for x in k["v"]], 1e-5, f"weight x v for key {k['index']}")
    check(abs(sum(k["weight"] for k in q["keys"]) - 1.0) < 1e-6, "weights do not sum to 1")
    lv = v["examples_view"]
    check(lv["input_source"] == "the lesson example" and lv["weights_source"] == "the lesson example",
          f"sources {lv['input_source']!r} {lv['weights_source']!r}")
    check(lv["weights"]["W_o"] == np.eye(4).tolist(), f"W_o {lv['weights']['W_o']}")


def test_lesson_editor(mhaviz, d):
    """Click "Load the lesson example", edit W_O[0,0] in the weight editor, save x and
    the weights from the GUI, click the shape flow's output projection: the inspector
    shows attn_out with column 0 doubled, and `mhaviz trace` on the saved files agrees."""
    app = g.App(mhaviz, d, ["--sentence", "the cat sat", "--heads", "2", "--d-model", "8", "--view", "examples"],
                size=(1600, 1000))
    try:
        no_flow = lambda p: not any(k.startswith("flow ") for k in p["widgets"])  # noqa: E731
        click_until(app, "flow_toggle", no_flow, "the shape flow to fold (more room for the Lesson view)")
        p = click_until(app, "load_lesson", lambda p: p["ok"] and p["d_model"] == 4 and p["num_heads"] == 2 and
                        p["tokens"] == ["word1", "word2", "word3"], "the lesson example")
        gen = p["generation"]
        # W_O[0, 0] = 2: Ctrl+click turns the drag field into a text field.
        c = app.widget("edit W_O 0 0")
        g.xdo("mousemove", "--window", app.wid, int(c[0] + c[2] / 2), int(c[1] + c[3] / 2))
        app.settle(3)
        g.xdo("keydown", "ctrl", "sleep", g.HOLD, "mousedown", 1, "sleep", g.HOLD, "mouseup", 1, "sleep", g.HOLD,
              "keyup", "ctrl", "sleep", g.HOLD)
        app.key("ctrl", "a")
        app.type_held("2")
        app.key("Return")
        app.wait_for(lambda p: p["generation"] > gen, "a recompute after the weight edit")
        for field, button, name in (("input_path", "save_input", "x.npz"), ("weights_path", "save_weights", "w.npz")):
            f = app.widget(field)
            click(app, f)
            app.key("ctrl", "a")
            app.type_held(name)
            saved = lambda p, n=name: p["examples"]["file_message"].startswith("Saved") and n in p["examples"]["file_message"]
            click_until(app, button, saved, f"{name} to be saved")
        p = click_until(app, "flow_toggle", lambda p: any(k.startswith("flow attn_out") for k in p["widgets"]),
                        "the shape flow back")
        row = next(v for k, v in p["widgets"].items() if k.startswith("flow attn_out"))
        click_until(app, [row[0], row[1], 20, row[3]], lambda p: p["view"] == "inspect",
                    "the inspector after clicking the shape flow")
        final = app.quit()
    finally:
        app.kill()
    v = final["views"]
    w_o = np.eye(4)
    w_o[0, 0] = 2.0
    check(v["examples_view"]["weights"]["W_o"] == w_o.tolist(), f"W_o after the edit: {v['examples_view']['weights']['W_o']}")
    check(v["examples_view"]["weights_edited"], "weights_edited is false")
    iv = v["inspect_view"]
    check(iv["tensor"] == "attn_out" and iv["step"] == "output projection", f"inspector shows {iv['tensor']} ({iv['step']})")
    hand = np.array(lesson_concat_by_hand()) @ w_o
    close(iv["values"], hand, 1e-5, "attn_out in the inspector vs hand calculation with W_O[0,0] = 2")
    # The saved files reproduce the GUI's numbers through the headless path.
    ref = cli_npz(mhaviz, d, "ref.npz", "--input", "x.npz", "--weights", "w.npz", "--heads", "2", "--norm", "none")
    close(ref["attn_out"][0], iv["values"], 1e-6, "mhaviz trace on the saved x.npz/w.npz vs the GUI's attn_out")
    close(ref["W_o"], w_o, 0, "saved W_o")


def test_lesson_files(mhaviz, d):
    """Load x and the weights from .npz files in the Lesson view (and a missing file:
    an error in the window, nothing else changes); the GUI then computes what
    `mhaviz trace --input --weights` computes."""
    rng = np.random.default_rng(3)
    np.savez(os.path.join(d, "x.npz"), x=rng.standard_normal((5, 8)).astype(np.float32))
    w = {k: (rng.standard_normal((8, 8)) * 0.5).astype(np.float32) for k in ("W_q", "W_k", "W_v", "W_o")}
    w["b_q"] = rng.standard_normal(8).astype(np.float32)
    np.savez(os.path.join(d, "w.npz"), **w)
    app = g.App(mhaviz, d, ["--sentence", "the cat sat", "--heads", "2", "--d-model", "16", "--view", "examples"],
                size=(1600, 1000))
    try:
        def load(field, button, name, pred, what):
            f = app.widget(field)
            click(app, f)
            app.key("ctrl", "a")
            app.type_held(name)
            return click_until(app, button, pred, what)

        load("input_path", "load_input", "missing.npz", lambda p: p["examples"]["file_message"].startswith("Could not load x"),
             "the error for a missing file")
        p = app.probe()
        check(p["ok"] and p["d_model"] == 16 and p["tokens"] == ["the", "cat", "sat"], "a failed load changed the input")
        load("input_path", "load_input", "x.npz",
             lambda p: p["ok"] and p["d_model"] == 8 and p["tokens"] == ["#0", "#1", "#2", "#3", "#4"], "x from x.npz")
        load("weights_path", "load_weights", "w.npz", lambda p: p["examples"]["file_message"].startswith("Loaded the weights"),
             "the weights from w.npz")
        final = app.quit()
    finally:
        app.kill()
    check(final["ok"], final["error"])
    lv = final["views"]["examples_view"]
    check(lv["input_source"] == "x.npz" and lv["weights_source"] == "w.npz", f"sources {lv['input_source']}, {lv['weights_source']}")
    close(lv["weights"]["W_q"], w["W_q"], 0, "W_q in the editor vs the file")
    close(lv["weights"]["b_q"], w["b_q"], 0, "b_q in the editor vs the file")
    ref = cli_npz(mhaviz, d, "ref.npz", "--input", "x.npz", "--weights", "w.npz", "--heads", "2")
    close(final["trace"]["attention"], ref["attn"][0], 1e-6, "GUI attention vs mhaviz trace --input --weights")


def test_old_name(mhaviz, d):
    """--view lesson, the tab's name before it was Examples, still opens it (lesson files
    and notes written with it keep working); a name that is no view is refused."""
    probe = os.path.join(d, "probe.json")
    subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "3", "--view", "lesson", "--probe", probe], check=True,
                   cwd=d, env=dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config")), timeout=g.RUN_TIMEOUT)
    p = g.read_json(probe)
    check(p["view"] == "examples" and "load_lesson" in p["widgets"], f"--view lesson shows {p['view']!r}")
    r = subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "1", "--view", "lessons"], cwd=d,
                       capture_output=True, text=True, timeout=g.RUN_TIMEOUT)
    check(r.returncode == 2 and "examples" in r.stderr, f"--view lessons: {r.returncode} {r.stderr[-300:]!r}")


TESTS = {
    "old_name": test_old_name,
    "preset": test_lesson_preset,
    "editor": test_lesson_editor,
    "files": test_lesson_files,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "examples", needs_numpy=True))
