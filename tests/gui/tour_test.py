#!/usr/bin/env python3
"""GUI tests of the lesson tours: every step of every built-in lesson, in Korean and in
English, one app start per lesson and language, stepped with the arrow key: each step's
view is presented with its caption, and each question's answer, computed by the app on
the live model, matches a recomputation (`mhaviz trace` / `ablate` JSON, or the lesson's
own formula). Answering (right in Korean, wrong in English) reveals; exploring away and
"Back to the lesson" restores the step; a bad lesson file is refused.

    tour_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool).
"""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402

check = g.check
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LESSONS = os.path.join(ROOT, "assets", "lessons")
LABELS = os.path.join(ROOT, "assets", "models", "mhaviz-small.labels.json")
EPS32 = 2.0 ** -23


def lesson_file(lesson_id):
    for f in sorted(os.listdir(LESSONS)):
        if f.startswith(lesson_id + "_") and f.endswith(".json"):
            return os.path.join(LESSONS, f)
    raise g.Fail(f"no lesson {lesson_id} in {LESSONS}")


def plain(piece):
    return piece.replace("\u2581", "").replace("_\u2009", "")


def run_json(mhaviz, d, args, name):
    out = os.path.join(d, name)
    r = subprocess.run([mhaviz, *args, "--json", out] if args[0] == "trace" else [mhaviz, *args, "--json"],
                       capture_output=True, text=True, timeout=g.RUN_TIMEOUT)
    check(r.returncode == 0, f"mhaviz {' '.join(args)} failed: {r.stderr}")
    if args[0] == "trace":
        return g.read_json(out)
    return json.loads(r.stdout)


def config_flags(cfg):
    f = ["--d-model", str(cfg.get("d_model", 512)), "--heads", str(cfg.get("num_heads", 8))]
    if cfg.get("num_kv_heads"):
        f += ["--kv-heads", str(cfg["num_kv_heads"])]
    if cfg.get("scale") is False:
        f += ["--no-scale"]
    if "norm" in cfg:
        f += ["--norm", cfg["norm"]]
    return f


def reference_trace(mhaviz, d, step, layer):
    """The step's layer traced by the command line, as the app should show it."""
    if step.get("model") == "mhaviz-small":
        args = ["trace", "--model", "mhaviz-small", "--sentence", step["sentence"], "--layer", str(layer), "-q"]
    else:
        args = ["trace", "--sentence", step["sentence"], *config_flags(step.get("config", {})), "-q"]
    return run_json(mhaviz, d, args, "ref.json")


