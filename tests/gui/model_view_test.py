#!/usr/bin/env python3
"""GUI tests of the Model view on mhaviz-small: a map opens its head, the labels measured on
the validation text, and its out switches knock heads out for every view.

    model_view_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import click_until  # noqa: E402
from lm_test import MODEL, SENTENCE, model_config, close, reference, gui  # noqa: E402

check = g.check


def test_select_and_open(mhaviz, d):
    """The learner picks mhaviz-small in the model selector with a Korean sentence typed
    for the seeded weights: the sentence stays, its pieces and layer 0 equal trace
    --model; a click on the model view's layer 0 head 0 opens it enlarged in Heatmaps."""
    ref = reference(mhaviz, d, 0)
    # The model view's tab is off the tab bar's visible end at 1280 px: it opens by flag.
    app = g.App(mhaviz, d, ["--sentence", SENTENCE, "--view", "model-view"])
    try:
        click_until(app, "model_source", lambda p: "source_small" in p["widgets"], "the model selector to open")
        click_until(app, "source_small", lambda p: p["train"]["source"] == "mhaviz-small (trained)" and p["ok"],
                    "mhaviz-small to be the source")
        p = app.settle()
        cfg = model_config()
        check((p["num_heads"], p["d_model"]) == (cfg["num_heads"], cfg["d_model"]),
              f"the probe reports num_heads {p['num_heads']}, d_model {p['d_model']}: not the model's "
              f"{cfg['num_heads']}, {cfg['d_model']}")
        check(p["sentence"] == SENTENCE, f"the typed sentence changed to {p['sentence']!r}")
        check(p["tokens"] == [x.replace("\u2581", "_\u2009") for x in ref["pieces"]], f"chips {p['tokens']}")
        check(p["view"] == "model-view", f"view {p['view']}")
        click_until(app, "model_view_first_map", lambda p: p["view"] == "heatmaps" and p["enlarged"] == 0,
                    "head 0 to open in Heatmaps")
        final = app.quit()
    finally:
        app.kill()
    close(final["trace"]["attention"], ref["attention"], "layer 0 after selecting mhaviz-small vs trace --layer 0")


def test_validation_labels(mhaviz, d):
    """Given the frames to finish, the model view labels the heads on the validation
    text, and its labels are the shipped measurement's (mhaviz-small.labels.json, which
    cli.head_labels checks against a fresh one): one previous-token head in layer 0
    (over 0.9) and induction heads in layer 1 only, the strongest over 0.5 on the
    validation windows repeated (the measure of mhaviz ablate's table, since it rests on
    <s> where nothing repeats); the view names induction exactly the heads the file does."""
    dump = os.path.join(d, "labels.json")
    gui(mhaviz, d, "--model", MODEL, "--sentence", SENTENCE, "--view", "model-view", "--frames", "600",
        "--dump-state", dump)
    mv = g.read_json(dump)["views"]["model_view_view"]
    if mv["labels_measured_on"] != "validation text":
        raise g.Fail(f"labels still measured on {mv['labels_measured_on']!r} after 600 frames")
    cfg = model_config()
    check(len(mv["labels"]) == cfg["num_layers"] * cfg["num_heads"], f"{len(mv['labels'])} labels")
    by = {(x["layer"], x["head"]): x for x in mv["labels"]}
    shipped = shipped_profiles()
    prev = [k for k, x in shipped.items() if x["label"] == "previous-token"]
    ind = [k for k, x in shipped.items() if x["label"] == "induction"]
    check(ind and all(k[0] == 1 for k in ind) and len(prev) == 1 and prev[0][0] == 0,
          f"the shipped labels name induction heads in layer 1 and a previous-token head in layer 0: {shipped}")
    for k, x in shipped.items():
        check(by[k]["label"] == x["label"], f"L{k[0]}H{k[1]}: the view says {by[k]['label']!r}, the shipped "
              f"measurement {x['label']!r}")
    check(by[prev[0]]["score"] > 0.9, f"the previous-token head: {by[prev[0]]}")
    check(max(by[k]["score"] for k in ind) > 0.5, f"the induction heads: {[by[k] for k in ind]}")
    named = sorted((x["layer"], x["head"]) for x in mv["labels"] if x["label"] == "induction")
    check(named == sorted(ind), f"the view names induction {named}, the shipped file {sorted(ind)}")


def shipped_profiles():
    """(layer, head) -> the pattern profile the shipped labels file measured."""
    path = os.path.join(os.path.dirname(MODEL), "mhaviz-small.labels.json")
    return {(x["layer"], x["head"]): x for x in g.read_json(path)["profiles"]}


