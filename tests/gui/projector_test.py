#!/usr/bin/env python3
"""GUI tests of the app on a projector: what a class reads from the back of the room.
Random weights are marked as such and their heads claim no pattern they do not beat
chance by; presentation mode keeps what the teacher selected and says what is shown;
bigger text gives bigger cells with upright labels and their numbers. Checked through
--probe and --dump-state (each run waits on the app's frame counter, never a clock).

    projector_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, or no xdotool).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402

check = g.check
KO = "고양이가 쥐를 잡았다"


def gui_run(mhaviz, d, *args, name="run", frames=4, size=(1280, 800)):
    """The app for `frames` frames: its --dump-state and last --probe."""
    dump, probe = os.path.join(d, name + ".json"), os.path.join(d, name + ".probe.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    r = subprocess.run([mhaviz, "gui", "--frames", str(frames), "--width", str(size[0]), "--height", str(size[1]),
                        "--dump-state", dump, "--probe", probe, *args], env=env, cwd=d, capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, f"{name}: mhaviz gui {' '.join(args)} exited {r.returncode}: {r.stderr[-800:]}")
    return g.read_json(dump), g.read_json(probe)


def chance_rule(attn, causal=False):
    """The label the head metrics must give one head's map (rows x keys), computed here
    from the weights: the relation with the largest mean weight, claimed only when it is
    at least halfway from the even spread 1/n to 1 and a head picking one key per row at
    random reaches that mean with probability under 5%."""
    import math
    n, m = len(attn), len(attn[0])
    seen = [min(i + 1, m) if causal else m for i in range(n)]
    rel = {"self": [(i, i) for i in range(n)], "previous": [(i, i - 1) for i in range(1, n)],
           "next": [(i, i + 1) for i in range(n)], "first token": [(i, 0) for i in range(1, n)]}
    best = None
    for name in ("self", "previous", "next", "first token"):
        cells = [(i, j) for i, j in rel[name] if 0 <= j < seen[i]]
        if not cells:
            continue
        w = sum(attn[i][j] for i, j in cells) / len(cells)
        if best is None or w > best[1]:
            best = (name, w, [1.0 / seen[i] for i, _ in cells])
    if best is None:
        return "no clear pattern", None
    name, w, p = best
    chance = sum(p) / len(p)
    if chance >= 1 - 1e-12:
        return "no clear pattern", (name, w, chance, 0.0, 1.0)
    lift = (w - chance) / (1 - chance)
    hits = math.ceil(w * len(p) - 1e-9)
    dist = [1.0]  # Poisson binomial, exactly
    for x in p:
        dist = [a * (1 - x) + (dist[k - 1] * x if k else 0.0) for k, a in enumerate(dist + [0.0])]
    tail = sum(dist[hits:])
    label = name if lift >= 0.5 and tail < 0.05 else "no clear pattern"
    return label, (name, w, chance, lift, tail)


# --- tests ------------------------------------------------------------------

def test_random_untrained(mhaviz, d):
    """Random weights are said to be untrained on the heatmaps, the head metrics and in an
    export; mhaviz-small says it is trained, and which layer. On the rehearsal's 3 tokens
    no random head claims a pattern (with 3 keys chance is 1/3, and previous, next and
    first rest on 2 rows); every label, there and on longer sentences, is the one the
    chance rule gives from the weights themselves."""
    svg = os.path.join(d, "heads.svg")
    dump, probe = gui_run(mhaviz, d, "--sentence", KO, "--export", svg, name="ko")
    w = dump.get("weights", {})
    check(w.get("kind") == "random" and "untrained" in w.get("text", ""), f"weights marker {w}")
    check("weights_badge" in probe["widgets"], f"no weights marker on the heatmaps: {sorted(probe['widgets'])}")
    with open(svg, encoding="utf-8") as f:
        check("random weights (untrained)" in f.read(), "the exported SVG does not say the weights are untrained")
    dump, probe = gui_run(mhaviz, d, "--sentence", KO, "--view", "metrics", name="ko_heads")
    check("weights_badge" in probe["widgets"], "no weights marker on the head metrics")
    summaries = dump["views"]["metrics_view"]["summaries"]
    claimed = [(h["head"], h["pattern"]) for h in summaries if h["pattern"] != "no clear pattern"]
    check(not claimed, f"random heads on 3 tokens claim patterns: {claimed}")
    # Longer sentences, seeds and a causal mask: the labels follow the rule, computed here.
    for k, args in enumerate((["--sentence", "the cat sat on the mat and the dog ran to the door", "--seed", "7"],
                              ["--sentence", "a b c d e f g h", "--heads", "16", "--d-model", "64", "--seed", "3"],
                              ["--sentence", "the cat sat on the mat and the dog ran", "--mask", "causal"],
                              ["--sentence", "the cat sat on the mat and the dog ran", "--preset", "heads"],
                              ["--sentence", KO, "--preset", "heads"])):
        dump, _ = gui_run(mhaviz, d, *args, "--view", "metrics", name=f"rule{k}", frames=2)
        attn = dump["trace"]["attention"]
        causal = "causal" in args
        for h in dump["views"]["metrics_view"]["summaries"]:
            want, why = chance_rule(attn[h["head"]], causal)
            check(h["pattern"] == want, f"{args}: head {h['head']} labelled {h['pattern']!r}, the rule gives "
                                        f"{want!r} ({why})")
            if why:
                check(abs(h.get("chance", -1) - why[2]) < 1e-9 and abs(h.get("lift", -9) - why[3]) < 1e-6 and
                      abs(h.get("chance_p", -1) - why[4]) < 1e-9, f"{args}: head {h['head']}: {h} vs {why}")
        if "--preset" in args and len(dump["trace"]["tokens"]) > 3:
            pats = [h["pattern"] for h in dump["views"]["metrics_view"]["summaries"]]
            check(pats == ["previous", "self", "first token", "next"], f"the hand-built heads read {pats}")
            check(dump["weights"]["kind"] == "hand-set", f"hand-built heads' weights: {dump['weights']}")
    # The trained model says so, with its layer.
    dump, probe = gui_run(mhaviz, d, "--model", "mhaviz-small", "--sentence", KO, "--layer", "1", name="lm")
    w = dump.get("weights", {})
    check(w.get("kind") == "trained" and w.get("text") == "trained: mhaviz-small \u00b7 layer 1", f"mhaviz-small: {w}")
    check("weights_badge" in probe["widgets"], "no weights marker on mhaviz-small's heatmaps")


def test_text_size_flag(mhaviz, d):
    """--text-size PCT starts at that text size (as the View menu and Ctrl+= set it):
    the UI font scales with it; a size outside 75..300 is a usage error (exit 2)."""
    base, _ = gui_run(mhaviz, d, "--sentence", KO, name="base", frames=2)
    check(base["text_size"] == 100, f"default text size {base['text_size']}")
    for pct in (150, 200, 300):
        dump, probe = gui_run(mhaviz, d, "--sentence", KO, "--text-size", str(pct), name=f"t{pct}", frames=2)
        check(dump["text_size"] == pct and probe["text_size"] == pct, f"--text-size {pct}: {dump['text_size']}")
        want = round(base["font_px"] * pct / 100)
        check(abs(dump["font_px"] - want) <= 1, f"--text-size {pct}: font {dump['font_px']} px, expected ~{want}")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    for bad in ("50", "301", "big"):
        r = subprocess.run([mhaviz, "gui", "--frames", "1", "--text-size", bad], capture_output=True, text=True,
                           env=env, cwd=d, timeout=60)
        check(r.returncode == 2 and "--text-size" in r.stderr, f"--text-size {bad}: exit {r.returncode}, {r.stderr!r}")


def click(app, rect):
    """Clicks the middle of `rect` once the pointer has rested there a few frames (ImGui
    ignores a press in the first frame over an item when another was hovered before)."""
    g.xdo("mousemove", "--window", app.wid, int(rect[0] + rect[2] / 2), int(rect[1] + rect[3] / 2))
    app.settle(3)
    g.xdo("mousedown", 1, "sleep", g.HOLD, "mouseup", 1, "sleep", g.HOLD)


def test_present_keeps_selection(mhaviz, d):
    """The rehearsal's steps: mhaviz-small, layer 1 head 3 clicked in the Model view, F11:
    presentation shows layer 1's head 3, alone; the arrow key moves on, and Esc comes back
    with that head enlarged. --enlarge 3 --present starts on head 3; F11 over the grid of
    every head presents every head."""
    dump, _ = gui_run(mhaviz, d, "--sentence", KO, "--enlarge", "3", "--present", name="flags", frames=2)
    pr = dump["present"]
    check((pr["on"], pr["layout"], pr["head"]) == (True, 0, 3), f"--enlarge 3 --present: {pr}")
    app = g.App(mhaviz, d, ["--model", "mhaviz-small", "--sentence", KO, "--view", "model-view"])
    try:
        p = app.wait_for(lambda p: "model_view_map 1 3" in p["widgets"], "the model view's maps")
        # At 1280 x 800 layer 1's maps start below the fold (each map has its knock-out
        # switches under it): scroll the view, as a teacher would, until the map's top shows.
        for _ in range(12):
            r = app.widget("model_view_map 1 3")
            if r[1] + 40 <= p["window"][1] - 40:  # the status bar is the window's last 30-odd px
                break
            g.xdo("mousemove", "--window", app.wid, int(r[0] + r[2] / 2), int(p["window"][1] / 2 + 100), "click", 5)
            p = app.settle(3)
        for attempt in range(3):
            r = app.widget("model_view_map 1 3")
            click(app, [r[0], r[1], r[2], 16])  # its top
            try:
                app.wait_for(lambda p: p["enlarged"] == 3 and p["view"] == "heatmaps", "head 3 opened", timeout=5)
                break
            except g.Fail:
                check(attempt < 2, "clicking layer 1 head 3 in the model view did not open it")
        p = app.wait_for(lambda p: p.get("weights", {}).get("text", "").endswith("layer 1"), "layer 1")
        app.key("F11")
        p = app.wait_for(lambda p: p["present"]["on"], "presentation mode")
        check(p["present"]["layout"] == 0 and p["present"]["head"] == 3, f"F11 after head 3: {p['present']}")
        check(p["weights"]["text"] == "trained: mhaviz-small \u00b7 layer 1", f"F11 changed the model: {p['weights']}")
        app.key("Right")
        app.wait_for(lambda p: p["present"]["head"] == 4, "the arrow key to move to head 4")
        app.key("Escape")
        p = app.wait_for(lambda p: not p["present"]["on"], "Esc to leave")
        check(p["enlarged"] == 4, f"back from presenting head 4, enlarged is {p['enlarged']}")
        app.key("Escape")  # back to the grid of every head
        app.wait_for(lambda p: p["enlarged"] == -1, "Esc to return to all heads")
        app.key("F11")
        p = app.wait_for(lambda p: p["present"]["on"], "presentation mode again")
        check(p["present"]["layout"] == 2, f"F11 over every head presents {p['present']}, not all heads")
        app.quit()
    finally:
        app.kill()


MIXED = "고양이가 쥐를 잡았다 and the cat sat on the mat"
SIZES = ((1280, 800), (1920, 1080))


def test_text_size_cells(mhaviz, d):
    """The heatmaps at 100, 150 and 200% text, 1280 x 800 and 1920 x 1080: the cells grow
    with the text (never shrink); Korean keys stay horizontal (upright or on two staggered
    lines, never turned 90 degrees or replaced by numbers); the rehearsal's 3 tokens show
    their weights at every size; neighbouring maps' key labels never meet."""
    for size in SIZES:
        for name, sentence in (("ko", KO), ("mixed", MIXED)):
            last = None
            for pct in (100, 150, 200):
                dump, _ = gui_run(mhaviz, d, "--sentence", sentence, "--text-size", str(pct), size=size,
                                  name=f"{name}_{size[0]}_{pct}", frames=5)
                h = dump["layout"]["heatmaps"]
                where = f"{name} {size[0]}x{size[1]} {pct}%"
                # (at 100% a long sentence may number its keys, as the sentence's chips do, to keep a whole
                # map in view; from 150% the cells grow and the tokens are written out)
                keys = ("upright", "staggered") + (("index",) if pct == 100 and name == "mixed" else ())
                check(h["row_labels"] and h["key_labels"] in keys,
                      f"{where}: key labels {h['key_labels']} (Hangul must stay horizontal): {h}")
                check(h["label_px"] >= dump["font_px"] - 0.01, f"{where}: labels of {h['label_px']} px: {h}")
                check(h.get("key_label_overlaps", -1) == 0, f"{where}: neighbouring maps' key labels meet: {h}")
                if name == "ko":
                    check(h["values"], f"{where}: the 3 tokens' weights are not written in their cells: {h}")
                # (at 1920 x 1080 the 100% grid has room to spare: its cells may be bigger than
                # 150%'s, which still hold their numbers at 150%'s size with every map in view)
                if last is not None and (size[0] == 1280 or pct > 150):
                    check(h["cell_w"] >= last["cell_w"] - 0.01 and h["cell_h"] >= last["cell_h"] - 0.01,
                          f"{where}: cells of {h['cell_w']} x {h['cell_h']} px, at {pct - 50}% they were "
                          f"{last['cell_w']} x {last['cell_h']}")
                last = h