def expected_answer(mhaviz, d, step, lesson_step):
    """What the question's answer must be, recomputed without the app's own code: the
    command line's trace or ablation, or the lesson's formula."""
    q = step["question"]
    compute = q.get("compute", "")
    cfg = step.get("config", {})
    if not compute and step["view"] == "cost" and q["kind"] == "number":
        # The n where the core's 4 n^2 d FLOPs overtake the projections' 8 n d^2: n = 2d.
        return {"number": 2 * cfg.get("d_model", 512)}
    if not compute:
        return {"option": q["answer"]} if q["kind"] == "choice" else {"number": q["answer"]}
    if compute == "carrier":
        # The proof table shipped with the model: the option naming a carrier, or the one
        # marked none when no head alone takes the phenomenon to chance.
        rows = g.read_json(LABELS)["table"]["rows"]
        carriers = [r["carriers"] for r in rows if r["phenomenon"] == q["at"]]
        check(len(carriers) == 1, f"the labels file has no row {q['at']!r}")
        names = [o["en"] for o in q["options"]]
        if carriers[0]:
            option = next((names.index(c) for c in carriers[0] if c in names), -1)
        else:
            option = next((i for i, o in enumerate(q["options"]) if o.get("none")), -1)
        return {"option": option, "carriers": carriers[0]}
    if compute == "head_dim":
        return {"number": cfg.get("d_model", 512) // cfg.get("num_heads", 8)}
    if compute == "kv_bytes":
        t = reference_trace(mhaviz, d, step, 0)
        c = t["config"]
        return {"number": 2 * c["num_kv_heads"] * c["seq_kv"] * c["head_dim"] * 4}
    if compute == "top_next":
        heads = ",".join(f"L{h['layer']}H{h['head']}" for h in lesson_step_knockout(lesson_step))
        r = run_json(mhaviz, d, ["ablate", "--model", "mhaviz-small", "--heads", heads, "--sentence", step["sentence"]],
                     "ablate.json")
        pieces = [plain(p) for p in r["pieces"]]
        pos = len(pieces) - 1 - pieces[::-1].index(q["at"])
        top = plain(r["positions"][pos]["top_after"])
        names = [o["en"] for o in q["options"]]
        return {"piece": top, "option": names.index(top) if top in names else -1,
                "p": r["positions"][pos]["top_after_p"]}
    # attn_argmax, row_max: the step's head's row in the layer shown.
    t = reference_trace(mhaviz, d, step, lesson_step["layer"])
    tokens = [plain(x) for x in t["tokens"]]
    row = int(q["at"]) if q["at"].isdigit() else len(tokens) - 1 - tokens[::-1].index(q["at"])
    weights = t["attention"][lesson_step["head"]][row]
    col = max(range(len(weights)), key=lambda c: weights[c])
    bound = 32 * EPS32 * math.sqrt(t["config"]["d_model"] + len(weights))
    return {"row": row, "col": col, "number": max(weights), "bound": bound}


def lesson_step_knockout(lesson_step):
    return lesson_step.get("knockout", [])


def check_answer(p, step, want, where):
    a = p["lesson"]["question"]["answer"]
    check(a["ok"], f"{where}: the app computed no answer: {a['error']}")
    q = step["question"]
    if "option" in want and q["kind"] == "choice":
        check(a["option"] == want["option"], f"{where}: the app's option {a['option']}, recomputed {want['option']}")
    if "piece" in want:
        check(a["shown"].split(" ")[0] == want["piece"], f"{where}: the app's piece {a['shown']}, recomputed {want['piece']}")
        check(abs(a["number"] - want["p"]) <= 1e-4, f"{where}: P {a['number']} against {want['p']}")
    if "row" in want and q.get("compute") == "attn_argmax":
        check((a["row"], a["col"]) == (want["row"], want["col"]),
              f"{where}: the app's cell {(a['row'], a['col'])}, recomputed {(want['row'], want['col'])}")
    if "number" in want and q["kind"] == "number":
        bound = want.get("bound", 0)
        check(abs(a["number"] - want["number"]) <= bound,
              f"{where}: the app's number {a['number']}, recomputed {want['number']} (bound {bound})")


def answer(app, p, step, want, right, where):
    """Answers the question through its widgets (the right answer or a wrong one) and
    waits for the reveal."""
    q = step["question"]
    before = p["lesson"]["answered"]
    if q["kind"] == "choice":
        k = want["option"] if right else (want["option"] + 1) % len(q["options"])
        g.click(app, app.widget(f"lesson_option {k}"))
    elif q["kind"] == "cell":
        col = want["col"] if right else (want["col"] + 1) % (want["col"] + 2)
        g.click(app, app.widget(f"lesson_key {col}"))
    else:
        g.click(app, app.widget("lesson_number"))
        value = want["number"] if right else want["number"] + 1000
        app.type_held(f"{value:.3f}" if isinstance(value, float) else str(value))
        app.key("Return")
    p = app.wait_for(lambda p: p["lesson"].get("answered") == before + 1 and "lesson_reveal" in p["widgets"],
                     f"{where}: the reveal")
    check(p["lesson"]["question"]["right"] == right, f"{where}: answered {'right' if right else 'wrong'}, the app says "
                                                      f"right={p['lesson']['question']['right']}")
    return p


# The views that outline a revealed cell, and the one that outlines a piece's row.
CELL_VIEWS = ("heatmaps", "softmax", "query")


def check_reveal(app, step, want, where):
    """After the reveal, the view outlines the answer: the cell recomputed (trace --json's
    argmax of the step's head's row) or, for a piece, the row of the position `at`."""
    q = step["question"]
    compute = q.get("compute", "")
    if compute == "carrier":
        p = app.wait_for(lambda p: p["lesson"]["reveal"] is not None, f"{where}: the phenomenon's row outlined")
        r = p["lesson"]["reveal"]
        check(r == {"view": step["view"], "phenomenon": q["at"]}, f"{where}: the outline is {r}")
        check("proof_hidden_row" not in p["widgets"], f"{where}: the row's knock-outs stay hidden after the answer")
        drawn = step["view"] == "proof"
    elif compute == "top_next":
        p = app.wait_for(lambda p: p["lesson"]["reveal"] is not None, f"{where}: the piece's row outlined")
        r = p["lesson"]["reveal"]
        check(plain(r["piece"]) == want["piece"], f"{where}: the row outlined names {r['piece']}, not {want['piece']}")
        drawn = step["view"] == "next"
    elif compute in ("attn_argmax", "row_max") or q["kind"] == "cell":
        p = app.wait_for(lambda p: p["lesson"]["reveal"] is not None, f"{where}: the cell outlined")
        r = p["lesson"]["reveal"]
        check((r["row"], r["col"]) == (want["row"], want["col"]),
              f"{where}: the cell outlined is {(r['row'], r['col'])}, recomputed {(want['row'], want['col'])}")
        drawn = step["view"] in CELL_VIEWS
    else:
        p = app.settle()
        check(p["lesson"]["reveal"] is None, f"{where}: a question about no cell outlines {p['lesson']['reveal']}")
        return
    if drawn:
        app.wait_for(lambda p: "reveal_answer" in p["widgets"], f"{where}: the outline drawn on the {step['view']} view")


def walk(lesson_id, lang):
    def test(mhaviz, d):
        lesson = g.read_json(lesson_file(lesson_id))
        steps = lesson["steps"]
        app = g.App(mhaviz, d, ["--lesson", lesson_id, "--lang", lang, "--text-size", "150"])
        try:
            for i, step in enumerate(steps):
                where = f"lesson {lesson_id} ({lang}) step {i + 1}"
                p = app.wait_for(lambda p: p["lesson"].get("step") == i and p["ok"] and p["generation"] > 0 and
                                 p["view"] == step["view"] and p["present"]["on"] and
                                 p["present"]["view"] == step["view"] and "present" in p["widgets"] and
                                 "lesson_caption" in p["widgets"] and p["worker"]["phase"] == "idle",
                                 f"{where}: its view ({step['view']}) presented with its caption")
                le = p["lesson"]
                check(le["id"] == lesson_id and le["steps"] == len(steps), f"{where}: probe {le}")
                check(le["questions"] == sum("question" in s for s in steps), f"{where}: questions {le['questions']}")
                check(le["caption"] == step["caption"][lang], f"{where}: the caption shown is {le['caption']!r}")
                check(p["language"] == lang, f"{where}: the interface speaks {p['language']}")
                nav, cap = p["widgets"]["lesson_next"], p["widgets"]["lesson_caption"]
                check(nav[1] + nav[3] <= cap[1] + 1 and nav[0] + nav[2] >= p["window"][0] * 0.75,
                      f"{where}: Next at {nav} is not at the right of the line above the caption at {cap}")
                if "patch" in step:
                    check_patch(mhaviz, d, app, step, where)
                if "question" in step:
                    p = app.wait_for(lambda p: p["lesson"]["question"]["answer"]["ok"], f"{where}: its answer")
                    if step["question"].get("compute") == "carrier" and step["view"] == "proof":
                        p = app.wait_for(lambda p: "proof_hidden_row" in p["widgets"], f"{where}: the row hidden")
                        check(p["lesson"]["reveal_pending"] and "reveal_answer" not in p["widgets"],
                              f"{where}: outlined before the answer: {p['lesson']}")
                    if step["question"]["kind"] == "choice":
                        check_options_below(p, where)
                    if step["view"] == "heatmaps" and step["question"]["kind"] == "cell":
                        p = check_asked_row(app, where)
                    want = expected_answer(mhaviz, d, step, resolve(step))
                    check_answer(p, step, want, where)
                    if not (step["question"]["kind"] == "choice" and want.get("option", 0) < 0):
                        answer(app, p, step, want, lang == "ko", where)
                        check_reveal(app, step, want, where)
                if i + 1 < len(steps):
                    app.key("Right")
            app.quit()
        finally:
            app.kill()
    return test


def check_options_below(p, where):
    """A choice's options start below the question's text, not beside one of its lines."""
    q = p["widgets"]["lesson_question"]
    check(any(n.startswith("lesson_option ") for n in p["widgets"]), f"{where}: no option drawn")
    for name, r in p["widgets"].items():
        if name.startswith("lesson_option "):
            check(r[1] >= q[1] + q[3] - 1,
                  f"{where}: {name} at {r} is beside the question's text at {q}, not below it")


def check_asked_row(app, where):
    """A heatmap question about a row ("at the second 쥐"): before the answer, the row the
    app's answer is computed at is outlined, in the maps' view and below the keys, which
    are in view too (a map taller than its panel scrolls to the row and keeps its keys at
    the top)."""
    def inside(r, box):
        return r[1] >= box[1] - 0.5 and r[1] + r[3] <= box[1] + box[3] + 0.5

    def ready(p):
        w = p["widgets"]
        return all(k in w for k in ("map asked row", "maps view", "map keys")) and \
            inside(w["map asked row"], w["maps view"]) and inside(w["map keys"], w["maps view"]) and \
            w["map asked row"][1] >= w["map keys"][1] + w["map keys"][3] - 0.5
    p = app.wait_for(ready, f"{where}: the asked row, below the keys, and the keys in the maps' view")
    w, row = p["widgets"], p["lesson"]["question"]["answer"]["row"]
    maps = [w[k] for k in w if k.startswith("map ") and k.split()[-1].isdigit()]
    check(len(maps) == 1, f"{where}: {len(maps)} maps shown, the step's one expected")
    seq = len(p["tokens"])
    check(seq > 0, f"{where}: no tokens")
    at = round((w["map asked row"][1] - maps[0][1]) / (maps[0][3] / seq))
    check(at == row, f"{where}: row {at} outlined, the answer's row is {row}")
    return p


def check_patch(mhaviz, d, app, step, where):
    """The step's sentences and target reached the Patch view, which patched them on its
    worker: its heads' recovered shares are `mhaviz patch --json`'s for the same fields."""
    want = {"clean": step["patch"]["clean"], "corrupt": step["patch"]["corrupt"],
            "target": step["patch"].get("target", "")}
    p = app.wait_for(lambda p: p["patch"].get("computed") and p["patch"]["asked"] == want and
                     "patch_grid" in p["widgets"], f"{where}: the Patch view patched {want}")
    args = ["patch", "--model", "mhaviz-small", "--clean", want["clean"], "--corrupt", want["corrupt"], "--layer-only"]
    if want["target"]:
        args += ["--target", want["target"]]
    cli = run_json(mhaviz, d, args, "patch.json")
    got = {h["name"]: h["recovered"] for h in p["patch"]["heads"]}
    ref = {h["name"]: h["recovered"] for h in cli["heads"]}
    check(got.keys() == ref.keys() and all(abs(got[k] - ref[k]) <= 1e-9 * max(1.0, abs(ref[k])) for k in ref),
          f"{where}: the Patch view's recovered {got}, patch --json's {ref}")


def job_head(job):
    """The head mhaviz-small's labels file gives `job`: a head named by it before one that
    lists it under "also"; of several named by it, the one whose profile scores the job
    highest (two induction heads: the stronger), else the first in the file."""
    lab = g.read_json(os.path.join(ROOT, "assets", "models", "mhaviz-small.labels.json"))
    labels = lab["labels"]
    score = {(p["layer"], p["head"]): p.get(job, 0.0) for p in lab.get("profiles", [])}
    for named in (True, False):
        found = [e for e in labels
                 if (e["label"]["job"] == job if named else any(a["job"] == job for a in e["also"]))]
        if found:
            e = max(found, key=lambda e: (score.get((e["layer"], e["head"]), 0.0), -labels.index(e)))
            return {"layer": e["layer"], "head": e["head"]}
    raise g.Fail(f"no head of mhaviz-small has the job {job}")


def resolve(step):
    """The step's layer, head and knocked-out heads, read from the lesson file and the
    labels file here, not from the app."""
    head = step.get("head", 0)
    if isinstance(head, dict):
        h = job_head(head["job"])
    else:
        h = {"layer": step.get("layer", 0), "head": head}
    out = []
    for k in step.get("knockout", []):
        if isinstance(k, dict):
            out.append(job_head(k["job"]))
        else:
            layer, head_ = k.lstrip("L").split("H")
            out.append({"layer": int(layer), "head": int(head_)})
    return {**h, "knockout": out}


def near(a, b, where):
    check(abs(a - b) <= 1.5, f"{where}: {a:.1f} is not {b:.1f}")


def test_reveal(mhaviz, d):
    """A question about a cell answered wrongly, on the three views that show cells: the
    heatmaps' map of the step's head, the Softmax view's weights and the Query view's key
    rows. Before the answer nothing is outlined; after it, the outline is on the answer,
    the cell `mhaviz trace --json` weighs most in that head's row, and on the class's
    pick, each where its cell is drawn."""
    sentence, cfg, head, row = "the cat sat on the mat", {"d_model": 64, "num_heads": 4}, 2, 2
    t = run_json(mhaviz, d, ["trace", "--sentence", sentence, *config_flags(cfg), "-q"], "reveal.json")
    weights = t["attention"][head][row]
    col = max(range(len(weights)), key=lambda c: weights[c])
    wrong = (col + 1) % len(weights)
    text = {"ko": "k", "en": "e"}
    q = {"kind": "cell", "prompt": text, "compute": "attn_argmax", "at": str(row), "reveal": text}
    views = ("heatmaps", "softmax", "query")
    lesson = os.path.join(d, "reveal_lesson.json")
    with open(lesson, "w", encoding="utf-8") as f:
        json.dump({"format": "mhaviz-lesson", "title": text,
                   "steps": [{"view": v, "sentence": sentence, "config": cfg, "head": head, "query": row,
                              "caption": text, "question": q} for v in views]}, f)
    app = g.App(mhaviz, d, ["--lesson", lesson, "--lang", "ko", "--text-size", "150"])
    try:
        for i, view in enumerate(views):
            where = f"the {view} view"
            p = app.wait_for(lambda p: p["lesson"].get("step") == i and p["ok"] and p["view"] == view and
                             p["lesson"]["question"]["answer"]["ok"] and "lesson_key 0" in p["widgets"], where)
            check(p["lesson"]["reveal_pending"] and p["lesson"]["reveal"] is None and
                  "reveal_answer" not in p["widgets"], f"{where}: outlined before the answer: {p['lesson']}")
            g.click(app, app.widget(f"lesson_key {wrong}"))
            p = app.wait_for(lambda p: p["lesson"]["reveal"] is not None and "reveal_answer" in p["widgets"] and
                             "reveal_pick" in p["widgets"], f"{where}: the outlines")
            r = p["lesson"]["reveal"]
            want = {"view": view, "head": head, "row": row, "col": col, "pick_row": row, "pick_col": wrong}
            check(r == want, f"{where}: the probe's outline {r}, recomputed {want}")
            check(not p["lesson"]["question"]["right"], f"{where}: the wrong key counted as right")
            ans, pick = p["widgets"]["reveal_answer"], p["widgets"]["reveal_pick"]
            if view == "heatmaps":  # each on its cell of the head's map
                mx, my, mw, mh = p["widgets"][f"map {head}"]
                cw, ch = mw / len(weights), mh / len(weights)
                for (x, y, _, _), c in ((ans, col), (pick, wrong)):
                    near(x, mx + c * cw, f"{where}: column {c}'s left edge")
                    near(y, my + row * ch, f"{where}: row {row}'s top edge")
            elif view == "softmax":  # cells of one row: apart by their column difference
                near(pick[0] - ans[0], (wrong - col) * ans[2], f"{where}: the pick's place beside the answer")
                near(pick[1], ans[1], f"{where}: the pick's row")
            else:  # the table's rows, one per key: apart by their key difference (rows about as tall
                # as the outline, plus a border)
                pitch = (pick[1] - ans[1]) / (wrong - col)
                check(ans[3] - 1.5 <= pitch <= ans[3] * 1.25, f"{where}: the pick's row is {pick[1] - ans[1]:.1f} px "
                      f"from the answer's, not {wrong - col} rows of {ans[3]:.1f} px")
            if i + 1 < len(views):
                app.key("Right")
        app.quit()
    finally:
        app.kill()


def test_next_hidden(mhaviz, d):
    """Lesson 004 asks what mhaviz-small predicts after '쥐' without the verb-subject head
    on the Next view, which shows the answer: until the class answers, that row's pieces
    are hidden ("?"); answered, they are back and the row is outlined, the row of '쥐'
    whose likeliest piece is the answer."""
    app = g.App(mhaviz, d, ["--lesson", "004", "--step", "8", "--lang", "ko", "--text-size", "150"])
    try:
        p = app.wait_for(lambda p: p["lesson"].get("step") == 7 and p["ok"] and p["view"] == "next" and
                         "next_tokens_table" in p["widgets"] and "lesson_option 0" in p["widgets"], "step 8")
        check(p["lesson"]["reveal_pending"] and "next_hidden_row" in p["widgets"] and "reveal_answer" not in p["widgets"],
              f"before the answer the row is not hidden, or already outlined: {p['lesson']}")
        g.click(app, app.widget("lesson_option 1"))
        p = app.wait_for(lambda p: p["lesson"]["reveal"] is not None and "reveal_answer" in p["widgets"], "the outline")
        check("next_hidden_row" not in p["widgets"], "the row stays hidden after the answer")
        final = app.quit()
    finally:
        app.kill()
    r = final["lesson"]["reveal"] if "lesson" in final else p["lesson"]["reveal"]
    tokens, nxt = final["trace"]["tokens"], final["views"]["next_view"]["next"]
    check(tokens[r["row"]] == "쥐" and nxt[r["row"]][0]["piece"] == r["piece"],
          f"the outline {r} is not the row of 쥐 with its likeliest piece ({tokens}, {nxt[r['row']][:2]})")


def test_explore_restore(mhaviz, d):
    """A step left to explore (num_heads changed with +) shows "Back to the lesson",
    which puts the step back; Esc then leaves the lesson."""
    app = g.App(mhaviz, d, ["--lesson", "000", "--step", "3"])
    try:
        p = app.wait_for(lambda p: p["lesson"].get("step") == 2 and p["ok"] and p["lesson"]["on_step"], "step 3")
        heads = p["num_heads"]
        app.key("equal")
        p = app.wait_for(lambda p: not p["lesson"]["on_step"] and "lesson_restore" in p["widgets"], "exploring")
        g.click(app, app.widget("lesson_restore"))
        p = app.wait_for(lambda p: p["lesson"]["on_step"] and p["ok"] and p["lesson"]["step"] == 2, "the step again")
        check(p["num_heads"] == heads, f"num_heads {p['num_heads']} after restoring, not {heads}")
        app.key("Escape")
        app.wait_for(lambda p: "id" not in p["lesson"] and not p["present"]["on"], "the lesson left")
        app.quit()
    finally:
        app.kill()


def test_bad_lesson(mhaviz, d):
    """A lesson file with a head out of range is refused before the window opens, naming
    the file, the field and the rule; so is a lesson that does not exist."""
    bad = os.path.join(d, "bad.json")
    with open(bad, "w", encoding="utf-8") as f:
        json.dump({"format": "mhaviz-lesson", "title": {"ko": "t", "en": "t"},
                   "steps": [{"view": "heatmaps", "head": 9, "caption": {"ko": "k", "en": "e"}}]}, f)
    r = subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "2", "--lesson", bad], capture_output=True,
                       text=True, timeout=g.RUN_TIMEOUT)
    check(r.returncode == 2, f"exit {r.returncode}: {r.stderr}")
    check("bad.json, at /steps/0/head: head 9 does not exist" in r.stderr, r.stderr)
    r = subprocess.run([mhaviz, "lesson", "042"], capture_output=True, text=True, timeout=g.RUN_TIMEOUT)
    check(r.returncode != 0 and "the built-in lessons are 000, 001, 002, 003, 004" in r.stderr, r.stderr)


