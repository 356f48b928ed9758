#!/usr/bin/python3
"""Checks what the README's demonstrations of mhaviz-small say, on the real model, from
`mhaviz trace --model ... --json` (the numbers the app shows):

  for every layer and head, on each sentence,
    previous   mean weight on the piece just before (positions 1..)
    bos        mean weight on <s>, the first piece (positions 1..)
    induction  where the two pieces ending at i occurred before (ending at j), the mean
               weight on piece j + 1, the one that FOLLOWED them (Olsson et al. 2022)
  and the top next-piece predictions where the phrase repeats.

usage: scripts/lm_demos.py PATH/TO/mhaviz [MODEL.npz]
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DEMOS = [
    "고양이가 쥐를 잡았다. 고양이가 쥐를",
    "The cat sat on the mat. The cat sat on the",
    "셀을 선택한 다음 서식 - 셀을 선택합니다.",
]


def trace(mhaviz, model, sentence, layer, tmp):
    out = os.path.join(tmp, f"t{layer}.json")
    subprocess.run([mhaviz, "trace", "--model", model, "--sentence", sentence, "--layer", str(layer),
                    "--top-k", "5", "--json", out, "-q"], check=True)
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def scores(attn, ids):
    H, S, _ = attn.shape
    prev = np.array([attn[h, np.arange(1, S), np.arange(0, S - 1)].mean() for h in range(H)])
    bos = attn[:, 1:, 0].mean(1)
    # (query i, key j+1) where the two pieces ending at j are the two ending at i: the
    # repeat of a phrase, not merely another "▁" or "the".
    pairs = []
    for i in range(2, S):
        for j in range(i - 2, 0, -1):
            if ids[j] == ids[i] and ids[j - 1] == ids[i - 1]:
                pairs.append((i, j + 1))
                break
    ind = np.array([np.mean([attn[h, i, k] for i, k in pairs]) if pairs else np.nan for h in range(H)])
    return prev, bos, ind, pairs


def main():
    mhaviz = sys.argv[1]
    model = sys.argv[2] if len(sys.argv) > 2 else "assets/models/mhaviz-small.npz"
    with tempfile.TemporaryDirectory() as tmp:
        for s in DEMOS:
            print(f"\n=== {s}")
            doc = trace(mhaviz, model, s, 0, tmp)
            layers = json.loads(bytes(np.load(model)["config"]).decode())["num_layers"]
            print("pieces:", " ".join(f"{i}:{p}" for i, p in enumerate(doc["pieces"])))
            for layer in range(layers):
                doc = trace(mhaviz, model, s, layer, tmp)
                attn = np.asarray(doc["attention"])
                prev, bos, ind, pairs = scores(attn, doc["ids"])
                for h in range(attn.shape[0]):
                    print(f"  layer {layer} head {h}: previous {prev[h]:.2f}  bos {bos[h]:.2f}  induction "
                          f"{ind[h]:.2f}")
            print(f"  induction pairs (query -> key after the earlier occurrence): {pairs}")
            for i, row in enumerate(doc["next"]):
                best = ", ".join(f"{p['piece']} {p['probability']:.2f}" for p in row[:3])
                print(f"  next after {i}:{doc['pieces'][i]}  ->  {best}")


if __name__ == "__main__":
    main()
