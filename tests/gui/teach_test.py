#!/usr/bin/env python3
"""GUI tests of the teaching views: the real window under Xvfb, checked
through the app's own outputs (--dump-state's "views", the files the Lesson view
saves) against hand calculations, numpy and the headless `mhaviz trace`.

    teach_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gui_test as g  # noqa: E402  (App, check, xdo, read_json, HOLD, Fail, SKIP)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))

try:
    import numpy as np
    from checks import float32_tol  # noqa: E402  (tests/cli/checks.py: the tolerance rule; needs numpy)
except ImportError:  # pragma: no cover
    np = None

check = g.check


def click(app, rect):
    """Clicks the middle of `rect` after the pointer has rested there for a few frames:
    ImGui's tabs and overlapping items ignore a press in the first frame over them
    when another item was hovered the frame before (ButtonBehavior, AllowItemOverlap),
    which a loaded machine can turn into a lost click."""
    g.xdo("mousemove", "--window", app.wid, int(rect[0] + rect[2] / 2), int(rect[1] + rect[3] / 2))
    app.settle(3)
    g.xdo("mousedown", 1, "sleep", g.HOLD, "mouseup", 1, "sleep", g.HOLD)


def click_until(app, target, pred, what, tries=3):
    """Clicks `target` (a widget name, or a rectangle [x, y, w, h]) until the probe
    satisfies `pred`. Under Xvfb on a loaded machine a click is occasionally not seen
    (about 1 in 100 here, at any widget); a second click is what a user would do, and
    the state must still follow it."""
    for attempt in range(tries):
        click(app, app.widget(target) if isinstance(target, str) else target)
        try:
            return app.wait_for(pred, what, timeout=4 if attempt + 1 < tries else 20)
        except g.Fail:
            if attempt + 1 == tries:
                raise
            print(f"note: clicked {target} again ({what} did not follow the first click)")


def dump_run(mhaviz, d, *args, name="dump.json", frames=3):
    """Runs the GUI for a few frames with `args` and returns its --dump-state."""
    out = os.path.join(d, name)
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--frames", str(frames), "--dump-state", out, *args], check=True, env=env, cwd=d)
    return g.read_json(out)


def cli_npz(mhaviz, d, name, *args):
    """The same computation through `mhaviz trace --npz`, loaded with numpy."""
    path = os.path.join(d, name)
    subprocess.run([mhaviz, "trace", "--quiet", "--npz", path, *args], check=True, cwd=d)
    return dict(np.load(path))


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


def close(a, b, tol, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    check(a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}")
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    check(err <= tol, f"{what}: differs by {err:g} (tolerance {tol:g})\n{a}\n{b}")


# --- tests ------------------------------------------------------------------

def test_lesson_preset(mhaviz, d):
    """--preset lesson: the inspector's concat and the query view's sum are the hand-computed numbers."""
    dump = dump_run(mhaviz, d, "--preset", "lesson", "--view", "inspector", "--inspect", "concat",
                    "--view-head", "1", "--view-query", "0")
    check(dump["ok"], f"lesson did not compute: {dump['error']}")
    v = dump["views"]
    check(v["view"] == "inspector", f"view {v['view']}")
    hand = lesson_concat_by_hand()
    iv = v["inspector_view"]
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
    lv = v["lesson_view"]
    check(lv["input_source"] == "the lesson example" and lv["weights_source"] == "the lesson example",
          f"sources {lv['input_source']!r} {lv['weights_source']!r}")
    check(lv["weights"]["W_o"] == np.eye(4).tolist(), f"W_o {lv['weights']['W_o']}")


def test_lesson_editor(mhaviz, d):
    """Click "Load the lesson example", edit W_O[0,0] in the weight editor, save x and
    the weights from the GUI, click the shape flow's output projection: the inspector
    shows attn_out with column 0 doubled, and `mhaviz trace` on the saved files agrees."""
    app = g.App(mhaviz, d, ["--sentence", "the cat sat", "--heads", "2", "--d-model", "8", "--view", "lesson"],
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
            click_until(app, button, lambda p, n=name: p["file_message"].startswith("Saved") and n in p["file_message"],
                        f"{name} to be saved")
        p = click_until(app, "flow_toggle", lambda p: any(k.startswith("flow attn_out") for k in p["widgets"]),
                        "the shape flow back")
        row = next(v for k, v in p["widgets"].items() if k.startswith("flow attn_out"))
        click_until(app, [row[0], row[1], 20, row[3]], lambda p: p["view"] == "inspector",
                    "the inspector after clicking the shape flow")
        final = app.quit()
    finally:
        app.kill()
    v = final["views"]
    w_o = np.eye(4)
    w_o[0, 0] = 2.0
    check(v["lesson_view"]["weights"]["W_o"] == w_o.tolist(), f"W_o after the edit: {v['lesson_view']['weights']['W_o']}")
    check(v["lesson_view"]["weights_edited"], "weights_edited is false")
    iv = v["inspector_view"]
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
    app = g.App(mhaviz, d, ["--sentence", "the cat sat", "--heads", "2", "--d-model", "16", "--view", "lesson"],
                size=(1600, 1000))
    try:
        def load(field, button, name, pred, what):
            f = app.widget(field)
            click(app, f)
            app.key("ctrl", "a")
            app.type_held(name)
            return click_until(app, button, pred, what)

        load("input_path", "load_input", "missing.npz", lambda p: p["file_message"].startswith("Could not load x"),
             "the error for a missing file")
        p = app.probe()
        check(p["ok"] and p["d_model"] == 16 and p["tokens"] == ["the", "cat", "sat"], "a failed load changed the input")
        load("input_path", "load_input", "x.npz",
             lambda p: p["ok"] and p["d_model"] == 8 and p["tokens"] == ["#0", "#1", "#2", "#3", "#4"], "x from x.npz")
        load("weights_path", "load_weights", "w.npz", lambda p: p["file_message"].startswith("Loaded the weights"),
             "the weights from w.npz")
        final = app.quit()
    finally:
        app.kill()
    check(final["ok"], final["error"])
    lv = final["views"]["lesson_view"]
    check(lv["input_source"] == "x.npz" and lv["weights_source"] == "w.npz", f"sources {lv['input_source']}, {lv['weights_source']}")
    close(lv["weights"]["W_q"], w["W_q"], 0, "W_q in the editor vs the file")
    close(lv["weights"]["b_q"], w["b_q"], 0, "b_q in the editor vs the file")
    ref = cli_npz(mhaviz, d, "ref.npz", "--input", "x.npz", "--weights", "w.npz", "--heads", "2")
    close(final["trace"]["attention"], ref["attn"][0], 1e-6, "GUI attention vs mhaviz trace --input --weights")


def test_query_and_metrics(mhaviz, d):
    """The query, scaling, head-metrics, head-count and GQA views against the trace and numpy."""
    sentence = "the quick brown fox jumps over the lazy dog"
    args = ["--sentence", sentence, "--heads", "4", "--d-model", "256", "--kv-heads", "2", "--mask", "causal",
            "--seed", "7"]
    dump = dump_run(mhaviz, d, *args, "--view", "query", "--view-head", "3", "--view-query", "4")
    check(dump["ok"], dump["error"])
    v, attn = dump["views"], dump["trace"]["attention"]
    ref = cli_npz(mhaviz, d, "ref.npz", *args)
    # 1. One query: the trace's own weights, the masked keys, and the sum = context.
    q = v["query_view"]
    check(q["head"] == 3 and q["query"] == 4 and q["kv_head"] == 1, f"head {q['head']} query {q['query']} kv {q['kv_head']}")
    for k in q["keys"]:
        check(k["weight"] == attn[3][4][k["index"]], f"key {k['index']}: weight {k['weight']} != trace {attn[3][4][k['index']]}")
        check(k["masked"] == (k["index"] > 4), f"key {k['index']} masked = {k['masked']}")
        if k["masked"]:
            check(k["scaled"] is None and k["weight"] == 0.0, f"masked key {k['index']}: {k['scaled']}, {k['weight']}")
    close(q["trace_context"], ref["context"][0, 3, 4], 0, "trace_context vs mhaviz trace's context[0, 3, 4]")
    # Two float32 sums over the keys (32 ulps of the context's scale).
    close(q["context"], ref["context"][0, 3, 4], float32_tol(ref["context"][0, 3], ref["k"].shape[2], 32),
          "the query view's sum vs mhaviz trace's context")
    close(q["q"], ref["q"][0, 3, 4], 0, "q")
    close([k["k"] for k in q["keys"]], ref["k"][0, 1], 0, "k of K/V head 1")
    # 2. Scaling: the configuration's own variant reproduces the trace; without it the softmax saturates.
    sv = v["scaling_view"]
    close(sv["with_scaling"]["weights"], ref["attn"][0, 3], 1e-6, "with-scaling weights vs the trace's attn")
    check(sv["without_scaling"]["stats"]["mean_entropy"] < sv["with_scaling"]["stats"]["mean_entropy"],
          "no sqrt(d_k): the entropy should drop")
    check(sv["without_scaling"]["stats"]["mean_max_weight"] > sv["with_scaling"]["stats"]["mean_max_weight"],
          "no sqrt(d_k): the max weight should rise")
    check(abs(sv["without_scaling"]["score_std"] / sv["with_scaling"]["score_std"] - 8.0) < 1e-3,
          "unscaled scores should spread sqrt(64) = 8 times wider")
    # 3. Head metrics from the weights, recomputed in numpy.
    hv = v["heads_view"]
    A = ref["attn"][0].astype(np.float64)
    for s in hv["summaries"]:
        h = s["head"]
        check(abs(s["mean_max_weight"] - A[h].max(axis=1).mean()) < 1e-6, f"head {h} mean max weight")
        p = A[h]
        ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)).sum(axis=1).mean()
        # Relative to the entropy's scale (checks.float32_tol), a sum over the keys.
        etol = float32_tol(ent, A.shape[-1])
        check(abs(s["mean_entropy"] - ent) <= etol, f"head {h} mean entropy {s['mean_entropy']} vs {ent} ({etol:.1e})")
        check(abs(s["self"] - np.diag(p).mean()) < 1e-6, f"head {h} self weight")
    D = np.array(hv["divergence"])
    check(np.allclose(D, D.T) and np.allclose(np.diag(D), 0), "divergence matrix not symmetric with zero diagonal")
    m = 0.5 * (A[0] + A[2])
    def kl(a, b):
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1) / np.where(b > 0, b, 1)), 0).sum(axis=1)
    js = (0.5 * kl(A[0], m) + 0.5 * kl(A[2], m)).mean()
    check(abs(D[0, 2] - js) <= float32_tol(js, A.shape[-1]), f"JS(head 0, head 2) = {D[0, 2]}, numpy {js}")
    # 4. Head count: the divisors of 256, the same parameter count on every row.
    hc = v["head_count_view"]["rows"]
    check([r["num_heads"] for r in hc] == [1, 2, 4, 8, 16, 32, 64, 128, 256], f"head counts {[r['num_heads'] for r in hc]}")
    check(len({r["params"] for r in hc}) == 1 and hc[0]["params"] == 4 * (256 * 256 + 256), "params should not depend on num_heads")
    check([r["current"] for r in hc].count(True) == 1 and next(r for r in hc if r["current"])["num_heads"] == 4, "current row")
    check(all(("gqa" in r) == (r["num_heads"] % 2 == 0) for r in hc), "GQA columns where 2 divides num_heads")
    # 7. GQA: who shares what, and the bytes saved for 9 tokens.
    gv = v["gqa_view"]
    check(gv["kind"] == "grouped-query" and gv["kv_head_of"] == [0, 0, 1, 1], f"GQA {gv['kind']} {gv['kv_head_of']}")
    check(gv["kv_cache_bytes"] == 2 * 2 * 64 * 9 * 4 and gv["mha_kv_cache_bytes"] == 2 * 4 * 64 * 9 * 4,
          f"KV cache {gv['kv_cache_bytes']} / {gv['mha_kv_cache_bytes']}")
    check(gv["params_saved"] == 2 * (256 * 256 + 256) - 2 * (256 * 128 + 128), f"params saved {gv['params_saved']}")


def test_cross_and_encoder(mhaviz, d):
    """Cross-attention: rectangular maps and the self-attention contrast; the encoder
    block: its FFN rows in the flow and ffn_hidden in the inspector."""
    args = ["--sentence", "the cat sat", "--memory", "le chat est assis", "--heads", "2", "--d-model", "16"]
    dump = dump_run(mhaviz, d, *args, "--view", "cross", "--view-head", "1")
    cv = dump["views"]["cross_view"]
    check(cv["cross"] and cv["seq"] == 3 and cv["seq_kv"] == 4, f"cross view {cv.get('cross')} {cv.get('seq')} {cv.get('seq_kv')}")
    check(cv["kind"].startswith("cross-attention") and "3 x 4" in cv["explanation"], f"{cv['kind']}: {cv['explanation']}")
    check(cv["key_tokens"] == ["le", "chat", "est", "assis"], f"key tokens {cv['key_tokens']}")
    self_ref = cli_npz(mhaviz, d, "self.npz", *args[:2], *args[4:])  # the same sentence and weights, no memory
    close(cv["self_attention_head"], self_ref["attn"][0, 1], 1e-6, "the contrast's self-attention vs mhaviz trace")
    check(len(dump["trace"]["attention"][1][0]) == 4, "cross-attention maps are not 3 x 4")

    args = ["--sentence", "the cat sat on the mat", "--heads", "2", "--d-model", "8", "--block", "encoder",
            "--d-ff", "24", "--activation", "gelu"]
    dump = dump_run(mhaviz, d, *args, "--inspect", "ffn_hidden")
    steps = [r["step"] for r in dump["trace"]["shape_flow"]]
    check("FFN expand + GELU" in steps and "FFN contract" in steps, f"no FFN rows in the shape flow: {steps}")
    iv = dump["views"]["inspector_view"]
    check(iv["shape"] == [1, 6, 24], f"ffn_hidden shape {iv.get('shape')}")
    ref = cli_npz(mhaviz, d, "enc.npz", *args)
    close(iv["values"], ref["ffn_hidden"][0], 0, "ffn_hidden in the inspector vs mhaviz trace")
    check(dump["settings"]["config"]["block"] == "encoder" and dump["settings"]["config"]["d_ff"] == 24,
          "encoder block not in the saved settings")


def test_live_views(mhaviz, d):
    """Every tab opens by a click; a view's controls (num_kv_heads in the GQA view, a row
    of the head-count table, the temperature slider) recompute at once."""
    app = g.App(mhaviz, d, ["--sentence", "a b c d e", "--heads", "4", "--d-model", "32"], size=(1600, 1000))
    try:
        for name in ("query", "scaling", "heads", "head-count", "gqa", "cross", "lesson", "inspector", "heatmaps"):
            click_until(app, "tab " + name, lambda p, n=name: p["view"] == n, f"the {name} tab")
        click_until(app, "tab gqa", lambda p: p["view"] == "gqa", "the GQA tab")
        gen = app.probe()["generation"]
        click_until(app, "kv 1", lambda p: p["ok"] and p["generation"] > gen, "a recompute for num_kv_heads = 1")
        click_until(app, "tab head-count", lambda p: p["view"] == "head-count", "the head-count tab")
        click_until(app, "head_count 8", lambda p: p["num_heads"] == 8, "num_heads = 8 from the head-count table")
        # The volume knob: a click on the temperature slider sets T, and the trace follows.
        click_until(app, "tab scaling", lambda p: p["view"] == "scaling", "the scaling tab")
        gen = app.probe()["generation"]
        # The middle of the logarithmic 0.05 .. 20 slider is T = 1 (no change): click at 3/4.
        r = app.widget("temperature")
        click_until(app, [r[0] + 0.75 * r[2], r[1], 0, r[3]], lambda p: p["generation"] > gen,
                    "a recompute for the new temperature")
        final = app.quit()
    finally:
        app.kill()
    cfg = final["settings"]["config"]
    check(cfg["num_heads"] == 8 and cfg["num_kv_heads"] == 1, f"config after the clicks: {cfg}")
    gv = final["views"]["gqa_view"]
    check(gv["kind"] == "multi-query" and gv["kv_head_of"] == [0] * 8, f"GQA view {gv.get('kind')} {gv.get('kv_head_of')}")
    T = cfg["temperature"]
    sv = final["views"]["scaling_view"]["with_scaling"]
    check(T != 1.0 and 0.05 <= T <= 20, f"temperature after the click: {T}")
    check(abs(sv["temperature"] - T) < 1e-6 and abs(sv["multiplier"] - 1 / (math.sqrt(32 / 8) * T)) < 1e-5,
          f"scaling view at T = {sv['temperature']}, multiplier {sv['multiplier']}; config T = {T}")
    close(sv["weights"], final["trace"]["attention"][0], 1e-6, "the scaling view's weights vs the trace at the new T")


def test_positional_heads(mhaviz, d):
    """--preset heads: four hand-built heads on the sentence attend to the previous, the same,
    the first and the next word; the Head metrics view says so, and the trace's weights equal
    a numpy recomputation of the documented construction."""
    sentence = "the cat sat on the mat and the dog ran"
    dump = dump_run(mhaviz, d, "--sentence", sentence, "--preset", "heads", "--view", "heads")
    check(dump["ok"], f"the example did not compute: {dump['error']}")
    v = dump["views"]
    pats = [h["pattern"] for h in v["heads_view"]["summaries"]]
    check(pats == ["previous", "self", "first token", "next"], f"head patterns {pats}")
    for h in v["heads_view"]["summaries"]:
        check(h["mean_max_weight"] > 0.95, f"head {h['head']} is not sharp: mean max weight {h['mean_max_weight']}")
    check(v["lesson_view"]["input_source"] == "the positional-heads example", f"source {v['lesson_view']['input_source']!r}")
    # numpy: x = PE(pos) only; head h compares the 8 fastest pairs, rotated by -1, 0, (first), +1 positions.
    n, D, a = len(sentence.split()), 64, 5.0
    pos = np.arange(n)[:, None]
    i2 = np.arange(0, D, 2)[None, :]
    x = np.zeros((n, D))
    x[:, 0::2] = np.sin(pos / 10000.0 ** (i2 / D))
    x[:, 1::2] = np.cos(pos / 10000.0 ** (i2 / D))
    attn = np.array(dump["trace"]["attention"], dtype=np.float64)
    for h, shift in enumerate([1.0, 0.0, None, -1.0]):
        k = a * x[:, :16]
        if shift is None:
            q = np.tile(np.tile([0.0, a], 8), (n, 1))
        else:
            q = np.zeros((n, 16))
            for f in range(8):
                t = shift * 10000.0 ** (-2.0 * f / D)
                s_, c_ = x[:, 2 * f], x[:, 2 * f + 1]
                q[:, 2 * f] = a * (s_ * np.cos(t) - c_ * np.sin(t))
                q[:, 2 * f + 1] = a * (s_ * np.sin(t) + c_ * np.cos(t))
        sc = q @ k.T / 4.0
        w = np.exp(sc - sc.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        # float32 weights against float64 (checks.float32_tol: the 16-term scores).
        close(attn[h], w, float32_tol(w, 16), f"head {h}'s weights vs numpy")


def test_divergence_bounded(mhaviz, d):
    """Head metrics with more heads than the divergence covers: it is computed (off the UI
    thread) for the first 16 heads only, says so, and equals numpy's JS divergence."""
    args = ["--sentence", "a b c d e f g h", "--heads", "20", "--d-model", "80", "--seed", "3"]
    dump = dump_run(mhaviz, d, *args, "--view", "heads")
    check(dump["ok"], dump["error"])
    hv = dump["views"]["heads_view"]
    check(len(hv["summaries"]) == 20, f"{len(hv['summaries'])} head summaries, not 20")
    check(hv.get("divergence_heads") == 16, f"divergence over {hv.get('divergence_heads')} heads, not the first 16")
    D = np.array(hv["divergence"])
    check(D.shape == (16, 16), f"divergence shape {D.shape}")
    A = cli_npz(mhaviz, d, "ref.npz", *args)["attn"][0].astype(np.float64)

    def kl(a, b):
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1) / np.where(b > 0, b, 1)), 0).sum(axis=1)
    for i, j in [(0, 1), (3, 15), (7, 12)]:
        m = 0.5 * (A[i] + A[j])
        js = (0.5 * kl(A[i], m) + 0.5 * kl(A[j], m)).mean()
        check(abs(D[i, j] - js) <= float32_tol(js, A.shape[-1]) and D[i, j] == D[j, i],
              f"JS(head {i}, head {j}) = {D[i, j]}, numpy {js}")


TESTS = {
    "divergence_bounded": test_divergence_bounded,
    "positional_heads": test_positional_heads,
    "lesson_preset": test_lesson_preset,
    "lesson_editor": test_lesson_editor,
    "lesson_files": test_lesson_files,
    "query_and_metrics": test_query_and_metrics,
    "cross_and_encoder": test_cross_and_encoder,
    "live_views": test_live_views,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "teach", needs_numpy=True))