def test_export_ko(mhaviz, d):
    """`mhaviz lesson 002 --export DIR` in Korean: one PNG per step, named step-01.png, ...,
    each 1280 x 800 with a picture in it (not one flat colour), each step's picture
    unlike the one before it."""
    steps = g.read_json(lesson_file("002"))["steps"]
    out = os.path.join(d, "handout")
    r = subprocess.run([mhaviz, "lesson", "002", "--export", out, "--lang", "ko"], capture_output=True, text=True,
                       timeout=g.RUN_TIMEOUT)
    check(r.returncode == 0, f"lesson --export: exit {r.returncode}: {r.stderr[-1500:]}")
    want = [f"step-{i + 1:02d}.png" for i in range(len(steps))]
    check(sorted(os.listdir(out)) == want, f"{out} holds {sorted(os.listdir(out))}, not {want}")
    pictures = []
    for name in want:
        w, h, px = g.png_rgb(os.path.join(out, name))
        check((w, h) == (1280, 800), f"{name} is {w} x {h}, not 1280 x 800")
        colours = {px[i:i + 3] for i in range(0, len(px), 3 * 101)}
        check(len(colours) >= 16, f"{name} has {len(colours)} colours in a sample: an empty picture")
        pictures.append(px)
    for i in range(1, len(pictures)):
        a, b = pictures[i - 1], pictures[i]
        differ = sum(a[k] != b[k] for k in range(0, len(a), 997)) / len(range(0, len(a), 997))
        check(differ > 0.02, f"{want[i]} is {differ:.1%} unlike {want[i - 1]}: the step did not change the picture")


