#!/usr/bin/python3
"""The validation perplexity of mhaviz-small against n-gram baselines on the same pieces
and the same predictions.

The text is cut into pieces by the model's tokenizer with the SentencePiece Python
binding, BOS before every paragraph, as `mhaviz train --task text` does; validation
predicts ids[1 .. W*seq] of the held-out stream (W windows of seq pieces that do not
overlap, each seeing only its own window), so the baselines predict exactly those ids.

  unigram  add-k smoothed piece frequencies of the training text
  bigram   add-k smoothed P(next | previous piece); k chosen on the last 5 % of the
           training stream with counts from the rest, then recounted on all of it

With --model, the model's own perplexity on those windows is recomputed in float64
PyTorch from the checkpoint (tests/cli/torch_model.py), independently of mhaviz.

  /usr/bin/python3 scripts/lm_baseline.py --corpus assets/corpus \\
      --tokenizer assets/models/mhaviz-small.model --model assets/models/mhaviz-small.npz
"""
import argparse
import gzip
import json
import math
import os
import sys
import unicodedata

import numpy as np
import sentencepiece as spm


def encode(sp, path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [l for l in f.read().split("\n") if l]
    ids = []
    for piece_ids in sp.encode([unicodedata.normalize("NFC", l) for l in lines]):
        ids.append(sp.bos_id())
        ids.extend(piece_ids)
    return np.asarray(ids, dtype=np.int64)


def bigram_counts(ids, V):
    pairs = np.bincount(ids[:-1] * V + ids[1:], minlength=V * V).reshape(V, V).astype(np.float64)
    return pairs, pairs.sum(1)


def bigram_nll(pairs, rows, k, V, prev, nxt):
    p = (pairs[prev, nxt] + k) / (rows[prev] + k * V)
    return float(-np.log(p).mean())


def unigram_nll(train, k, V, nxt):
    c = np.bincount(train, minlength=V).astype(np.float64)
    return float(-np.log((c[nxt] + k) / (c.sum() + k * V)).mean())


def model_nll(model_path, valid, seq, windows):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cli"))
    import torch
    import torch_model as tm
    cfg, params = tm.load_checkpoint(model_path)
    P = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()}
    total, count = 0.0, 0
    with torch.no_grad():
        for first in range(0, windows, 64):
            w = range(first, min(windows, first + 64))
            tokens = torch.tensor(np.stack([valid[i * seq:i * seq + seq] for i in w]))
            targets = torch.tensor(np.stack([valid[i * seq + 1:i * seq + seq + 1] for i in w]))
            logits = tm.forward_logits(cfg, P, tokens)[0]
            total += float(torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                             targets.reshape(-1), reduction="sum"))
            count += targets.numel()
    return total / count


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tokenizer", required=True)
    ap.add_argument("--model", help="also recompute this checkpoint's validation perplexity in torch")
    ap.add_argument("--seq", type=int, help="window length (default: the model's max_seq, else 64)")
    ap.add_argument("--real-only", action="store_true",
                    help="count the baselines on train.txt alone, without the designed train-*.txt text")
    args = ap.parse_args()
    sp = spm.SentencePieceProcessor(model_file=args.tokenizer)
    V = sp.get_piece_size()
    real = encode(sp, os.path.join(args.corpus, "train.txt.gz"))
    # The designed text (train-*.txt[.gz], as mhaviz train --corpus reads it) is counted
    # too unless --real-only; k is chosen on the last 5 % of the real text either way.
    more = [] if args.real_only else [
        encode(sp, os.path.join(args.corpus, f)) for f in sorted(os.listdir(args.corpus))
        if f.startswith("train-") and (f.endswith(".txt") or f.endswith(".txt.gz"))]
    valid = encode(sp, os.path.join(args.corpus, "valid.txt.gz"))
    seq = args.seq
    if seq is None and args.model:
        seq = json.loads(bytes(np.load(args.model)["config"]).decode())["max_seq"]
    seq = seq or 64
    windows = (len(valid) - 1) // seq
    prev, nxt = valid[:windows * seq], valid[1:windows * seq + 1]

    cut = int(len(real) * 0.95)
    pairs, rows = bigram_counts(np.concatenate([real[:cut]] + more), V)
    ks = [0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0]
    dev = {k: bigram_nll(pairs, rows, k, V, real[cut:-1], real[cut + 1:]) for k in ks}
    train = np.concatenate([real] + more)
    k_best = min(dev, key=dev.get)
    pairs, rows = bigram_counts(train, V)
    result = {
        "train_pieces": int(len(train)), "designed_pieces": int(sum(len(m) for m in more)),
        "valid_pieces": int(len(valid)), "vocab": V, "seq": seq,
        "predicted": int(len(nxt)),
        "unigram_perplexity": math.exp(unigram_nll(train, 1.0, V, nxt)),
        "bigram_k": k_best, "bigram_dev_perplexity": {str(k): math.exp(v) for k, v in dev.items()},
        "bigram_perplexity": math.exp(bigram_nll(pairs, rows, k_best, V, prev, nxt)),
    }
    if args.model:
        result["model_perplexity_torch"] = math.exp(model_nll(args.model, valid, seq, windows))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