def test_present_header(mhaviz, d):
    """Presentation mode's header names the view, the weights (random or trained, and the layer),
    the head and its label with its score against chance, the same numbers as the head
    metrics; the key hint is whole in the window. mhaviz-small's 15 and 20 pieces keep
    horizontal labels and numbers no smaller than the 100% text."""
    dump, probe = gui_run(mhaviz, d, "--sentence", KO, "--enlarge", "3", "--present", name="seeded")
    header = dump["present"].get("header", "")
    name = next(x for x in dump["views"]["model_view_view"]["names"] if x["head"] == 3)
    want = f"Heatmaps | random weights (untrained) | head 3 | {name['text']} \u00b7 {name['measured_on']}"
    check(header == want and name["measured_on"] == "this sentence", f"header {header!r}, expected {want!r}")
    # The name's numbers, recomputed from the map: the strongest pattern's mean weight
    # and the mean chance 1/n over the rows it names a key on.
    A = dump["views"]["model_view_view"]["attention"][0][3]
    n = len(A)
    keys = {"self": lambda i: i, "previous-token": lambda i: i - 1, "first": lambda i: 0 if i else -1,
            "reverse": lambda i: n - 1 - i, "next": lambda i: i + 1}
    keys.update({f"{k}-back": (lambda k: lambda i: i - k)(k) for k in range(2, 9)})
    parts = name["evidence"].split(" ")  # "<label> <score> over <rows> rows, chance <c> (p = <p>)"
    label, score, rows = parts[0], parts[1], parts[3]
    rows_at = [i for i in range(n) if 0 <= keys[label](i) < n]
    mean = sum(A[i][keys[label](i)] for i in rows_at) / len(rows_at)
    check(abs(mean - float(score)) <= 0.006 and int(rows) == len(rows_at), f"{name['evidence']}: recomputed {mean}")
    best = max(sum(A[i][f(i)] for i in range(n) if 0 <= f(i) < n) / max(1, sum(0 <= f(i) < n for i in range(n)))
               for f in keys.values())
    check(abs(best - mean) <= 1e-9, f"{label} {mean} is not the strongest pattern ({best})")
    win = probe["window"]
    for k in ("present_header", "present_keys", "weights_badge"):
        r = probe["widgets"].get(k)
        check(r and r[0] >= 0 and r[0] + r[2] <= win[0] + 0.5, f"{k} at {r}, window {win}")
    for size in SIZES:
        for sentence, pieces in ((KO, 8), ("The cat sat on the mat and the dog ran to the door.", 16)):
            for pct in (100, 150, 200):
                dump, probe = gui_run(mhaviz, d, "--model", "mhaviz-small", "--sentence", sentence, "--layer", "1",
                                      "--enlarge", "2", "--present", "--text-size", str(pct), size=size,
                                      name=f"lm{pieces}_{size[0]}_{pct}", frames=4)
                where = f"mhaviz-small {pieces} pieces {size[0]}x{size[1]} {pct}%"
                check(len(dump["trace"]["tokens"]) == pieces, f"{where}: {len(dump['trace']['tokens'])} pieces")
                header = dump["present"].get("header", "")
                check(header.startswith("Heatmaps | trained: mhaviz-small \u00b7 layer 1 | head 2 | "),
                      f"{where}: {header!r}")
                h = dump["layout"]["heatmaps"]
                check(h["key_labels"] in ("upright", "staggered") and h["row_labels"], f"{where}: labels {h}")
                base = round(17 * dump["content_scale"])
                if size[0] == 1920 or pct < 200 or pieces == 8:
                    check(h["values"] and h["values_px"] >= base, f"{where}: weights not written, or under "
                                                                  f"{base} px: {h}")
                r, win = probe["widgets"].get("present_keys"), probe["window"]
                check(r and r[0] + r[2] <= win[0] + 0.5, f"{where}: the key hint at {r} is cut (window {win})")


