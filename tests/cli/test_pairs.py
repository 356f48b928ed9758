"""mhaviz pairs against a PyTorch rebuild of the shipped checkpoint (torch_model.py, float64):
the same accuracy per phenomenon, the same mean attention from the deciding position to the
cue, the same best head; the accuracies hold at the numbers docs/model-card.md states; bad
input exits 2 with a message.

Usage: test_pairs.py MHAVIZ (exit 77 without torch or sentencepiece)."""
import json
import os
import subprocess
import sys

from checks import check, main

try:
    import numpy as np
    import sentencepiece as spm
    import torch
except ImportError as e:
    print(f"skip: {e}")
    sys.exit(77)

import torch_model

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODEL = os.path.join(ROOT, "assets", "models", "mhaviz-small.npz")
TOKENIZER = os.path.join(ROOT, "assets", "models", "mhaviz-small.model")
PAIRS = os.path.join(ROOT, "assets", "corpus", "pairs.jsonl")

# The accuracies docs/model-card.md states for the shipped model (pairs right / pairs).
STATED = {
    "particle 을/를": 0.960,
    "particle 이/가": 0.955,
    "particle 은/는": 1.0,
    "particle 과/와": 1.0,
    "particle (으)로": 0.739,
    "honorific agreement": 0.530,
    "numeral classifier": 0.885,
    "agreement across an attractor": 0.490,
}


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def rebuild(pairs):
    """Per phenomenon: (right, n, mean weight per layer*head over pairs whose cue ends before
    the deciding position), computed in float64 torch with sentencepiece's pieces."""
    sp = spm.SentencePieceProcessor(model_file=TOKENIZER)
    cfg, params = torch_model.load_checkpoint(MODEL)
    P = torch_model.to_torch(params, torch.float64)
    bos = sp.bos_id()

    def batch_run(seqs):
        S = max(len(s) for s in seqs)
        tokens = torch.tensor([s + [0] * (S - len(s)) for s in seqs], dtype=torch.int64)
        keep = []
        with torch.no_grad():
            logits = torch_model.forward_logits(cfg, P, tokens, keep)[0]
        return torch.log_softmax(logits, dim=-1), keep

    good = [[bos] + sp.encode(p["good"]) for p in pairs]
    bad = [[bos] + sp.encode(p["bad"]) for p in pairs]
    lg, keep = batch_run(good)
    lb, _ = batch_run(bad)
    out = {}
    H, Lnum = cfg["num_heads"], cfg["num_layers"]
    for i, p in enumerate(pairs):
        g, b = good[i], bad[i]
        k = 0
        while g[k] == b[k]:
            k += 1
        sg = sum(float(lg[i, t - 1, g[t]]) for t in range(k, len(g)))
        sb = sum(float(lb[i, t - 1, b[t]]) for t in range(k, len(b)))
        decide = k - 1
        # the cue's pieces, by their text spans in " " + good
        pieces = sp.id_to_piece(g[1:])
        at = p["good"].find(p["cue"])
        start = len((" " + p["good"][:at]).encode("utf-8"))
        end = start + len(p["cue"].encode("utf-8"))
        pos, cue = 0, []
        for j, piece in enumerate(pieces):
            n = 1 if sp.is_byte(g[j + 1]) else len(piece.replace("\u2581", " ").encode("utf-8"))
            lo = pos + (1 if piece.startswith("\u2581") else 0)
            if lo < pos + n and lo < end and pos + n > start:
                cue.append(j + 1)
            pos += n
        r = out.setdefault(p["phenomenon"], {"right": 0, "n": 0, "w": np.zeros(Lnum * H), "m": 0})
        r["n"] += 1
        r["right"] += sg > sb
        if cue and cue[-1] <= decide:
            r["m"] += 1
            for l in range(Lnum):
                for h in range(H):
                    r["w"][l * H + h] += float(sum(keep[l][i, h, decide, j] for j in cue))
    for r in out.values():
        r["w"] /= max(1, r["m"])
    return out