def test_export_bad_dir(mhaviz, d):
    """A --export DIR that cannot take the pictures (a file; a place where no directory can
    be made) is refused with exit 2 and a message naming it, before any window: run here
    without a display, the refusal is all that can happen."""
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    afile = os.path.join(d, "notes.txt")
    with open(afile, "w") as f:
        f.write("not a directory")
    unwritable = "/proc/mhaviz-handout" if os.geteuid() == 0 else os.path.join(d, "ro", "handout")
    if os.geteuid() != 0:
        os.mkdir(os.path.join(d, "ro"), 0o555)
    for target, words in ((afile, "is a file, not a directory"), (unwritable, "cannot create the directory")):
        r = subprocess.run([mhaviz, "lesson", "002", "--export", target], capture_output=True, text=True, env=env,
                           timeout=g.RUN_TIMEOUT)
        check(r.returncode == 2, f"--export {target}: exit {r.returncode}, not 2: {r.stderr[-800:]}")
        check(words in r.stderr and target in r.stderr, f"--export {target}: the message is {r.stderr!r}")
        check("step-01.png" not in r.stdout, f"--export {target}: a step was saved: {r.stdout!r}")
    with open(afile) as f:
        check(f.read() == "not a directory", "the file given as DIR was changed")
    check(not os.path.exists(unwritable), f"{unwritable} was made")