def test_flow_splitter(mhaviz, d):
    """At 1920 x 1080 and 150 % the shape flow shows only its first rows; the splitter under
    it drags down until every row (LayerNorm and the FFN of a block included) is in view,
    and the next start (with settings) keeps that height."""
    args = ["--text-size", "150", "--sentence", KO, "--block", "encoder"]

    def rows_in_view(p):
        top = p["widgets"]["split_h"][1]
        rows = [r for k, r in p["widgets"].items() if k.startswith("flow ")]
        return rows and all(r[1] + r[3] <= top + 1 for r in rows), len(rows)

    app = g.App(mhaviz, d, args, size=(1920, 1080), settings=True)
    try:
        r = app.widget("split_h")
        shown, n = rows_in_view(app.settle())
        check(n >= 8, f"{n} rows of the shape flow")
        x, y = r[0] + r[2] / 2, r[1] + r[3] / 2
        g.xdo("mousemove", "--window", app.wid, int(x), int(y), "sleep", "0.2", "mousedown", "1", "sleep", "0.2")
        for k in range(1, 13):
            g.xdo("mousemove", "--window", app.wid, int(x), int(y + 40 * k), "sleep", "0.1")
        g.xdo("mouseup", "1", "sleep", "0.2")
        p = app.wait_for(lambda p: p["widgets"]["split_h"][1] > r[1] + 200, "the splitter to move")
        p = app.settle()
        check(rows_in_view(p)[0], f"rows still below the splitter at {p['widgets']['split_h']}")
        moved = p["widgets"]["split_h"][1]
        app.quit()
    finally:
        app.kill()
    app = g.App(mhaviz, d, args, size=(1920, 1080), settings=True)
    try:
        p = app.settle()
        check(abs(p["widgets"]["split_h"][1] - moved) <= 2, f"splitter at {p['widgets']['split_h']} after a restart, "
                                                           f"was {moved}")
    finally:
        app.kill()


