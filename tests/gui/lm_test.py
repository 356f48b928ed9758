#!/usr/bin/env python3
"""GUI tests of the language model in the app (mhaviz-small): the views' numbers
through --dump-state against `mhaviz trace --model ... --sentence ... --json --top-k 5`.

    lm_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gui_test as g  # noqa: E402
from teach_test import click_until  # noqa: E402

check = g.check
MODEL = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "models",
                                      "mhaviz-small.npz"))
SENTENCE = "고양이가 쥐를 잡았다. 고양이가 쥐를"
TOL = 1e-5


def model_config():
    """The checkpoint's config (its "config" member: the JSON's UTF-8 bytes as a uint8 .npy)."""
    import struct
    import zipfile
    with zipfile.ZipFile(MODEL) as z:
        raw = z.read("config.npy")
    major = raw[6]
    n, start = (struct.unpack("<H", raw[8:10])[0], 10) if major == 1 else (struct.unpack("<I", raw[8:12])[0], 12)
    return json.loads(raw[start + n:].decode("utf-8"))


def close(a, b, what):
    """Nested lists of numbers equal within TOL (same shapes)."""
    if isinstance(a, list) or isinstance(b, list):
        check(isinstance(a, list) and isinstance(b, list) and len(a) == len(b),
              f"{what}: shapes differ ({len(a) if isinstance(a, list) else a} vs {len(b) if isinstance(b, list) else b})")
        for i, (x, y) in enumerate(zip(a, b)):
            close(x, y, f"{what}[{i}]")
        return
    check(abs(float(a) - float(b)) <= TOL, f"{what}: {a} vs {b}")


def reference(mhaviz, d, layer):
    out = os.path.join(d, f"ref{layer}.json")
    subprocess.run([mhaviz, "trace", "--quiet", "--model", MODEL, "--sentence", SENTENCE, "--layer", str(layer),
                    "--top-k", "5", "--json", out], check=True, cwd=d, capture_output=True)
    return g.read_json(out)


def gui(mhaviz, d, *args, check_rc=True):
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    return subprocess.run([mhaviz, "gui", "--frames", "3", *args], env=env, cwd=d, capture_output=True, text=True,
                          check=check_rc)


def test_views_equal_trace(mhaviz, d):
    """mhaviz-small on a Korean sentence at layer 1: the heatmaps' trace, the head view's
    weights, the model view's every layer and the next-piece list equal trace --model."""
    refs = [reference(mhaviz, d, layer) for layer in range(model_config()["num_layers"])]
    for view in ("next", "head-view", "model-view"):
        dump = os.path.join(d, f"{view}.json")
        gui(mhaviz, d, "--model", MODEL, "--sentence", SENTENCE, "--layer", "1", "--view", view, "--dump-state", dump)
        final = g.read_json(dump)
        check(final["ok"], f"{view}: the app reports an error: {final['error']}")
        check(final["sentence"] == SENTENCE, f"{view}: sentence {final['sentence']!r}")
        close(final["trace"]["attention"], refs[1]["attention"], f"{view}: layer 1 in the views vs trace --layer 1")
        views = final["views"]
        nt = views["next_view"]
        check(nt["available"], "the next-piece panel has no predictions")
        ref_next = refs[1]["next"]
        check(len(nt["next"]) == len(ref_next) == len(refs[1]["pieces"]), "one row of predictions per piece")
        for i, (row, ref_row) in enumerate(zip(nt["next"], ref_next)):
            check([p["id"] for p in row] == [p["id"] for p in ref_row], f"next pieces after position {i}")
            check([p["piece"] for p in row] == [p["piece"] for p in ref_row], f"next spellings after position {i}")
            close([p["probability"] for p in row], [p["probability"] for p in ref_row], f"next probabilities at {i}")
        hv = views["head_view_view"]
        H, L = model_config()["num_heads"], model_config()["num_layers"]
        check(hv["layer"] == 1 and len(hv["heads"]) == H, f"head view: layer {hv['layer']}, {len(hv['heads'])} heads")
        close([h["weights"] for h in hv["heads"]], refs[1]["attention"], "head view weights vs trace --layer 1")
        mv = views["model_view_view"]
        close(mv["attention"], [r["attention"] for r in refs], "model view (every layer) vs trace per layer")
        check(len(mv["labels"]) == L * H, f"model view: {len(mv['labels'])} head labels, expected {L} x {H}")
        check(mv["labels_measured_on"] in ("validation text", "sentence (measuring)"),
              f"labels measured on {mv['labels_measured_on']!r}")
    # The pieces the chips and the head view show are the tokenizer's (U+2581 written as '_'
    # and a thin space, U+2009, that keeps the bar off the next character).
    shown = final["views"]["head_view_view"]["tokens"]
    check(shown == [p.replace("\u2581", "_\u2009") for p in refs[1]["pieces"]], f"chips {shown} vs {refs[1]['pieces']}")


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
    text, and its labels are the training's. The shipped model's layer 0 head 0 is the
    previous-token head (0.95 in the training's measure, docs/model-card.md) and layer 1
    head 3 its induction head (0.55 on the validation windows repeated, the measure of
    mhaviz ablate's table, since it rests on <s> where nothing repeats); no other head
    claims induction."""
    dump = os.path.join(d, "labels.json")
    gui(mhaviz, d, "--model", MODEL, "--sentence", SENTENCE, "--view", "model-view", "--frames", "600",
        "--dump-state", dump)
    mv = g.read_json(dump)["views"]["model_view_view"]
    if mv["labels_measured_on"] != "validation text":
        raise g.Fail(f"labels still measured on {mv['labels_measured_on']!r} after 600 frames")
    cfg = model_config()
    check(len(mv["labels"]) == cfg["num_layers"] * cfg["num_heads"], f"{len(mv['labels'])} labels")
    by = {(x["layer"], x["head"]): x for x in mv["labels"]}
    check(by[(0, 0)]["label"] == "previous-token" and by[(0, 0)]["score"] > 0.9, f"layer 0 head 0: {by[(0, 0)]}")
    check(by[(1, 3)]["label"] == "induction" and by[(1, 3)]["score"] > 0.5, f"layer 1 head 3: {by[(1, 3)]}")
    others = [x for x in mv["labels"] if (x["layer"], x["head"]) != (1, 3)]
    check(all(x["label"] != "induction" for x in others), f"another head labelled induction: {others}")


def test_head_view_seeded(mhaviz, d):
    """The head view is offered for the seeded weights too: its weights are the trace's."""
    dump = os.path.join(d, "seeded.json")
    gui(mhaviz, d, "--sentence", "The cat sat on the mat because it was tired.", "--heads", "4", "--d-model", "32",
        "--view", "head-view", "--dump-state", dump)
    final = g.read_json(dump)
    hv = final["views"]["head_view_view"]
    check(final["ok"] and len(hv["heads"]) == 4, f"{len(hv['heads'])} heads in the head view, expected 4")
    close([h["weights"] for h in hv["heads"]], final["trace"]["attention"], "head view vs the seeded trace")


def test_head_view_export(mhaviz, d):
    """The Export section's "head view" writes the head view (SVG here), the same bytes
    `mhaviz export --view head` writes for the same sentence and configuration."""
    args = ["--sentence", "the cat sat on the mat", "--heads", "4", "--d-model", "64", "--view", "head-view"]
    app = g.App(mhaviz, d, args, size=(1280, 1000))
    try:
        app.wait_for(lambda p: p["ok"], "a valid trace")
        r = app.widget("export_path")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held("hv.svg")
        # The Export options sit at the foot of the left column, below the fold.
        g.xdo("mousemove", "--window", app.wid, int(r[0] + r[2] / 2), int(r[1]), "click", "--repeat", "10",
              "--delay", "30", "5")
        v = app.widget("export_view_head")
        app.click(v[0] + v[3] / 2, v[1] + v[3] / 2)
        b = app.widget("export")
        app.click(b[0] + b[2] / 2, b[1] + b[3] / 2)
        p = app.wait_for(lambda p: "head view" in p["export_message"], "the head view's export message")
        check(p["export_message"].startswith("Saved the head view (4 heads)"), f"message {p['export_message']!r}")
        app.quit()
    finally:
        app.kill()
    ref = os.path.join(d, "ref.svg")
    subprocess.run([mhaviz, "export", "--view", "head", *args[:6], "--svg", ref], check=True, capture_output=True)
    with open(os.path.join(d, "hv.svg"), "rb") as f1, open(ref, "rb") as f2:
        mine, theirs = f1.read(), f2.read()
    check(mine.count(b'class="attn"') > 0, "the GUI's head view SVG has no lines")
    check(mine == theirs, "the GUI's head view SVG differs from mhaviz export --view head's")


def test_context_cap(mhaviz, d):
    """A sentence longer than the model's 64-piece context is capped, with a notice."""
    dump = os.path.join(d, "long.json")
    long = " ".join(["고양이가 쥐를 잡았다."] * 20)
    gui(mhaviz, d, "--model", MODEL, "--sentence", long, "--view", "next", "--dump-state", dump)
    final = g.read_json(dump)
    check(final["ok"] and len(final["trace"]["tokens"]) == 64, f"{len(final['trace']['tokens'])} pieces, expected 64")
    check("64" in final["views"]["next_view"]["notice"], f"notice {final['views']['next_view']['notice']!r}")


def test_bad_flags(mhaviz, d):
    """--tokens with a language model and a layer it does not have are usage errors (2)."""
    for args, words in [(["--model", MODEL, "--tokens", "1 2"], "give it a sentence with --sentence"),
                        (["--model", MODEL, "--layer", "5"], "out of range")]:
        r = gui(mhaviz, d, *args, check_rc=False)
        check(r.returncode == 2 and words in r.stderr, f"{args}: status {r.returncode}, stderr {r.stderr!r}")


def ablate_reference(mhaviz, d, heads):
    """`mhaviz ablate --heads ... --sentence ... --json`: each position's P(next piece)
    before and after knocking `heads` out."""
    r = subprocess.run([mhaviz, "ablate", "--model", MODEL, "--heads", heads, "--sentence", SENTENCE, "--json"],
                       check=True, cwd=d, capture_output=True, text=True)
    return json.loads(r.stdout)


def test_knockout_flag(mhaviz, d):
    """gui --ablate L1H3: the banner's heads in the dump, and the next-piece view's
    before -> after probabilities equal `mhaviz ablate --sentence`'s."""
    ref = ablate_reference(mhaviz, d, "1.3")
    dump = os.path.join(d, "knocked.json")
    gui(mhaviz, d, "--model", MODEL, "--sentence", SENTENCE, "--ablate", "L1H3", "--view", "next", "--dump-state",
        dump)
    final = g.read_json(dump)
    check(final["ok"], f"the app reports an error: {final['error']}")
    check([h["name"] for h in final["knocked_out"]["heads"]] == ["L1H3"], f"knocked out {final['knocked_out']}")
    check(final["knocked_out"]["text"] == "L1H3 (zero)", f"banner text {final['knocked_out']['text']!r}")
    nt = final["views"]["next_view"]
    positions = ref["positions"]
    check(len(nt["after"]) == len(positions), f"{len(nt['after'])} before -> after rows, ablate has {len(positions)}")
    close(nt["before"], [p["before"] for p in positions], "P(next piece) before, GUI vs ablate --json")
    close(nt["after"], [p["after"] for p in positions], "P(next piece) after, GUI vs ablate --json")
    check(any(abs(p["before"] - p["after"]) > 1e-3 for p in positions),
          "knocking L1H3 out changes no probability: the comparison tests nothing")
    # The likeliest pieces the view lists are the ablated model's.
    check([row[0]["piece"] for row in nt["next"][:-1]] == [p["top_after"] for p in positions],
          "the likeliest next pieces are not the ablated model's")


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
        # At 1280 x 800 the heads' labels and "Try these" push layer 0's switches to the
        # fold: scroll the view, as a teacher would, until the switch shows.
        for _ in range(12):
            r = app.widget("model_view_knock_first")
            if r[1] + r[3] <= p["window"][1] - 60:  # above the status bar, the window's last 30-odd px
                break
            g.xdo("mousemove", "--window", app.wid, int(r[0] + 100), int(p["window"][1] / 2 + 100), "click", 5)
            p = app.settle(3)
        gen = p["generation"]
        p = click_until(app, "model_view_knock_first", lambda p: p["knocked_out"] == "L0H0 (zero)" and
                        p["generation"] > gen, "L0H0 to be knocked out")
        check("knockout_banner" in app.settle()["widgets"], "no banner over the results with L0H0 knocked out")
        click_until(app, "knockout_restore", lambda p: p["knocked_out"] == "", "every head to be back")
        final = app.quit()
    finally:
        app.kill()
    check(final["knocked_out"]["heads"] == [], f"still knocked out: {final['knocked_out']}")


def test_knockout_bad_flags(mhaviz, d):
    """--ablate naming a head mhaviz-small does not have is a usage error (2) naming the range."""
    cfg = model_config()
    bad = f"{cfg['num_layers']}.0"
    r = gui(mhaviz, d, "--model", MODEL, "--ablate", bad, check_rc=False)
    check(r.returncode == 2 and "does not exist" in r.stderr and "L0H0 (0.0)" in r.stderr,
          f"--ablate {bad}: status {r.returncode}, stderr {r.stderr!r}")


def test_train_defaults_message(mhaviz, d):
    """The Train view opened with mhaviz-small loaded says where the task's defaults went
    (the next run: the Configuration panel shows the model's own fixed shape), not that
    the panel holds them; once the seeded weights are picked, the panel does hold them
    (2 heads, d_model 16) and the message says so."""
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--view", "train"])
    try:
        p = app.wait_for(lambda p: p["view"] == "train" and p["train"]["message"] != "", "the Train view's message")
        msg = p["train"]["message"]
        check("loaded language model" in msg and "now holds" not in msg,
              f"with mhaviz-small loaded the message says {msg!r}")
        cfg = model_config()
        check((p["num_heads"], p["d_model"]) == (cfg["num_heads"], cfg["d_model"]),
              f"the panel shows {p['num_heads']}, {p['d_model']}: not the model's shape")
        click_until(app, "model_source", lambda p: "source_seeded" in p["widgets"], "the model selector to open")
        click_until(app, "source_seeded", lambda p: p["num_heads"] == 2 and p["d_model"] == 16,
                    "the seeded weights with the task's defaults in Configuration")
        p = app.wait_for(lambda p: "now holds" in p["train"]["message"], "the message to follow the source")
        check("(2 heads, d_model 16)" in p["train"]["message"], f"message {p['train']['message']!r}")
        app.quit()
    finally:
        app.kill()


TESTS = {
    "train_defaults_message": test_train_defaults_message,
    "views_equal_trace": test_views_equal_trace,
    "select_and_open": test_select_and_open,
    "validation_labels": test_validation_labels,
    "head_view_seeded": test_head_view_seeded,
    "head_view_export": test_head_view_export,
    "context_cap": test_context_cap,
    "bad_flags": test_bad_flags,
    "knockout_flag": test_knockout_flag,
    "knockout_views": test_knockout_views,
    "knockout_toggle": test_knockout_toggle,
    "knockout_bad_flags": test_knockout_bad_flags,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "lm"))
