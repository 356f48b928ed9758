#!/usr/bin/env python3
"""GUI tests of the Next view: with a head knocked out by mean ablation, the probability
of each real next piece before and after equals `mhaviz trace --ablate-mode mean`.

    next_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from lm_test import MODEL, SENTENCE, close, gui  # noqa: E402

check = g.check


WINDOWS = 64  # the Importance view's default amount of validation text


def test_next_mean_ablation(mhaviz, d):
    """gui --ablate 1.3 --ablate-mode mean: the Next view's likeliest pieces and the
    probability of each real next piece, after the knock-out, equal `mhaviz trace
    --ablate 1.3 --ablate-mode mean --top-k 5`; and mean ablation differs from zero."""
    out = os.path.join(d, "ref_mean.json")
    subprocess.run([mhaviz, "trace", "--quiet", "--model", MODEL, "--sentence", SENTENCE, "--ablate", "1.3",
                    "--ablate-mode", "mean", "--top-k", "5", "--json", out], check=True, cwd=d, capture_output=True)
    ref = g.read_json(out)
    dump = os.path.join(d, "mean.json")
    gui(mhaviz, d, "--model", MODEL, "--sentence", SENTENCE, "--ablate", "1.3", "--ablate-mode", "mean", "--view",
        "next", "--dump-state", dump)
    final = g.read_json(dump)
    check(final["ok"], f"the app reports an error: {final['error']}")
    nt = final["views"]["next_view"]
    check(nt.get("knocked_out") == "L1H3 (mean)", f"knocked out {nt.get('knocked_out')!r}")
    check(len(nt["next"]) == len(ref["next"]), f"{len(nt['next'])} rows, trace {len(ref['next'])}")
    for i, (row, ref_row) in enumerate(zip(nt["next"], ref["next"])):
        check([x["id"] for x in row] == [x["id"] for x in ref_row], f"likeliest pieces after position {i}")
        close([x["probability"] for x in row], [x["probability"] for x in ref_row], f"their probabilities at {i}")
    # P(the real next piece) after the knock-out, wherever trace's top 5 has it.
    compared = 0
    for i, p_after in enumerate(nt["after"]):
        nxt = ref["ids"][i + 1]
        for x in ref["next"][i]:
            if x["id"] == nxt:
                close(p_after, x["probability"], f"P(next piece) after, position {i}")
                compared += 1
    check(compared >= 3, f"only {compared} positions have their next piece in the top 5: the test compares little")
    zero = os.path.join(d, "zero.json")
    subprocess.run([mhaviz, "trace", "--quiet", "--model", MODEL, "--sentence", SENTENCE, "--ablate", "1.3",
                    "--top-k", "5", "--json", zero], check=True, cwd=d, capture_output=True)
    zref = g.read_json(zero)
    diff = max(abs(a["probability"] - b["probability"]) for r1, r2 in zip(zref["next"], ref["next"])
               for a, b in zip(r1, r2))
    check(diff > 1e-4, f"mean and zero ablation give the same pieces (largest difference {diff}): the test tests nothing")


TESTS = {
    "mean_ablation": test_next_mean_ablation,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "next"))