def test_present_pages_fit(mhaviz, d):
    """At 150% text, presentation's 2 x 2 page shows its 4 maps and "all heads" all 9, each
    wholly in the window, without a scroll, in different grids."""
    for size in SIZES:
        app = g.App(mhaviz, d, ["--sentence", MIXED, "--present", "--text-size", "150"], size=size)
        try:
            grids = {}
            for layout, maps in ((1, 4), (2, 9)):
                for attempt in range(3):
                    click(app, app.widget(f"present {layout}"))
                    try:
                        p = app.wait_for(lambda p: p["present"]["layout"] == layout and
                                         p["layout"]["heatmaps"]["maps"] == maps, f"layout {layout}", timeout=5)
                        break
                    except g.Fail:
                        check(attempt < 2, f"layout {layout} did not open")
                p = app.settle()
                h, w = p["layout"]["heatmaps"], p["widgets"]
                view = w["heatmaps_view"]
                check(not h["scroll"], f"{size} layout {layout} scrolls: {h}")
                for k in range(maps):
                    m = w.get(f"map {k}")
                    check(m and m[0] >= view[0] - 0.5 and m[1] >= view[1] - 0.5 and m[0] + m[2] <= view[0] + view[2] + 0.5
                          and m[1] + m[3] <= view[1] + view[3] + 0.5, f"{size} layout {layout}: map {k} {m} not in {view}")
                grids[layout] = (h["grid_cols"], h["grid_rows"])
            check(grids[1] == (2, 2) and grids[2] != grids[1], f"{size}: the pages' grids {grids}")
            app.quit()
        finally:
            app.kill()