def add_step(app, count, where):
    """Clicks the editor's Add this as a step once the window shows a finished result,
    and returns the probe with `count` steps recorded."""
    app.wait_for(lambda p: p["ok"] and p["generation"] > 0 and p["worker"]["phase"] == "idle", f"{where}: computed")
    g.click(app, app.widget("draft_add"))
    p = app.wait_for(lambda p: len(p["lesson_draft"]["steps"]) == count, f"{where}: step {count} recorded")
    check(p["lesson_draft"]["message_ok"], f"{where}: {p['lesson_draft']['message']}")
    return p


QUESTION_FIELDS = ("draft_kind", "draft_prompt_ko", "draft_prompt_en", "draft_compute", "draft_right 0",
                   "draft_option_ko 0", "draft_option_en 1", "draft_add_option", "draft_reveal_en")


def ask_question(app):
    """Ticks the selected step's question box: every question field must be in view in
    the editor's scrolling body, with Save and Play under it; then types a choice question
    (prompt, two options) and marks the second option right."""
    g.click(app, app.widget("draft_question"))
    p = app.wait_for(lambda p: all(f in p["widgets"] for f in QUESTION_FIELDS), "the question's fields")
    p = app.settle()
    bx, by, bw, bh = p["widgets"]["draft_body"]
    for f in QUESTION_FIELDS:
        x, y, w, h = p["widgets"][f]
        check(by - 1 <= y and y + h <= by + bh + 1 and bx - 1 <= x and x + w <= bx + bw + 1,
              f"the editor's {f} at {(x, y, w, h)} is cut or out of its view {(bx, by, bw, bh)}")
    for f in ("draft_save", "draft_play"):
        x, y, w, h = p["widgets"][f]
        check(y >= by + bh - 1 and y + h <= p["window"][1], f"{f} at {(x, y, w, h)} is not under the fields")
    for field, text in (("draft_prompt_en", "why"), ("draft_option_ko 0", "yes"), ("draft_option_en 0", "yes"),
                        ("draft_option_ko 1", "no"), ("draft_option_en 1", "no")):
        g.click(app, app.widget(field))
        app.type_held(text)
    g.click(app, app.widget("draft_right 1"))
    app.wait_for(lambda p: p["lesson_draft"]["steps"][2].get("ask") == {"prompt": "why", "options": ["yes", "no"],
                                                                          "answer": 1, "at": ""}, "the question typed")


