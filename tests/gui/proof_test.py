#!/usr/bin/env python3
"""GUI tests of the Proof view: its table (phenomena x each head knocked out, chance
bands, McNemar tests, carriers, the example pairs) against `mhaviz pairs --ablate all
--json`, both when it is measured in the window (a copy of mhaviz-small under another
name, so no shipped measurement applies: the view's task runs lm::KnockOutHeads) and
when it is the measurement shipped beside mhaviz-small.

    proof_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display or no xdotool).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from lm_test import MODEL  # noqa: E402

check = g.check
ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def pairs_table(mhaviz, d, model):
    r = subprocess.run([mhaviz, "pairs", "--model", model, "--ablate", "all", "--json"], cwd=d, capture_output=True,
                       text=True, timeout=1800)
    check(r.returncode == 0, f"mhaviz pairs --ablate all: status {r.returncode}: {r.stderr[:300]}")
    return json.loads(r.stdout)["table"]


def table_differences(a, b, pair_slack=0, margin_tol=1e-9):
    """Where the view's table `a` differs from the CLI's `b`: every count within
    `pair_slack` pairs, every flag and head the same (unless a count moved), every
    accuracy and p-value as its counts give, every example margin within `margin_tol`
    of its scale."""
    out = []
    if a["test"] != b["test"] or a["mode"] != b["mode"] or a["heads"] != b["heads"]:
        out.append(f"the table's heads or tests differ: {a['heads']} vs {b['heads']}")
    if [r["phenomenon"] for r in a["rows"]] != [r["phenomenon"] for r in b["rows"]]:
        return out + ["different phenomena"]
    for r, s in zip(a["rows"], b["rows"]):
        p = r["phenomenon"]
        moved = abs(r["correct"] - s["correct"]) > 0
        if abs(r["correct"] - s["correct"]) > pair_slack or r["pairs"] != s["pairs"]:
            out.append(f"{p}: {r['correct']}/{r['pairs']} vs {s['correct']}/{s['pairs']} right intact")
        if r["chance_band"] != s["chance_band"]:
            out.append(f"{p}: chance band {r['chance_band']} vs {s['chance_band']}")
        for c, e in zip(r["knocked_out"], s["knocked_out"]):
            if c["name"] != e["name"]:
                out.append(f"{p}: column {c['name']} vs {e['name']}")
            for k in ("correct", "lost", "gained"):
                if abs(c[k] - e[k]) > pair_slack:
                    out.append(f"{p} without {c['name']}: {k} {c[k]} vs {e[k]}")
            moved = moved or any(c[k] != e[k] for k in ("correct", "lost", "gained"))
            if abs(c["accuracy"] - c["correct"] / r["pairs"]) > 1e-12:
                out.append(f"{p} without {c['name']}: accuracy {c['accuracy']} is not {c['correct']}/{r['pairs']}")
            if not moved and (c["significant"], c["to_chance"]) != (e["significant"], e["to_chance"]):
                out.append(f"{p} without {c['name']}: significant/to chance {c['significant']}/{c['to_chance']} "
                           f"vs {e['significant']}/{e['to_chance']}")
            if not moved and abs(c["p"] - e["p"]) > 1e-12 * max(1.0, abs(e["p"])):
                out.append(f"{p} without {c['name']}: p {c['p']} vs {e['p']}")
        if not moved and r["carriers"] != s["carriers"]:
            out.append(f"{p}: carriers {r['carriers']} vs {s['carriers']}")
        x, y = r["example"], s["example"]
        if (x is None) != (y is None):
            out.append(f"{p}: example {x} vs {y}")
        elif x is not None and not moved:
            if (x["line"], x["good"], x["bad"], x["cue"]) != (y["line"], y["good"], y["bad"], y["cue"]):
                out.append(f"{p}: example line {x['line']} vs {y['line']}")
            scale = max(1.0, abs(y["margin"]), *(abs(m) for m in y["margin_without"]))
            for m, n in zip([x["margin"], *x["margin_without"]], [y["margin"], *y["margin_without"]]):
                if abs(m - n) > margin_tol * scale:
                    out.append(f"{p}: example margin {m} vs {n}")
    return out


def view_table(mhaviz, d, model, env, names_from_it=False):
    app = g.App(mhaviz, d, ["--model", model, "--sentence", "할머니께서 방에서 주무신다", "--view", "proof"],
                size=(1280, 800), env=env)
    try:
        # The window keeps drawing while the view's task measures; the table's probe
        # appears once it is in.
        app.wait_for(lambda p: "proof_table" in p["widgets"], "the proof table", timeout=600)
        if names_from_it:
            # What the view measured names the heads in every view, in this session.
            app.wait_for(lambda p: p["model-view"]["evidence"], "the measured evidence handed to the names",
                         timeout=60)
        app.shot("proof.png")
        final = app.quit()
    finally:
        app.kill()
    return final["views"]["proof_view"]


def test_equals_pairs(mhaviz, d):
    """A model with no shipped measurement is measured in the window on the view's task;
    its table is `pairs --ablate all --json`'s exactly. The shipped measurement shown for
    mhaviz-small is the same within one pair per count (a near-tie may flip between
    builds and instruction sets, as the shipped labels' own test allows). A table with
    two head columns swapped is told apart."""
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"), XDG_CACHE_HOME=os.path.join(d, "cache"))
    # A copy under another name, with its tokenizer beside it: nothing shipped or cached applies.
    own = os.path.join(d, "models")
    os.makedirs(own)
    copy = os.path.join(own, "copy-of-small.npz")
    shutil.copy(MODEL, copy)
    for f in os.listdir(os.path.dirname(MODEL)):
        if f.endswith(".model"):
            shutil.copy(os.path.join(os.path.dirname(MODEL), f), own)
    cli = pairs_table(mhaviz, d, MODEL)
    measured = view_table(mhaviz, d, copy, env, names_from_it=True)
    check(measured.get("source") == "measured" and measured.get("shipped") is False,
          f"the copy's table was measured, not read: {measured.get('source')}")
    diff = table_differences(measured["table"], cli)
    check(not diff, "the measured table equals pairs --ablate all --json: " + "; ".join(diff[:6]))
    # Kept on disk by the checkpoint's hash: opened again, it is read, not measured.
    cache = os.path.join(d, "cache", "mhaviz", "head-labels")
    kept = os.listdir(cache) if os.path.isdir(cache) else []
    check(len(kept) == 1 and kept[0].endswith(".json"), f"one measurement kept in the cache: {kept}")
    again = view_table(mhaviz, d, copy, env, names_from_it=True)
    check(again.get("source") == "cached", f"the copy opened again reads the cache: {again.get('source')}")
    diff = table_differences(again["table"], cli)
    check(not diff, "the cached table equals pairs --ablate all --json: " + "; ".join(diff[:6]))
    shipped = view_table(mhaviz, d, MODEL, env)
    check(shipped.get("shipped") is True and shipped.get("source") == "shipped",
          "mhaviz-small's table is the shipped measurement")
    diff = table_differences(shipped["table"], cli, pair_slack=1, margin_tol=1e-4)
    check(not diff, "the shipped table equals pairs --ablate all --json: " + "; ".join(diff[:6]))
    # The comparison can fail: two heads' columns swapped.
    wrong = json.loads(json.dumps(measured["table"]))
    for r in wrong["rows"]:
        k = r["knocked_out"]
        k[0], k[-1] = dict(k[-1], name=k[0]["name"]), dict(k[0], name=k[-1]["name"])
    check(table_differences(wrong, cli), "with two head columns swapped the comparison fails")
    # Each example names a head and its attention to the cue, a weight.
    rows = measured["table"]["rows"]
    check(len(measured["examples"]) == len(rows), f"{len(measured['examples'])} examples for {len(rows)} rows")
    for e, r in zip(measured["examples"], rows):
        w = e["cue_weight"]
        check(w == -1 or 0 <= w <= 1, f"{r['phenomenon']}: cue weight {w}")
        if r["carriers"]:
            check(e["head"] == r["carriers"][0], f"{r['phenomenon']}: example head {e['head']}, carrier {r['carriers']}")


def test_present_fits(mhaviz, d):
    """Presented on mhaviz-small in Korean at 1280 x 800 with 150% text and 1920 x 1080
    with 200%, the table lies in the window and every phenomenon's last column (the last
    head knocked out) inside the table, with no sideways scroll (the columns after L1H2
    were cut); the example pairs' table begins in the window, its first row in view (it
    was below the fold)."""
    for size, pct in (((1280, 800), 150), ((1920, 1080), 200)):
        where = f"proof {size[0]}x{size[1]} {pct}%"
        dump, p = g.presented(mhaviz, d, "proof", size, pct, "--model", "mhaviz-small")
        w, win = p["widgets"], p["window"]
        table = w.get("proof_table")
        g.check_within(where, "the table", table, [0, 0, win[0], win[1]])
        rows = len(dump["views"]["proof_view"]["table"]["rows"])
        check(rows >= 8, f"{where}: {rows} phenomena in the table")
        for r in range(rows):
            g.check_within(where, f"phenomenon {r}'s last head", w.get(f"proof_end {r}"), table)
        g.check_within(where, "the example pairs' first row", w.get("proof_example 0"), [0, 0, win[0], win[1]])


def test_lesson_key(mhaviz, d):
    """Lesson 004's proof step, in Korean at 1280 x 800 with 150% text (the rehearsed
    projector): under the table, above the lesson's band, the key of its colours and
    marks is whole in the view, on one line (the full legend was cut after its first
    line there, the rest below the fold)."""
    lessons = os.path.join(ROOT, "assets", "lessons")
    path = next(os.path.join(lessons, f) for f in sorted(os.listdir(lessons)) if f.startswith("004_"))
    with open(path, encoding="utf-8") as f:
        steps = json.load(f)["steps"]
    step = next(i + 1 for i, s in enumerate(steps) if s["view"] == "proof")
    where, p, view = g.lesson_step_probe(mhaviz, d, "004", step, "ko")
    w = p["widgets"]
    check("proof_table" in w, f"{where}: the proof table is not drawn: {sorted(w)}")
    g.check_within(where, "the key under the table", w.get("proof_key"), view)
    line = w["proof_end 0"][3]  # a cell: one line of text
    check(w["proof_key"][3] < 1.5 * line, f"{where}: the key {w['proof_key']} is more than a line ({line} px)")


TESTS = {
    "equals_pairs": test_equals_pairs,
    "present_fits": test_present_fits,
    "lesson_key": test_lesson_key,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "gui_proof"))