def test_softmax_values(mhaviz, d):
    """The Softmax & sqrt(d_k) tab writes every score and weight in its cell ("…" in none)
    at 100, 150 and 200% text, 1280 x 800 and 1920 x 1080, and the numbers are the
    trace's."""
    for size in SIZES:
        for pct in (100, 150, 200):
            dump, _ = gui_run(mhaviz, d, "--sentence", KO, "--view", "softmax", "--text-size", str(pct), size=size,
                              name=f"scaling_{size[0]}_{pct}", frames=4)
            sc = dump["layout"].get("scaling", {})
            where = f"{size[0]}x{size[1]} {pct}%"
            # two rows (with and without the scaling) of three 3 x 3 maps
            # (in view or below the fold: the view scrolls to them)
            check(sc.get("values_hidden", -1) == 0 and sc.get("values_shown", 0) == 2 * 3 * 9,
                  f"{where}: {sc} (expected 54 numbers written, none hidden)")
    v = dump["views"]["softmax_view"]["with_scaling"]
    attn = dump["trace"]["attention"][0]
    check(all(abs(a - b) < 1e-6 for ra, rb in zip(v["weights"], attn) for a, b in zip(ra, rb)),
          "the tab's softmax weights are not the trace's")


def test_shape_flow_and_status(mhaviz, d):
    """The shape flow's input row says mhaviz-small has learned positions (not "no PE"), at
    layer 0 and above; the seeded layer says sinusoidal; at 1280 x 800 the status bar ends
    inside the window; the pieces' word-start mark is kept apart from the next character."""
    for layer, formula in ((0, "x = tok_embed[tokens] + PE"), (1, "x = layer 0's output")):
        dump, probe = gui_run(mhaviz, d, "--model", "mhaviz-small", "--sentence", KO, "--layer", str(layer),
                              name=f"flow{layer}", frames=3)
        row = dump["layout"]["flow"].get("input", "")
        check(row.startswith(formula + " | ") and "learned PE" in row and "no PE" not in row,
              f"layer {layer}: the input row reads {row!r}")
        # mhaviz-small cuts the sentence as <s> ▁고양이 가 ...: the mark, a thin space, the word.
        check(probe["tokens"][1] == "_\u2009고양이", f"the word-start piece is shown as {probe['tokens'][1]!r}")
    dump, _ = gui_run(mhaviz, d, "--sentence", KO, name="flow_seeded", frames=3)
    check("sinusoidal PE" in dump["layout"]["flow"].get("input", ""), f"seeded: {dump['layout']['flow']}")
    for pct in (100, 150, 200):
        _, probe = gui_run(mhaviz, d, "--sentence", KO, "--text-size", str(pct), name=f"status{pct}", frames=3)
        r, win = probe["widgets"].get("status_end"), probe["window"]
        check(r and r[0] + r[2] <= win[0] + 0.5, f"{pct}%: the status bar ends at {r}, window {win}")


