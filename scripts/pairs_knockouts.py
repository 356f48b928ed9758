#!/usr/bin/python3
"""The minimal pairs' accuracy per phenomenon, intact and with every single head knocked
out, from a float64 PyTorch rebuild of a checkpoint (tests/cli/torch_model.py, which
shares no code with mhaviz): the phenomenon x knock-out table of docs/model-card.md.

A head is knocked out as `mhaviz ablate` and `mhaviz pairs --ablate` do it (zero
ablation: its context is replaced by zeros before W_O reads it). A pair is right when its
good sentence's pieces after the shared ones are likelier than the bad sentence's.
A drop counts only beyond what the pair count can show: the table marks a knock-out
whose accuracy lies below the intact accuracy by more than a two-sided 99% binomial
bound (2.58 standard errors of a share of n pairs, its p taken within 0.05..0.95 so
that an intact 1.000 does not make one pair's flip a drop), and calls an accuracy
"chance" when it is within the same bound at p = 0.5 (0.5 +- 0.091 for 200 pairs).

  /usr/bin/python3 scripts/pairs_knockouts.py [--model assets/models/mhaviz-small.npz]
      [--pairs assets/corpus/pairs.jsonl] [--json out.json]
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import sentencepiece as spm
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
import torch_model  # noqa: E402


def bound(n, p=0.5):
    """Two-sided 99% half-width of a binomial share over n pairs (p kept within 0.05..0.95)."""
    p = min(max(p, 0.05), 0.95)
    return 2.58 * math.sqrt(p * (1 - p) / n)


class Scorer:
    def __init__(self, model, tokenizer, pairs):
        sp = spm.SentencePieceProcessor(model_file=tokenizer)
        self.cfg, params = torch_model.load_checkpoint(model)
        self.P = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()}
        self.pairs = pairs
        self.good = [[sp.bos_id()] + sp.encode(p["good"]) for p in pairs]
        self.bad = [[sp.bos_id()] + sp.encode(p["bad"]) for p in pairs]
        self.first = []
        for g, b in zip(self.good, self.bad):
            k = 0
            while g[k] == b[k]:
                k += 1
            self.first.append(k)

    def scores(self, seqs, first, ablate):
        cfg, P = self.cfg, self.P
        S = max(len(x) for x in seqs)
        tokens = torch.tensor([x + [0] * (S - len(x)) for x in seqs], dtype=torch.int64)
        # The logits only where a pair's pieces are scored: forward_trace runs with a
        # one-column unembedding, and the scored rows are unembedded here.
        cheap = dict(P, **{"unembed.0": torch.zeros(cfg["d_model"], 1, dtype=torch.float64),
                           "unembed_b.0": torch.zeros(1, dtype=torch.float64)})
        with torch.no_grad():
            last = torch_model.forward_trace(cfg, cheap, tokens, ablate)[0][-1]
            h = last["block_out"] if cfg["block"] == "encoder" else last["out"]
            if cfg["norm"] == "pre":
                h = torch_model.layer_norm(h, P["lnf_gamma"], P["lnf_beta"], cfg["ln_eps"])
            rows = [(i, t) for i, x in enumerate(seqs) for t in range(first[i], len(x))]
            at = torch.tensor([i for i, _ in rows]), torch.tensor([t - 1 for _, t in rows])
            lp = torch.log_softmax(h[at] @ P["unembed.0"] + P["unembed_b.0"], dim=-1)
            picked = lp.gather(1, torch.tensor([seqs[i][t] for i, t in rows])[:, None])[:, 0]
        return torch.zeros(len(seqs), dtype=torch.float64).index_add_(0, at[0], picked)

    def accuracy(self, head=None):
        """Per phenomenon, the share right, with head (layer, head) zeroed if given."""
        ablate = None
        if head is not None:
            hd = self.cfg["d_model"] // self.cfg["num_heads"]
            ablate = {head[0]: {head[1]: torch.zeros(hd, dtype=torch.float64)}}
        right = []
        for at in range(0, len(self.pairs), 200):
            part = slice(at, at + 200)
            sg = self.scores(self.good[part], self.first[part], ablate)
            sb = self.scores(self.bad[part], self.first[part], ablate)
            right += (sg > sb).tolist()
        out = {}
        for p, ok in zip(self.pairs, right):
            r = out.setdefault(p["phenomenon"], [0, 0])
            r[0] += ok
            r[1] += 1
        return {k: (a / n, n) for k, (a, n) in out.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(ROOT, "assets", "models", "mhaviz-small.npz"))
    ap.add_argument("--tokenizer", default=os.path.join(ROOT, "assets", "models", "mhaviz-small.model"))
    ap.add_argument("--pairs", default=os.path.join(ROOT, "assets", "corpus", "pairs.jsonl"))
    ap.add_argument("--json", help="also write the table as JSON")
    args = ap.parse_args()
    with open(args.pairs, encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f if line.strip()]
    sc = Scorer(args.model, args.tokenizer, pairs)
    intact = sc.accuracy()
    L, H = sc.cfg["num_layers"], sc.cfg["num_heads"]
    heads = [(l, h) for l in range(L) for h in range(H)]
    table = {f"L{l}H{h}": sc.accuracy((l, h)) for l, h in heads}
    names = list(intact)
    print("phenomenon".ljust(34) + "pairs intact " + " ".join(f"{k:>6}" for k in table))
    doc = {"model": os.path.basename(args.model), "phenomena": []}
    for name in names:
        acc, n = intact[name]
        b = bound(n, acc)
        cells = []
        for k, row in table.items():
            a = row[name][0]
            mark = "*" if acc - a > b else " "
            mark = "c" if mark == "*" and abs(a - 0.5) <= bound(n) else mark
            cells.append(f"{a:5.3f}{mark}")
        print(f"{name:34}{n:5} {acc:6.3f} " + " ".join(cells))
        doc["phenomena"].append({"phenomenon": name, "pairs": n, "intact": acc, "bound": b,
                                 "chance_band": bound(n), "knocked_out": {k: row[name][0] for k, row in table.items()}})
    print("* below intact by more than the 99% binomial bound; c: and within that bound of chance (0.5)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(doc, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