def test_knockout_views(mhaviz, d):
    """gui --ablate 0.0 --layer 1: every layer after the knocked-out head is the ablated
    model's, in the heatmaps' trace and the model view, equal to trace --ablate 0.0."""
    out = os.path.join(d, "ref_ablated.json")
    subprocess.run([mhaviz, "trace", "--quiet", "--model", MODEL, "--sentence", SENTENCE, "--layer", "1",
                    "--ablate", "0.0", "--json", out], check=True, cwd=d, capture_output=True)
    ref = g.read_json(out)
    plain = reference(mhaviz, d, 1)
    dump = os.path.join(d, "views.json")
    gui(mhaviz, d, "--model", MODEL, "--sentence", SENTENCE, "--layer", "1", "--ablate", "0.0", "--view",
        "model-view", "--dump-state", dump)
    final = g.read_json(dump)
    check(final["ok"], f"the app reports an error: {final['error']}")
    close(final["trace"]["attention"], ref["attention"], "heatmaps' layer 1 vs trace --ablate 0.0 --layer 1")
    close(final["views"]["model_view_view"]["attention"][1], ref["attention"], "model view layer 1 vs trace --ablate")
    diff = max(abs(a - b) for x, y in zip(ref["attention"], plain["attention"]) for r, q in zip(x, y)
               for a, b in zip(r, q))
    check(diff > 1e-3, f"layer 1 with L0H0 out differs from the plain model by only {diff}: nothing tested")
    check(final["views"]["model_view_view"]["knocked_out"] == ["L0H0"], "the model view does not list L0H0")


def test_knockout_toggle(mhaviz, d):
    """The Model view's "out" switch under layer 0 head 0 knocks it out (the banner says
    so) and a second click puts it back; "Put every head back" clears the banner."""
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--view", "model-view"])
    try:
        p = app.wait_for(lambda p: p["ok"] and "model_view_knock_first" in p["widgets"], "the model view")
        # The labels and the heads' jobs land from their own tasks (slowly on a loaded
        # machine) and add lines above the switches: a click aimed before they land hit
        # the map above the switch, which opened Heatmaps.
        p = app.wait_for(lambda p: p["model-view"]["labels_measured"] and p["model-view"]["jobs"] == "minimal pairs",
                         "the labels and the heads' jobs", timeout=300)
        # At 1280 x 800 the heads' labels and "Try these" push layer 0's switches to the
        # fold: scroll the view, as a teacher would, until the switch shows.
        # One wheel step at a time, each waited for on the switch's own position: steps
        # sent ahead of a slow frame would land after the check and scroll it past the top.
        for _ in range(40):
            r = app.widget("model_view_knock_first")
            if r[1] + r[3] <= p["window"][1] - 60:  # above the status bar, the window's last 30-odd px
                break
            g.xdo("mousemove", "--window", app.wid, int(r[0] + 100), int(p["window"][1] / 2 + 100), "click", 5)
            try:
                p = app.wait_for(lambda p: p["widgets"].get("model_view_knock_first", r)[1] != r[1], "a wheel step",
                                 timeout=3)
            except g.Fail:  # the view scrolled as far as it goes
                break
        gen = p["generation"]
        p = click_until(app, "model_view_knock_first", lambda p: p["knocked_out"] == "L0H0 (zero)" and
                        p["generation"] > gen, "L0H0 to be knocked out")
        check("knockout_banner" in app.settle()["widgets"], "no banner over the results with L0H0 knocked out")
        click_until(app, "knockout_restore", lambda p: p["knocked_out"] == "", "every head to be back")
        final = app.quit()
    finally:
        app.kill()
    check(final["knocked_out"]["heads"] == [], f"still knocked out: {final['knocked_out']}")


def test_hover_cell(mhaviz, d):
    """The mouse over a cell of a Model view map outlines it and names its query and key
    with the weight: the probe's cell is the one under the mouse, its weight trace's."""
    ref = reference(mhaviz, d, 1)
    n = len(ref["attention"][0])
    # Presented, every map is in the window.
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--view", "model-view", "--present"],
                size=(1920, 1080))
    try:
        r = app.widget("model_view_cells 1 2")
        # every piece has its cell (the sentence is shorter than the map's blocks); presented,
        # cells may be wider than tall
        cw, ch = r[2] / n, r[3] / n
        for i, j in ((n - 1, 1), (3, 3)):
            x, y = r[0] + (j + 0.5) * cw, r[1] + (i + 0.5) * ch
            g.xdo("mousemove", "--window", app.wid, int(x), int(y))
            p = app.wait_for(lambda p: (p["model-view"]["cell"] or {}).get("query") == i and
                             p["model-view"]["cell"]["key"] == j, f"the cell ({i}, {j}) under the mouse")
            c = p["model-view"]["cell"]
            check((c["layer"], c["head"]) == (1, 2), f"cell of L{c['layer']}H{c['head']}")
            want = ref["attention"][2][i][j]
            check(abs(c["weight"] - want) <= 1e-5 * max(1.0, abs(want)), f"cell weight {c['weight']} vs trace {want}")
    finally:
        app.kill()