def test_record(mhaviz, d):
    """A lesson written in the app: three steps recorded from three states (mhaviz-small in
    the Next view with L1H0 knocked out; the heatmaps of another sentence with every head
    back; the seeded layer's Softmax view), a caption typed, saved, read back by
    `mhaviz lesson FILE` and from the file, then played: each step shows its state again."""
    out = os.path.join(d, "written.json")
    sentence = "고양이가 쥐를 잡았다"
    app = g.App(mhaviz, d, ["--model", "mhaviz-small", "--sentence", sentence, "--view", "next", "--ablate", "L1H0",
                            "--lesson-record", out])
    try:
        p = app.wait_for(lambda p: p["lesson_draft"]["editing"] and "draft_window" in p["widgets"], "the editor")
        check(p["lesson_draft"]["path"] == out and not p["lesson_draft"]["steps"], f"editor: {p['lesson_draft']}")
        add_step(app, 1, "step 1")
        g.click(app, app.widget("tab heatmaps"))
        app.wait_for(lambda p: p["view"] == "heatmaps", "the heatmaps")
        g.click(app, app.widget("knockout_restore"))
        app.wait_for(lambda p: p["knocked_out"] == "", "every head back")
        g.click(app, app.widget("sentence"))
        app.key("ctrl", "a")
        app.type_held("the cat sat")
        app.wait_for(lambda p: p["sentence"] == "the cat sat", "the new sentence")
        add_step(app, 2, "step 2")
        g.click(app, app.widget("model_source"))
        g.click(app, app.widget("source_seeded"))
        app.wait_for(lambda p: p["weights"]["kind"] != "trained" and p["ok"], "the seeded layer")
        g.click(app, app.widget("tab softmax"))
        p = app.wait_for(lambda p: p["view"] == "softmax", "the softmax view")
        seeded_sentence, seeded_heads = p["sentence"], p["num_heads"]
        p = add_step(app, 3, "step 3")
        check(p["lesson_draft"]["selected"] == 2, f"the new step is not selected: {p['lesson_draft']}")
        g.click(app, app.widget("draft_caption_en"))
        app.type_held("three")
        app.wait_for(lambda p: p["lesson_draft"]["steps"][2]["caption"]["en"] == "three", "the caption typed")
        ask_question(app)
        g.click(app, app.widget("draft_save"))
        p = app.wait_for(lambda p: p["lesson_draft"]["saves"] == 1, "the lesson saved")
        check(p["lesson_draft"]["saved"] == out and p["lesson_draft"]["message_ok"], f"save: {p['lesson_draft']}")

        written = g.read_json(out)["steps"]
        want = [{"view": "next", "model": "mhaviz-small", "sentence": sentence, "knockout": ["L1H0"]},
                {"view": "heatmaps", "model": "mhaviz-small", "sentence": "the cat sat"},
                {"view": "softmax", "sentence": seeded_sentence}]
        check(len(written) == 3, f"{len(written)} steps written")
        for i, (w, step) in enumerate(zip(want, written)):
            for key, value in w.items():
                check(step.get(key) == value, f"written step {i + 1}: {key} = {step.get(key)!r}, not {value!r}")
            check("knockout" not in step or "knockout" in w, f"written step {i + 1}: {step}")
        check("model" not in written[2] and written[2].get("config", {}).get("num_heads", 8) == seeded_heads,
              f"written step 3: {written[2]}")
        check(written[2]["caption"]["en"] == "three", f"written step 3's caption: {written[2]['caption']}")
        wq = written[2].get("question", {})
        check(wq.get("kind") == "choice" and wq.get("answer") == 1 and wq.get("prompt", {}).get("en") == "why" and
              [o["en"] for o in wq.get("options", [])] == ["yes", "no"] and "compute" not in wq,
              f"written step 3's question: {wq}")
        r = subprocess.run([mhaviz, "lesson", out, "--lang", "en"], capture_output=True, text=True,
                           timeout=g.RUN_TIMEOUT)
        check(r.returncode == 0 and "1. [next]" in r.stdout and "2. [heatmaps]" in r.stdout and
              "3. [softmax] three" in r.stdout, f"mhaviz lesson {out}: exit {r.returncode}: {r.stdout}{r.stderr}")

        g.click(app, app.widget("draft_play"))
        # (the band's question draws in the frame after the step applies: wait for it too)
        p = app.wait_for(lambda p: p["lesson"].get("step") == 2 and p["lesson"]["steps"] == 3 and
                         p["present"]["on"] and p["view"] == "softmax" and p["ok"] and
                         "lesson_question" in p["widgets"], "the lesson played at step 3, its question shown")
        check(p["sentence"] == seeded_sentence and p["num_heads"] == seeded_heads, f"step 3 shows {p['sentence']}")
        check(p["lesson"]["questions"] == 1 and "lesson_question" in p["widgets"], f"step 3 asks nothing: {p['lesson']}")
        g.click(app, app.widget("lesson_option 1"))
        p = app.wait_for(lambda p: p["lesson"]["answered"] == 1 and "lesson_reveal" in p["widgets"], "step 3 answered")
        check(p["lesson"]["question"]["right"], f"the option marked right in the editor is not: {p['lesson']}")
        app.key("Left")
        p = app.wait_for(lambda p: p["lesson"]["step"] == 1 and p["view"] == "heatmaps" and p["ok"] and
                         p["generation"] > 0, "step 2 played")
        check(p["sentence"] == "the cat sat" and p["knocked_out"] == "", f"step 2 shows {p['sentence']}, "
                                                                         f"knocked out {p['knocked_out']!r}")
        app.key("Left")
        p = app.wait_for(lambda p: p["lesson"]["step"] == 0 and p["view"] == "next" and p["ok"], "step 1 played")
        check(p["sentence"] == sentence and p["knocked_out"].startswith("L1H0"), f"step 1 shows {p['sentence']}, "
                                                                                 f"knocked out {p['knocked_out']!r}")
        app.key("Escape")
        app.wait_for(lambda p: "id" not in p["lesson"] and "draft_window" in p["widgets"], "the editor again")
        app.quit()
    finally:
        app.kill()


