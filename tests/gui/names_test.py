#!/usr/bin/env python3
"""GUI tests of one name per head in every view (sources/shown_names.hpp): the Model view's
maps, presentation mode's header and the Importance chart name a head alike, from the
shipped evidence for mhaviz-small, and on the sentence shown (against chance, or "set by
hand") for other weights.

    names_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from lm_test import MODEL, SENTENCE  # noqa: E402
from projector_test import gui_run  # noqa: E402

check = g.check


def test_names_agree(mhaviz, d):
    """One name per head in every view: the Model view's maps name each head of
    mhaviz-small as the shipped evidence does (assets/models/mhaviz-small.labels.json: a
    knock-out's job before a pattern on the validation text), with where it was measured;
    presentation mode's header over the heatmaps gives the same name for the head it shows."""
    labels = g.read_json(os.path.join(os.path.dirname(MODEL), "mhaviz-small.labels.json"))
    shipped = {(x["layer"], x["head"]): x["label"] for x in labels["labels"]}
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--view", "model-view"])
    try:
        app.wait_for(lambda p: p["ok"] and p["model-view"]["evidence"], "the stored evidence", timeout=60)
        final = app.quit()
    finally:
        app.kill()
    names = {(x["layer"], x["head"]): x for x in final["views"]["model_view_view"]["names"]}
    check(set(names) == set(shipped), f"named heads {sorted(names)} vs shipped {sorted(shipped)}")
    for k, want in shipped.items():
        n = names[k]
        check(n["kind"] == want["kind"] and n["key"] == want["job"] and n["claimed"] == (want["kind"] != "none"),
              f"L{k[0]}H{k[1]}: the Model view names it {n} where the evidence says {want}")
        check(n["evidence"] == want["evidence"], f"L{k[0]}H{k[1]}: evidence {n['evidence']!r}")
    # A job line uses a knock-out's words only where the evidence has that knock-out.
    claims = {k: [l["label"], *l["also"]] for l in labels["labels"] for k in [(l["layer"], l["head"])]}
    for j in final["views"]["model_view_view"]["jobs"]:
        causal = any(c["kind"] == "causal" and c["job"] == j["job"] for c in claims[(j["layer"], j["head"])])
        looks = j["shown"] in ("looks at the noun", "looks at the subject")
        check(looks != causal, f"L{j['layer']}H{j['head']} job {j['job']} shown {j['shown']!r}; causal: {causal}")
    # The header: the head that does the most telling job (a knock-out's), else a pattern's.
    order = {"causal": 0, "pattern": 1, "attention": 2, "none": 3}
    layer, head = min(shipped, key=lambda k: (order[shipped[k]["kind"]], k))
    want = names[(layer, head)]["text"]
    app = g.App(mhaviz, d, ["--model", MODEL, "--sentence", SENTENCE, "--layer", str(layer), "--enlarge", str(head),
                            "--present"])
    try:
        p = app.wait_for(lambda p: p["ok"] and p["present"]["head_name"] == want,
                         f"the header to name L{layer}H{head} {want!r}", timeout=60)
        check(want in p["present"]["header"], f"header {p['present']['header']!r} lacks {want!r}")
    finally:
        app.kill()


def test_hand_heads_named(mhaviz, d):
    """--preset heads on the 3-word class sentence: each hand-built head is named for the
    pattern it was built for, "set by hand", though 3 tokens are too few for any pattern to
    beat a random pick (the rule on a learned head); the header says the same."""
    for h, want in enumerate(("previous-token", "self", "first", "next")):
        dump, _ = gui_run(mhaviz, d, "--sentence", "the cat sat", "--preset", "heads", "--enlarge", str(h),
                          "--present", name=f"hand{h}", frames=2)
        names = dump["views"]["model_view_view"]["names"]
        n = names[h]
        check(n["key"] == want and n["claimed"] and n["measured_on"] == "set by hand", f"head {h}: {n}")
        check(dump["present"]["head_name"] == n["text"] and n["text"] in dump["present"]["header"],
              f"head {h}: header {dump['present']['header']!r} vs {n['text']!r}")
    # The same maps from random weights are not claimed on 3 tokens.
    dump, _ = gui_run(mhaviz, d, "--sentence", "the cat sat", name="random3", frames=2)
    check(not any(n["claimed"] for n in dump["views"]["model_view_view"]["names"]),
          f"a random head claimed on 3 tokens: {dump['views']['model_view_view']['names']}")


TESTS = {
    "agree": test_names_agree,
    "hand_heads": test_hand_heads_named,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "names"))
