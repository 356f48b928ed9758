"""mhaviz pairs --ablate all (the proof table) against a PyTorch rebuild of the shipped
checkpoint (test_pairs.torch_accuracy, float64): every phenomenon's accuracy without each
head, zero ablation and mean ablation (with the means the table reports), is torch's
within one pair; torch's accuracies for the next head over are not, so a wrong head index
fails the comparison. The statistics are recomputed from the table's counts with exact
binomial sums written here (math.comb): the chance band, each McNemar p-value, which drops
are significant at 0.01 / heads, and which heads carry a phenomenon.

Usage: test_pairs_table.py MHAVIZ (exit 77 without torch or sentencepiece)."""
import json
import math
import os
import sys

from checks import check, main

try:
    import numpy as np  # noqa: F401  (test_pairs needs it)
    import torch
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

import test_pairs
from test_pairs import PAIRS, SANITIZED, run, torch_accuracy


def upper_tail(k, n):
    """P(X >= k), X ~ Binomial(n, 1/2), as an exact fraction's float."""
    if k <= 0:
        return 1.0
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n


def band_top(n, alpha=0.01):
    """The smallest count c >= n/2 with P(X > c) + P(X < n - c) <= alpha."""
    c = (n + 1) // 2
    while c < n and 2 * upper_tail(c + 1, n) > alpha:
        c += 1
    return c


def statistics(doc, what):
    t = doc["table"]
    heads = len(t["heads"])
    level = 0.01 / heads
    check(abs(t["test"]["level"] - level) < 1e-15, f"{what}: the level is 0.01 / {heads} heads")
    worst = 0.0
    for row in t["rows"]:
        n, c = row["pairs"], band_top(row["pairs"])
        check(abs(row["chance_band"][1] - c / n) < 1e-12 and abs(row["chance_band"][0] - (n - c) / n) < 1e-12,
              f"{what}: {row['phenomenon']}'s chance band is [{(n - c) / n:.3f}, {c / n:.3f}] over {n} pairs")
        check(row["learned"] == (row["correct"] > c), f"{what}: {row['phenomenon']} learned = accuracy above the band")
        carriers = []
        significant = 0
        for cell in row["knocked_out"]:
            p = upper_tail(cell["lost"], cell["lost"] + cell["gained"])
            worst = max(worst, abs(cell["p"] - p) / max(p, 1e-300))
            sig = p <= level
            significant += sig
            ok = (cell["significant"] == sig and cell["to_chance"] == (cell["correct"] <= c)
                  and cell["correct"] == row["correct"] - cell["lost"] + cell["gained"])
            check(ok, f"{what}: {row['phenomenon']} without {cell['name']}: p {cell['p']:.2g}, significant "
                  f"{cell['significant']}, at chance {cell['to_chance']}, counts add up")
            if row["learned"] and sig and cell["correct"] <= c:
                carriers.append(cell["name"])
        check(row["carriers"] == carriers and row["sole_carrier"] == (len(carriers) == 1 and significant == 1),
              f"{what}: {row['phenomenon']} is carried by {carriers or 'no head'}")
    check(worst <= 1e-9, f"{what}: every McNemar p-value is the exact binomial sum (worst relative {worst:.1e})")


def against_torch(doc, pairs, what, means=None):
    names = [r["phenomenon"] for r in doc["table"]["rows"]]
    count = {n: sum(p["phenomenon"] == n for p in pairs) for n in names}
    H = doc["num_heads"]
    heads = [(h["layer"], h["head"]) for h in doc["table"]["heads"]]
    ref = {}
    for layer, head in heads:
        value = None if means is None else means[layer][head]
        ref[layer, head] = torch_accuracy(pairs, layer, head, value)
    worst, worst_shifted = 0, 0
    for k, (layer, head) in enumerate(heads):
        got = {r["phenomenon"]: r["knocked_out"][k]["accuracy"] for r in doc["table"]["rows"]}
        worst = max(worst, max(abs(got[n] - ref[layer, head][n]) * count[n] for n in names))
        # The same comparison against the next head of the layer must fail somewhere.
        shifted = ref[layer, (head + 1) % H]
        worst_shifted = max(worst_shifted, max(abs(got[n] - shifted[n]) * count[n] for n in names))
    # One pair may flip on a near-tie between float32 and float64.
    check(worst <= 1.01, f"{what}: every knock-out's accuracy is torch's (largest difference {worst:.0f} pairs)")
    check(worst_shifted >= 3, f"{what}: against torch's next head over the comparison fails "
          f"({worst_shifted:.0f} pairs apart): a wrong head index is caught")


def table(mhaviz, tmp):
    if SANITIZED:
        print("skip  pairs --ablate all under a sanitizer (checked in the normal build)")
        return
    # Every third pair of the shipped file (each phenomenon keeps a third of its pairs):
    # the computation is what is checked here, against torch, and all 1,574 pairs took
    # 260 s of the suite (cli.head_labels measures the shipped labels on all of them).
    with open(PAIRS, encoding="utf-8") as f:
        lines = f.readlines()[::3]
    subset = os.path.join(tmp, "pairs.jsonl")
    with open(subset, "w", encoding="utf-8") as f:
        f.writelines(lines)
    pairs = [json.loads(l) for l in lines]
    for mode in ("zero", "mean"):
        r = run([mhaviz, "pairs", "--model", "mhaviz-small", "--pairs", subset, "--ablate", "all", "--mode", mode,
                 "--json"])
        check(r.returncode == 0, f"pairs --ablate all --mode {mode} --json runs ({r.stderr.strip()[:200]})")
        if r.returncode != 0:
            continue
        doc = json.loads(r.stdout)
        t = doc["table"]
        L, H = doc["num_layers"], doc["num_heads"]
        check([(h["layer"], h["head"]) for h in t["heads"]] == [(l, h) for l in range(L) for h in range(H)] and
              t["mode"] == mode, f"{mode}: every head of the model, in order")
        intact = {p["phenomenon"]: p["accuracy"] for p in doc["phenomena"]}
        check(all(row["accuracy"] == intact[row["phenomenon"]] for row in t["rows"]),
              f"{mode}: the table's intact column is the report's accuracy")
        statistics(doc, mode)
        means = None
        if mode == "mean":
            means = [[torch.tensor(v, dtype=torch.float64) for v in layer] for layer in t["means"]]
            check(len(means) == L and all(len(m) == H for m in means), "mean: the means are reported per head")
        against_torch(doc, pairs, mode, means)
    r = run([mhaviz, "pairs", "--model", "mhaviz-small", "--ablate", "L1H0,0.0"])
    check(r.returncode == 0 and "L0H0" in r.stdout and "L1H0" in r.stdout and "McNemar" in r.stdout,
          "--ablate with a list of heads prints the table with the test named")


if __name__ == "__main__":
    test_pairs.run = run
    main([table])