def test_lesson_presets(mhaviz, d):
    """Lesson 004's worked examples as presets, each with the lesson's numbers beside the
    computed ones: the hand calculation (X = [1, 2], W = 0.5 and 0.3) gives Q_1 = 1.5,
    Q_2 = 0.9 and concat [1.5, 0.9], checked here by hand too; the 2-head example its
    shapes. The Examples tab's button loads the hand calculation."""
    dump, _ = gui_run(mhaviz, d, "--preset", "hand", "--view", "examples", name="hand", frames=3)
    lv = dump["views"]["examples_view"]
    checks = lv.get("checks", [])
    check(lv.get("preset") == 1 and len(checks) == 10, f"hand calculation preset: {lv.get('preset')}, {checks}")
    for c in checks:
        check(c["ok"] and all(abs(a - b) < 1e-5 for a, b in zip(c["computed"], c["expected"])), f"{c}")
    # By hand: q = x W_Q with W_Q's columns [0.5, 0.5] and [0.3, 0.3]; one key, weight 1.
    x, wq = [1.0, 2.0], [[0.5, 0.3], [0.5, 0.3]]
    q = [sum(x[i] * wq[i][h] for i in range(2)) for h in range(2)]
    check(abs(q[0] - 1.5) < 1e-9 and abs(q[1] - 0.9) < 1e-9, f"by hand {q}")
    t = dump["trace"]
    check(t["attention"] == [[[1.0]], [[1.0]]], f"one key: weights {t['attention']}")
    by = {(c["tensor"], c["head"]): c for c in checks}
    check(abs(by[("concat", -1)]["computed"][0] - q[0]) < 1e-6 and abs(by[("concat", -1)]["computed"][1] - q[1]) < 1e-6,
          f"concat {by[('concat', -1)]}")
    dump, _ = gui_run(mhaviz, d, "--preset", "lesson", "--view", "examples", name="lesson", frames=3)
    lv = dump["views"]["examples_view"]
    check(lv.get("preset") == 0 and all(c["ok"] for c in lv.get("checks", [])) and len(lv.get("checks", [])) == 7,
          f"the 2-head example's shapes: {lv.get('checks')}")
    app = g.App(mhaviz, d, ["--sentence", KO, "--view", "examples"])
    try:
        for attempt in range(3):
            click(app, app.widget("load_hand"))
            try:
                app.wait_for(lambda p: p["tokens"] == ["x"] and "lesson_checks" in p["widgets"], "the hand "
                             "calculation", timeout=5)
                break
            except g.Fail:
                check(attempt < 2, "the Examples tab's button did not load the hand calculation")
        final = app.quit()
    finally:
        app.kill()
    check(all(c["ok"] for c in final["views"]["examples_view"]["checks"]), "after the click")


