#!/usr/bin/env python3
"""GUI tests of the Softmax view presented on a projector: its three maps take the
window's height, every score and weight of an 8-token sentence is written in its
cell, and no map title is cut. Checked through --probe and --dump-state (each run waits on the app's frame
counter, never a clock).

    softmax_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, or no xdotool).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402

check = g.check
EIGHT = "고양이가 쥐를 잡았다 그리고 개가 고양이를 쫓았다 ."  # 8 tokens (the period is one)


def test_presented_values(mhaviz, d):
    """Presented at 1280 x 800 with 150% text and 1920 x 1080 with 200%, in Korean, on 8
    tokens: the scores, masked scores and weights (3 x 64 numbers) are all written in
    their cells, none "…"; the legend under the maps ends near the window's bottom (the
    maps use its height); the weights are the trace's."""
    for size, pct in (((1280, 800), 150), ((1920, 1080), 200)):
        where = f"{size[0]}x{size[1]} {pct}%"
        dump, probe = os.path.join(d, f"sm{size[0]}.json"), os.path.join(d, f"sm{size[0]}.probe.json")
        env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
        r = subprocess.run([mhaviz, "gui", "--frames", "4", "--width", str(size[0]), "--height", str(size[1]),
                            "--sentence", EIGHT, "--view", "softmax", "--present", "--lang", "ko", "--text-size",
                            str(pct), "--dump-state", dump, "--probe", probe], env=env, cwd=d, capture_output=True,
                           text=True, timeout=120)
        check(r.returncode == 0, f"{where}: exited {r.returncode}: {r.stderr[-800:]}")
        dump, probe = g.read_json(dump), g.read_json(probe)
        n = len(dump["trace"]["tokens"])
        check(n == 8, f"{where}: {n} tokens")
        sc = dump["layout"]["scaling"]
        check(sc["values_hidden"] == 0 and sc["values_shown"] == 3 * n * n,
              f"{where}: {sc} (expected {3 * n * n} numbers written, none hidden)")
        win = probe["window"]
        legend = probe["widgets"].get("scaling_legend")
        check(legend and legend[1] + legend[3] <= win[1] and win[1] - (legend[1] + legend[3]) <= 0.08 * win[1],
              f"{where}: the legend {legend} is not at the {win} window's bottom: the maps leave its height unused")
        v = dump["views"]["softmax_view"]["with_scaling"]
        attn = dump["trace"]["attention"][0]
        check(all(abs(a - b) < 1e-6 for ra, rb in zip(v["weights"], attn) for a, b in zip(ra, rb)),
              f"{where}: the view's softmax weights are not the trace's")


def test_titles_whole(mhaviz, d):
    """At 200% text, 1280 x 800 and 1920 x 1080, in Korean and English, in the tab and
    presented: no map title is cut with "…" ("masked scores (no mask: the same)" was, at
    both sizes); a title wider than its map says less, "masked scores", and its tooltip
    has it whole."""
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    for size in ((1280, 800), (1920, 1080)):
        for lang in ("ko", "en"):
            for present in ([], ["--present"]):
                where = f"{size[0]}x{size[1]} 200% {lang} {'presented' if present else 'tab'}"
                dump = os.path.join(d, "titles.json")
                r = subprocess.run([mhaviz, "gui", "--frames", "4", "--width", str(size[0]), "--height",
                                    str(size[1]), "--sentence", "고양이가 쥐를 잡았다", "--view", "softmax", *present,
                                    "--lang", lang, "--text-size", "200", "--dump-state", dump], env=env, cwd=d,
                                   capture_output=True, text=True, timeout=120)
                check(r.returncode == 0, f"{where}: exited {r.returncode}: {r.stderr[-800:]}")
                sc = g.read_json(dump)["layout"]["scaling"]
                check(sc.get("titles_cut") == 0 and sc["values_shown"] > 0, f"{where}: map titles cut: {sc}")


TESTS = {
    "presented_values": test_presented_values,
    "titles_whole": test_titles_whole,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "softmax"))
