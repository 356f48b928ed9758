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
import harness as g  # noqa: E402
from harness import click_until  # noqa: E402

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
    "context_cap": test_context_cap,
    "bad_flags": test_bad_flags,
    "knockout_flag": test_knockout_flag,
    "knockout_bad_flags": test_knockout_bad_flags,
}


if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "lm"))