def test_record_patch(mhaviz, d):
    """The Patch view recorded as a step: its two sentences and target are written as the
    step's `patch`, which the loader reads back (`mhaviz lesson`), and played again."""
    out = os.path.join(d, "patch.json")
    clean, corrupt = "The men near the old house", "The man near the old house"
    app = g.App(mhaviz, d, ["--model", "mhaviz-small", "--view", "patch", "--patch-clean", clean, "--patch-corrupt",
                            corrupt, "--patch-target", "are", "--lesson-record", out])
    try:
        app.wait_for(lambda p: p["lesson_draft"]["editing"] and "draft_window" in p["widgets"], "the editor")
        p = add_step(app, 1, "the Patch view")
        want = {"clean": clean, "corrupt": corrupt, "target": "are"}
        check(p["lesson_draft"]["steps"][0].get("patch") == want, f"recorded: {p['lesson_draft']['steps'][0]}")
        g.click(app, app.widget("draft_save"))
        p = app.wait_for(lambda p: p["lesson_draft"]["saves"] == 1, "the lesson saved")
        check(p["lesson_draft"]["message_ok"], f"save: {p['lesson_draft']['message']}")
        app.quit()
    finally:
        app.kill()
    step = g.read_json(out)["steps"][0]
    check(step.get("view") == "patch" and step.get("model") == "mhaviz-small" and step.get("patch") == want,
          f"written: {step}")
    r = subprocess.run([mhaviz, "lesson", out, "--lang", "en"], capture_output=True, text=True, timeout=g.RUN_TIMEOUT)
    check(r.returncode == 0 and "1. [patch]" in r.stdout, f"mhaviz lesson {out}: exit {r.returncode}: {r.stdout}{r.stderr}")
    # A sentence longer than a lesson's patch may hold: the step is recorded without the
    # patch and the editor says why (a file the loader would refuse is never written).
    long = "the old house " * 40
    app = g.App(mhaviz, d, ["--model", "mhaviz-small", "--view", "patch", "--patch-clean", long, "--patch-corrupt",
                            corrupt, "--lesson-record", os.path.join(d, "long.json")])
    try:
        app.wait_for(lambda p: p["lesson_draft"]["editing"] and p["ok"] and p["generation"] > 0 and
                     p["worker"]["phase"] == "idle", "the editor, computed")
        g.click(app, app.widget("draft_add"))
        p = app.wait_for(lambda p: len(p["lesson_draft"]["steps"]) == 1, "the long step recorded")
        check(not p["lesson_draft"]["message_ok"] and "512 bytes" in p["lesson_draft"]["message"] and
              "patch" not in p["lesson_draft"]["steps"][0], f"a 560-byte sentence: {p['lesson_draft']}")
        app.quit()
    finally:
        app.kill()
    # Played in another window: the Patch view gets the recorded sentences.
    dump = g.dump_run(mhaviz, d, "--lesson", out, "--lang", "en", name="played.json", frames=5)
    patch = dump["views"].get("patch_view", {})
    check(patch.get("clean", {}).get("sentence") == clean and patch.get("corrupt", {}).get("sentence") == corrupt and
          patch.get("target", {}).get("piece") == "▁are", f"played: {str(patch)[:300]}")


TESTS = {f"walk_{i}_{lang}": walk(i, lang) for i in ("000", "001", "002", "003", "004") for lang in ("ko", "en")}
TESTS.update({"reveal": test_reveal, "next_hidden": test_next_hidden, "explore_restore": test_explore_restore, "bad_lesson": (test_bad_lesson, False),
              "export_ko": test_export_ko, "export_bad_dir": (test_export_bad_dir, False), "record": test_record,
              "record_patch": test_record_patch})

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "tour"))