def label_matches(shown, token):
    """A label as written: the token whole, or its start cut with "…" where its cell is narrow."""
    return shown == token or (shown.endswith("\u2026") and len(shown) > 1 and token.startswith(shown[:-1]))


def test_token_labels(mhaviz, d):
    """The maps label their keys (above each map) and queries (left of each row of maps)
    where every cell is drawn and is at least 0.9 of the font high, as the heatmaps do:
    in the tab and presented, on seeded weights and on mhaviz-small; the labels are the
    trace's tokens, in order, whole or cut with "…"."""
    runs = ((("--sentence", "고양이가 쥐를 잡았다"), (1280, 800), 100),
            (("--sentence", "고양이가 쥐를 잡았다", "--present"), (1280, 800), 150),
            (("--sentence", "고양이가 쥐를 잡았다 그리고 개가 고양이를 쫓았다 .", "--heads", "4", "--present"),
             (1280, 800), 150),
            (("--model", MODEL, "--sentence", "고양이가 쥐를 잡았다", "--present"), (1920, 1080), 150))
    for k, (args, size, pct) in enumerate(runs):
        where = f"{' '.join(args)} at {size[0]}x{size[1]} {pct}%"
        dump, probe = os.path.join(d, f"labels{k}.json"), os.path.join(d, f"labels{k}.probe.json")
        gui(mhaviz, d, *args, "--view", "model-view", "--lang", "ko", "--text-size", str(pct), "--width",
            str(size[0]), "--height", str(size[1]), "--dump-state", dump, "--probe", probe)
        dump, probe = g.read_json(dump), g.read_json(probe)
        tokens = dump["trace"]["tokens"]
        r = probe["widgets"]["model_view_cells 0 0"]
        cell = r[2] / len(tokens)  # the map's width over its cells (no sampling: a short sentence)
        check(min(cell, r[3] / len(tokens)) >= 0.9 * probe["font_px"], f"{where}: cells of {cell:.1f} x "
              f"{r[3] / len(tokens):.1f} px are too small to hold labels: the check would test nothing")
        t = probe["model-view"].get("token_labels") or {}
        for part in ("keys", "queries"):
            shown = t.get(part, [])
            check(len(shown) == len(tokens) and all(label_matches(a, b) for a, b in zip(shown, tokens)),
                  f"{where}: the {part} read {shown}, not the trace's tokens {tokens}")
        check(t.get("key_lines") in (1, 2) and abs(t.get("cell", 0) - cell) < 1.0,
              f"{where}: keys on {t.get('key_lines')} lines, cells {t.get('cell')} (map {r})")


def test_present_uses_height(mhaviz, d):
    """Presented at 1280 x 800 with 150% text and 1920 x 1080 with 200%, in Korean, the maps
    take the window's height as well as its width: from the first map's top to the last
    switch's bottom they span at least 80% of the room under the header, on seeded weights
    with 8 heads (one row of square maps left half the window empty) and on mhaviz-small
    (2 layers of 4); no map is more than twice as wide as tall or as tall as wide."""
    for size, pct in (((1280, 800), 150), ((1920, 1080), 200)):
        for args in ((), ("--model", MODEL)):
            where = f"{' '.join(args) or 'seeded, 8 heads'} at {size[0]}x{size[1]} {pct}%"
            dump, p = g.presented(mhaviz, d, "model-view", size, pct, *args)
            w = p["widgets"]
            layers = len(dump["views"]["model_view_view"]["attention"])
            heads = len(dump["views"]["model_view_view"]["attention"][0])
            check(layers * heads == 8, f"{where}: {layers} x {heads} maps")
            content, top, end = w["present_content"], w["model_view_first_map"], w["model_view_knock_last"]
            room = content[1] + content[3] - top[1]
            used = end[1] + end[3] - top[1]
            check(used >= 0.8 * room, f"{where}: the maps and their switches take {used:.0f} of {room:.0f} px "
                                      f"under the header (first map {top}, last switch {end})")
            for l in range(layers):
                for h in range(heads):
                    c = w[f"model_view_cells {l} {h}"]
                    check(0.5 <= c[2] / c[3] <= 2.0, f"{where}: map L{l}H{h}'s cells span {c}")
                    g.check_within(where, f"map L{l}H{h}", c, content)


TESTS = {
    "select_and_open": test_select_and_open,
    "validation_labels": test_validation_labels,
    "knockout_views": test_knockout_views,
    "knockout_toggle": test_knockout_toggle,
    "hover_cell": test_hover_cell,
    "token_labels": test_token_labels,
    "present_uses_height": test_present_uses_height,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "model_view"))