def test_controls_in_sight(mhaviz, d):
    """At 200% text in a 1280 x 800 window, in Korean and English, each view's row of
    controls wraps at the view's edge instead of running past it: every control named
    here lies inside the window (they
    ran past it: the Train view's Pause and Reset, the Generate view's temperature, the
    Softmax view's scaling switch, the Flash view's player, the Query view's token picker,
    the Importance view's windows choice)."""
    cases = {
        "train": ["train_start", "train_pause", "train_reset", "train_defaults", "train_offsets"],
        "generate": ["generate_go", "generate_step", "generate_reset"],
        "softmax": ["scaling_scale", "temperature"],
        "flash": ["flash bc", "flash start", "flash end", "flash play"],
        "query": ["query_token"],
        "importance": ["importance_windows"],
    }
    model = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "models",
                                          "mhaviz-small.npz"))
    for lang in ("ko", "en"):
        for view, names in cases.items():
            _, p = gui_run(mhaviz, d, "--model", model, "--sentence", KO, "--lang", lang, "--view", view,
                           "--text-size", "200", name=f"{view}_{lang}")
            width = p["window"][0]
            for n in names:
                check(n in p["widgets"], f"{view} ({lang}): no widget {n!r} drawn at 200% text")
                x, _, w, _ = p["widgets"][n]
                check(x + w <= width,
                      f"{view} ({lang}): {n} ends at x = {x + w:.0f}, past the {width} px window at 200% text")


# Presentation mode for every view: the projector's sizes the rehearsal used.
PRESENT_SIZES = (((1280, 800), 150), ((1920, 1080), 200))
# What the views that bring no trace of their own need to show something: a language
# model (Next, Generate, Importance read mhaviz-small's pieces and loss).
LM_VIEWS = ("next", "generate", "importance", "model-view")


def inside(r, win, slack=0.5):
    return r is not None and r[0] >= -slack and r[1] >= -slack and r[0] + r[2] <= win[0] + slack and \
        r[1] + r[3] <= win[1] + slack


def check_presented(where, name, essentials, dump, probe):
    """One presented view: the probe says so and names it; the view's content fills most
    of the window; the header, its "?" and every essential widget (the maps, table or
    plot, and the stepping controls) lie wholly inside the window, none below the fold."""
    pr, win, w = probe["present"], probe["window"], probe["widgets"]
    check(pr["on"] and pr.get("view") == name and isinstance(pr.get("head"), int), f"{where}: present {pr}")
    c = w.get("present_content")
    check(c and inside(c, win) and c[2] * c[3] >= 0.6 * win[0] * win[1],
          f"{where}: the view's content {c} does not fill the {win} window")
    for k in ("present_header", "present_help"):
        check(inside(w.get(k), win), f"{where}: {k} at {w.get(k)} is not in the {win} window")
    title = dump["present"]["header"].split(" | ")[0]
    tab = dump.get("labels", {}).get("tabs", {}).get(name)
    check(tab and title == tab, f"{where}: the header {dump['present']['header']!r} does not begin with the view's "
                                f"tab {tab!r}")
    for e in essentials:
        check(inside(w.get(e), win), f"{where}: {e} at {w.get(e)} is not wholly in the {win} window")


def test_present_every_view(mhaviz, d):
    """F11 / --present presents whichever view is open, for every view of the app's
    registry (a new view is covered without being listed here), in Korean, at 1280 x 800
    with 150% text and 1920 x 1080 with 200%: on seeded weights, and on mhaviz-small
    for the views that read a language model."""
    views = g.view_registry(mhaviz, d)
    for size, pct in PRESENT_SIZES:
        for v in views:
            name = v["name"]
            model = ["--model", "mhaviz-small"] if name in LM_VIEWS else []
            dump, probe = gui_run(mhaviz, d, "--sentence", KO, *model, "--view", name, "--present", "--lang", "ko",
                                  "--text-size", str(pct), size=size, name=f"present_{name}_{size[0]}", frames=5)
            essentials = v.get("essentials", [v["shows"]] if v["shows"] else [])
            check_presented(f"{name} {size[0]}x{size[1]} {pct}%", name, essentials, dump, probe)


