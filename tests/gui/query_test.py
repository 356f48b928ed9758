#!/usr/bin/env python3
"""GUI tests of the Query view (one query's scores, softmax and weighted sum, by hand) and
the Metrics view's summaries beside it, against numpy and `mhaviz trace`.

    query_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool, or by_hand without numpy).
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


def test_query_and_metrics(mhaviz, d):
    """The query, scaling, head-metrics, head-count and GQA views against the trace and numpy."""
    if np is None:
        raise g.Skip("numpy is not installed")
    sentence = "the quick brown fox jumps over the lazy dog"
    args = ["--sentence", sentence, "--heads", "4", "--d-model", "256", "--kv-heads", "2", "--mask", "causal",
            "--seed", "7"]
    dump = dump_run(mhaviz, d, *args, "--view", "query", "--view-head", "3", "--view-query", "4")
    check(dump["ok"], dump["error"])
    v, attn = dump["views"], dump["trace"]["attention"]
    ref = cli_npz(mhaviz, d, "ref.npz", *args)
    # 1. One query: the trace's own weights, the masked keys, and the sum = context.
    q = v["query_view"]
    check(q["head"] == 3 and q["query"] == 4 and q["kv_head"] == 1, f"head {q['head']} query {q['query']} kv {q['kv_head']}")
    for k in q["keys"]:
        check(k["weight"] == attn[3][4][k["index"]], f"key {k['index']}: weight {k['weight']} != trace {attn[3][4][k['index']]}")
        check(k["masked"] == (k["index"] > 4), f"key {k['index']} masked = {k['masked']}")
        if k["masked"]:
            check(k["scaled"] is None and k["weight"] == 0.0, f"masked key {k['index']}: {k['scaled']}, {k['weight']}")
    close(q["trace_context"], ref["context"][0, 3, 4], 0, "trace_context vs mhaviz trace's context[0, 3, 4]")
    close(q["context"], ref["context"][0, 3, 4], 1e-5, "the query view's sum vs mhaviz trace's context")
    close(q["q"], ref["q"][0, 3, 4], 0, "q")
    close([k["k"] for k in q["keys"]], ref["k"][0, 1], 0, "k of K/V head 1")
    # 2. Scaling: the configuration's own variant reproduces the trace; without it the softmax saturates.
    sv = v["softmax_view"]
    close(sv["with_scaling"]["weights"], ref["attn"][0, 3], 1e-6, "with-scaling weights vs the trace's attn")
    check(sv["without_scaling"]["stats"]["mean_entropy"] < sv["with_scaling"]["stats"]["mean_entropy"],
          "no sqrt(d_k): the entropy should drop")
    check(sv["without_scaling"]["stats"]["mean_max_weight"] > sv["with_scaling"]["stats"]["mean_max_weight"],
          "no sqrt(d_k): the max weight should rise")
    check(abs(sv["without_scaling"]["score_std"] / sv["with_scaling"]["score_std"] - 8.0) < 1e-3,
          "unscaled scores should spread sqrt(64) = 8 times wider")
    # 3. Head metrics from the weights, recomputed in numpy.
    hv = v["metrics_view"]
    A = ref["attn"][0].astype(np.float64)
    for s in hv["summaries"]:
        h = s["head"]
        check(abs(s["mean_max_weight"] - A[h].max(axis=1).mean()) < 1e-6, f"head {h} mean max weight")
        p = A[h]
        ent = -(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0)).sum(axis=1).mean()
        check(abs(s["mean_entropy"] - ent) < 1e-5, f"head {h} mean entropy {s['mean_entropy']} vs {ent}")
        check(abs(s["self"] - np.diag(p).mean()) < 1e-6, f"head {h} self weight")
    D = np.array(hv["divergence"])
    check(np.allclose(D, D.T) and np.allclose(np.diag(D), 0), "divergence matrix not symmetric with zero diagonal")
    m = 0.5 * (A[0] + A[2])
    def kl(a, b):
        return np.where(a > 0, a * np.log(np.where(a > 0, a, 1) / np.where(b > 0, b, 1)), 0).sum(axis=1)
    js = (0.5 * kl(A[0], m) + 0.5 * kl(A[2], m)).mean()
    check(abs(D[0, 2] - js) < 1e-5, f"JS(head 0, head 2) = {D[0, 2]}, numpy {js}")
    # 4. Head count: the divisors of 256, the same parameter count on every row.
    hc = v["counts_view"]["rows"]
    check([r["num_heads"] for r in hc] == [1, 2, 4, 8, 16, 32, 64, 128, 256], f"head counts {[r['num_heads'] for r in hc]}")
    check(len({r["params"] for r in hc}) == 1 and hc[0]["params"] == 4 * (256 * 256 + 256), "params should not depend on num_heads")
    check([r["current"] for r in hc].count(True) == 1 and next(r for r in hc if r["current"])["num_heads"] == 4, "current row")
    check(all(("gqa" in r) == (r["num_heads"] % 2 == 0) for r in hc), "GQA columns where 2 divides num_heads")
    # 7. GQA: who shares what, and the bytes saved for 9 tokens.
    gv = v["gqa_view"]
    check(gv["kind"] == "grouped-query" and gv["kv_head_of"] == [0, 0, 1, 1], f"GQA {gv['kind']} {gv['kv_head_of']}")
    check(gv["kv_cache_bytes"] == 2 * 2 * 64 * 9 * 4 and gv["mha_kv_cache_bytes"] == 2 * 4 * 64 * 9 * 4,
          f"KV cache {gv['kv_cache_bytes']} / {gv['mha_kv_cache_bytes']}")
    check(gv["params_saved"] == 2 * (256 * 256 + 256) - 2 * (256 * 128 + 128), f"params saved {gv['params_saved']}")


def test_present_fits(mhaviz, d):
    """Presented in Korean and English at 1280 x 800 with 150% text and 1920 x 1080 with
    200%, with and without the causal mask, the key table lies in the window and every
    key's last cell (weight x v_j) inside the table: fewer digits and entries, headers on
    two lines, the mask's note on two lines, but no sideways scroll (v_j was cut by a
    scrollbar; with the mask's column, by 20 px in English)."""
    for size, pct in (((1280, 800), 150), ((1920, 1080), 200)):
        for lang in ("ko", "en"):
            for mask in ("none", "causal"):
                where = f"query {size[0]}x{size[1]} {pct}% {lang} mask {mask}"
                _, p = g.presented(mhaviz, d, "query", size, pct, "--mask", mask, lang=lang)
                w, win = p["widgets"], p["window"]
                table = w.get("query_table")
                g.check_within(where, "the key table", table, [0, 0, win[0], win[1]])
                for j in range(3):
                    g.check_within(where, f"key {j}'s weight x v_j", w.get(f"query_end {j}"), table)


TESTS = {
    "by_hand": test_query_and_metrics,
    "present_fits": test_present_fits,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "query"))