def agreement(mhaviz, tmp):
    with open(PAIRS, encoding="utf-8") as f:
        pairs = [json.loads(l) for l in f]
    r = run([mhaviz, "pairs", "--model", "mhaviz-small", "--json"])
    check(r.returncode == 0, f"mhaviz pairs --model mhaviz-small --json runs ({r.stderr.strip()[:200]})")
    if r.returncode != 0:
        return
    got = {p["phenomenon"]: p for p in json.loads(r.stdout)["phenomena"]}
    ref = rebuild(pairs)
    check(set(got) == set(ref) == set(STATED), f"the same phenomena: {sorted(got)}")
    for name, t in ref.items():
        g = got.get(name)
        if g is None:
            continue
        acc = t["right"] / t["n"]
        check(g["pairs"] == t["n"] and abs(g["accuracy"] - acc) <= 1.5 / t["n"],
              f"{name}: mhaviz {g['accuracy']:.3f} vs torch {acc:.3f} over {t['n']} pairs")
        check(abs(acc - STATED[name]) <= 0.011, f"{name}: torch's accuracy {acc:.3f} holds at the stated "
              f"{STATED[name]:.3f}")
        w = np.array(g["weights"]).reshape(-1)
        check(g["attention_pairs"] == t["m"] and np.abs(w - t["w"]).max() <= 1e-4,
              f"{name}: mean cue weights equal torch's over {t['m']} pairs "
              f"(largest difference {np.abs(w - t['w']).max():.1e})")
        best = int(np.argmax(t["w"]))
        H = len(g["weights"][0])
        check((g["head"]["layer"], g["head"]["head"]) == (best // H, best % H),
              f"{name}: the best head L{best // H}H{best % H} is torch's")


def bad_input(mhaviz, tmp):
    def refused(args, words, what):
        r = run([mhaviz, "pairs", *args])
        ok = r.returncode == 2 and all(w in r.stderr for w in words) and "Traceback" not in r.stderr
        check(ok, f"{what}: exit 2 naming {words} (got {r.returncode}: {r.stderr.strip()[:160]})")

    missing = os.path.join(tmp, "nope.jsonl")
    refused(["--model", "mhaviz-small", "--pairs", missing], ["nope.jsonl"], "a missing pairs file")
    bad = os.path.join(tmp, "bad.jsonl")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{"phenomenon": "x", "good": "고양이가 쥐를 잡았다.", "bad": "고양이이 쥐를 잡았다.", "cue": "고양이", '
                '"prefix": "고양이"}\nnot json\n')
    refused(["--model", "mhaviz-small", "--pairs", bad], ["line 2", "JSON"], "a malformed line")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{"phenomenon": "x", "good": "고양이가 쥐를 잡았다.", "bad": "고양이가 쥐를 잡았다.", "cue": "고양이", '
                '"prefix": "고양이"}\n')
    refused(["--model", "mhaviz-small", "--pairs", bad], ["line 1", "same"], "good == bad")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{"phenomenon": "x", "good": "고양이가 쥐를 잡았다.", "bad": "고양이이 쥐를 잡았다.", "cue": "개", '
                '"prefix": "고양이"}\n')
    refused(["--model", "mhaviz-small", "--pairs", bad], ["line 1", "cue"], "a cue not in the sentence")
    with open(bad, "w", encoding="utf-8") as f:
        f.write('{"phenomenon": "x", "good": "고양이가 쥐를 잡았다.", "bad": "고양이이 쥐를 잡았다.", "cue": "잡았다", '
                '"prefix": "고양이"}\n')
    refused(["--model", "mhaviz-small", "--pairs", bad], ["line 1", "cue"], "a cue after the sentences differ")
    # a checkpoint of another task is not a language model
    task = os.path.join(tmp, "offsets.npz")
    r = run([mhaviz, "train", "--task", "offsets", "--steps", "1", "--d-model", "16", "--heads", "2",
             "--out", task])
    if r.returncode == 0:
        refused(["--model", task], ["language model"], "a model that is not a language model")
    refused(["--model", os.path.join(tmp, "none.npz")], ["none.npz"], "a missing model")
    refused([], ["--model"], "no --model")


if __name__ == "__main__":
    main([agreement, bad_input])
