#!/usr/bin/env python3
"""GUI tests of the Metrics view: the divergence bounded to the first heads at big sizes, and
the four positional heads it offers, labelled as they were built.

    metrics_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import dump_run, cli_npz, close  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

check = g.check


def test_divergence_bounded(mhaviz, d):
    """Head metrics with more heads than the divergence covers: it is computed (off the UI
    thread) for the first 16 heads only, says so, and equals numpy's JS divergence."""
    args = ["--sentence", "a b c d e f g h", "--heads", "20", "--d-model", "80", "--seed", "3"]
    dump = dump_run(mhaviz, d, *args, "--view", "metrics")
    check(dump["ok"], dump["error"])
    hv = dump["views"]["metrics_view"]
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
        check(abs(D[i, j] - js) < 1e-5 and D[i, j] == D[j, i], f"JS(head {i}, head {j}) = {D[i, j]}, numpy {js}")


def test_positional_heads(mhaviz, d):
    """--preset heads: four hand-built heads on the sentence attend to the previous, the same,
    the first and the next word; the Head metrics view says so, and the trace's weights equal
    a numpy recomputation of the documented construction."""
    sentence = "the cat sat on the mat and the dog ran"
    dump = dump_run(mhaviz, d, "--sentence", sentence, "--preset", "heads", "--view", "metrics")
    check(dump["ok"], f"the example did not compute: {dump['error']}")
    v = dump["views"]
    pats = [h["pattern"] for h in v["metrics_view"]["summaries"]]
    check(pats == ["previous", "self", "first token", "next"], f"head patterns {pats}")
    for h in v["metrics_view"]["summaries"]:
        check(h["mean_max_weight"] > 0.95, f"head {h['head']} is not sharp: mean max weight {h['mean_max_weight']}")
    check(v["examples_view"]["input_source"] == "the positional-heads example", f"source {v['examples_view']['input_source']!r}")
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
        close(attn[h], w, 2e-5, f"head {h}'s weights vs numpy")


TESTS = {
    "divergence_bounded": test_divergence_bounded,
    "positional_heads": test_positional_heads,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "metrics", needs_numpy=True))