def test_present_keys(mhaviz, d):
    """In presentation mode the arrow keys step the open view's head and PgDn / PgUp its
    own sequence (the Flash view's tiles); the header's "?" opens the explanations the
    view folded away."""
    # (10 tokens: 3 x 3 tiles of 4 x 4)
    app = g.App(mhaviz, d, ["--sentence", MIXED, "--view", "flash", "--present", "--text-size", "150"])
    try:
        p = app.wait_for(lambda p: p["present"]["on"] and "flash_tiles" in p["widgets"], "the presented Flash view")
        check(p["present"]["view"] == "flash" and p["widgets"]["flash_tiles"][0] == 0, f"{p['present']}")
        app.key("Next")
        app.wait_for(lambda p: p["widgets"]["flash_tiles"][0] == 1, "PgDn to run tile 1")
        app.key("Next")
        app.wait_for(lambda p: p["widgets"]["flash_tiles"][0] == 2, "PgDn to run tile 2")
        app.key("Prior")
        app.wait_for(lambda p: p["widgets"]["flash_tiles"][0] == 1, "PgUp to go back to tile 1")
        app.key("Right")
        app.wait_for(lambda p: p["present"]["head"] == 1, "the arrow key to move to head 1")
        app.key("Left")
        app.key("Left")
        p = app.wait_for(lambda p: p["present"]["head"] == p["num_heads"] - 1, "the arrow keys to wrap to the last head")
        check(p["present"]["view"] == "flash", f"the keys left the view: {p['present']}")
        # The explanations folded away are behind the header's "?".
        for attempt in range(3):
            click(app, app.widget("present_help"))
            try:
                p = app.wait_for(lambda p: "present_help_text" in p["widgets"], "the explanations", timeout=5)
                break
            except g.Fail:
                check(attempt < 2, "the header's ? did not open the explanations")
        r, win = p["widgets"]["present_help_text"], p["window"]
        check(inside(r, win), f"the explanations at {r} are not in the window {win}")
        app.quit()
    finally:
        app.kill()


def test_korean_keys_upright(mhaviz, d):
    """The Softmax and Cross views' maps keep Korean keys upright (or on two staggered
    lines), never turned on their side, as the heatmaps do: at 100, 150 and 200% text,
    1280 x 800 and 1920 x 1080, on a Korean sentence and a longer mixed one (the tab and
    presented)."""
    memory = "쥐가 고양이를 보았다 그리고 도망갔다"
    for size in SIZES:
        for pct in (100, 150, 200):
            for view, extra in (("softmax", []), ("cross", ["--memory", memory]), ("softmax", ["--present"])):
                for sentence in (KO, MIXED):
                    where = f"{view} {' '.join(extra)} {size[0]}x{size[1]} {pct}% {sentence!r}"
                    dump, _ = gui_run(mhaviz, d, "--sentence", sentence, "--view", view, *extra, "--text-size",
                                      str(pct), size=size, name=f"upright_{view}_{size[0]}_{pct}", frames=4)
                    m = dump["layout"].get("matrices", {})
                    check(m.get("hangul_rotated", -1) == 0 and (m.get("hangul_upright", 0) > 0 or sentence != KO),
                          f"{where}: Korean key labels {m} (turned on their side: hangul_rotated)")


def test_hand_table_whole(mhaviz, d):
    """The hand calculation's table at 150 and 200% text, 1280 x 800, in Korean and
    English: every computed row ("q[head 0] = [1.5]") ends before its verdict begins, and
    every verdict ("✓ same") ends inside the table and the window (at fixed widths the
    row ran into the tick and "same" was cut off)."""
    for lang in ("ko", "en"):
        for pct in (150, 200):
            _, p = gui_run(mhaviz, d, "--preset", "hand", "--view", "examples", "--lang", lang, "--text-size", str(pct),
                           name=f"hand_{lang}_{pct}", frames=4)
            w, win = p["widgets"], p["window"]
            table = w.get("lesson_checks")
            check(table and table[0] + table[2] <= win[0] + 0.5, f"{lang} {pct}%: the table at {table}, window {win}")
            rows = [k for k in w if k.startswith("lesson_tick ")]
            check(len(rows) == 10, f"{lang} {pct}%: {len(rows)} verdicts drawn, expected 10")
            for k in range(len(rows)):
                got, tick = w[f"lesson_got {k}"], w[f"lesson_tick {k}"]
                check(got[0] + got[2] <= tick[0] + 0.5, f"{lang} {pct}%: row {k}'s numbers {got} run into its verdict "
                                                        f"{tick}")
                check(tick[0] + tick[2] <= table[0] + table[2] + 0.5, f"{lang} {pct}%: row {k}'s verdict {tick} is cut "
                                                                       f"by the table's edge {table}")


TESTS = {
    "controls_in_sight": test_controls_in_sight,
    "text_size_cells": test_text_size_cells,
    "present_header": test_present_header,
    "flow_splitter": test_flow_splitter,
    "present_every_view": test_present_every_view,
    "present_keys": test_present_keys,
    "korean_keys_upright": test_korean_keys_upright,
    "hand_table_whole": test_hand_table_whole,
    "present_pages_fit": test_present_pages_fit,
    "softmax_values": test_softmax_values,
    "shape_flow_and_status": test_shape_flow_and_status,
    "lesson_presets": test_lesson_presets,
    "present_keeps_selection": test_present_keeps_selection,
    "random_untrained": test_random_untrained,
    "text_size_flag": test_text_size_flag,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "projector"))
