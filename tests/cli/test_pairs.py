"""mhaviz pairs against a PyTorch rebuild of the shipped checkpoint (torch_model.py, float64):
the same accuracy per phenomenon, the same mean attention from the deciding position to the
cue, the same best head; the accuracies hold at the numbers docs/model-card.md states;
--ablate found knocks out each phenomenon's head and its control head (the same layer's head
with the least weight on the cue), the head and the accuracy without it are the shipped
labels file's, and every accuracy without them is torch's with that
head's context zeroed; --ablate all (the proof table) does so for every head, zero and
mean, and its statistics (the chance band, the McNemar p-values, the carriers) are
recomputed here from the counts with exact binomial sums; bad input exits 2 with a short
message, a deeply nested line or a huge sentence within bounded memory.

Usage: test_pairs.py MHAVIZ (exit 77 without torch or sentencepiece)."""
import json
import os
import subprocess
import sys

from checks import check, float32_tol, main

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

MODEL_CARD = os.path.join(ROOT, "docs", "model-card.md")


def stated_accuracies():
    """The accuracies docs/model-card.md states for the shipped model: its minimal-pairs
    table, "| phenomenon | pairs | **accuracy** | the first edition's |" (English
    agreement is named "agreement across an attractor" here, as `mhaviz pairs` names it)."""
    with open(MODEL_CARD, encoding="utf-8") as f:
        text = f.read()
    start = text.index("| phenomenon | pairs | mhaviz-small |")
    out = {}
    for line in text[start:].splitlines()[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        name = cells[0].replace("English agreement", "agreement")
        out[name] = float(cells[2].strip("*"))
    return out


STATED = stated_accuracies()
LABELS = os.path.join(ROOT, "assets", "models", "mhaviz-small.labels.json")


def stated_without_head():
    """Per phenomenon: its found head (the most weight on the cue) and the accuracy
    without it, as the shipped labels file measured them (cli.head_labels checks that
    file against a fresh measurement; this test checks its cells against torch)."""
    with open(LABELS, encoding="utf-8") as f:
        lab = json.load(f)
    best = {p["phenomenon"]: f"L{p['best']['layer']}H{p['best']['head']}" for p in lab["phenomena"]}
    cells = {r["phenomenon"]: {k["name"]: k["accuracy"] for k in r["knocked_out"]} for r in lab["table"]["rows"]}
    return {n: (h, cells[n][h]) for n, h in best.items()}


# Under a sanitizer (scripts/sanitize.sh) one `pairs --ablate` pass takes minutes (17
# knock-outs of 1,574 pairs at -O1 with ASan); its numbers are checked in the normal
# build, and the sanitizer still runs every other case here. The timeout only catches
# a hang.
SANITIZED = bool(os.environ.get("MHAVIZ_SANITIZED"))


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=1200)


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
    cfg = torch_model.load_checkpoint(MODEL)[0]
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
        # float32 weights against float64 ones, relative to their scale (checks.float32_tol);
        # every layer's d_model-long projections are the longest sums on the way.
        tol = float32_tol(t["w"], cfg["num_layers"] * cfg["d_model"])
        check(g["attention_pairs"] == t["m"] and np.abs(w - t["w"]).max() <= tol,
              f"{name}: mean cue weights equal torch's over {t['m']} pairs "
              f"(largest difference {np.abs(w - t['w']).max():.1e}, tolerance {tol:.1e})")
        best = int(np.argmax(t["w"]))
        H = len(g["weights"][0])
        check((g["head"]["layer"], g["head"]["head"]) == (best // H, best % H),
              f"{name}: the best head L{best // H}H{best % H} is torch's")


def torch_accuracy(pairs, layer, head, value=None, _cache={}):
    """Per phenomenon, the share of pairs whose good sentence wins with head `head` of
    layer `layer` zeroed (or replaced by `value`, a mean context) before W_O reads it, in
    float64 torch (256 pairs at a time)."""
    if not _cache:
        sp = spm.SentencePieceProcessor(model_file=TOKENIZER)
        cfg, params = torch_model.load_checkpoint(MODEL)
        _cache.update(cfg=cfg, P={k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()})
        good = [[sp.bos_id()] + sp.encode(p["good"]) for p in pairs]
        bad = [[sp.bos_id()] + sp.encode(p["bad"]) for p in pairs]
        first = []  # the first piece where the two differ
        for g, b in zip(good, bad):
            k = 0
            while g[k] == b[k]:
                k += 1
            first.append(k)
        _cache.update(good=good, bad=bad, first=first)
    cfg, P = _cache["cfg"], _cache["P"]
    if value is None:
        value = torch.zeros(cfg["d_model"] // cfg["num_heads"], dtype=torch.float64)
    ablate = {layer: {head: torch.as_tensor(value, dtype=torch.float64)}}

    # The logits only where a pair's pieces are scored (the rest of a (pairs, seq, 4000)
    # float64 product would be most of the test's time): the last layer's output, the
    # final LayerNorm, the unembedding, as forward_trace would apply them.
    cheap = dict(P, **{"unembed.0": torch.zeros(cfg["d_model"], 1, dtype=torch.float64),
                       "unembed_b.0": torch.zeros(1, dtype=torch.float64)})

    def scores(seqs, first):
        """Summed log-probabilities of each sequence's pieces from `first` on."""
        S = max(len(x) for x in seqs)
        tokens = torch.tensor([x + [0] * (S - len(x)) for x in seqs], dtype=torch.int64)
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

    right = []
    for at in range(0, len(pairs), 256):
        part = slice(at, at + 256)
        sg = scores(_cache["good"][part], _cache["first"][part])
        sb = scores(_cache["bad"][part], _cache["first"][part])
        right += (sg > sb).tolist()
    out = {}
    for p, ok in zip(pairs, right):
        r = out.setdefault(p["phenomenon"], [0, 0])
        r[0] += ok
        r[1] += 1
    return {name: n_right / n for name, (n_right, n) in out.items()}


def knockouts(mhaviz, tmp):
    if SANITIZED:
        print("skip  pairs --ablate under a sanitizer (checked in the normal build)")
        return
    with open(PAIRS, encoding="utf-8") as f:
        pairs = [json.loads(l) for l in f]
    r = run([mhaviz, "pairs", "--model", "mhaviz-small", "--ablate", "found", "--json"])
    check(r.returncode == 0, f"mhaviz pairs --ablate found --json runs ({r.stderr.strip()[:200]})")
    if r.returncode != 0:
        return
    doc = json.loads(r.stdout)
    names = [p["phenomenon"] for p in doc["phenomena"]]
    count = {n: sum(p["phenomenon"] == n for p in pairs) for n in names}
    runs = {x["name"]: x for x in doc["knockouts"]}
    for p in doc["phenomena"]:
        k, name, w = p["knockout"], p["phenomenon"], np.array(p["weights"])
        check(k["head"]["name"] == f"L{p['head']['layer']}H{p['head']['head']}",
              f"{name}: the head knocked out is the one found, {k['head']['name']}")
        # The control: the found head's layer's head with the least weight on the cue.
        row = w[p["head"]["layer"]].copy()
        row[p["head"]["head"]] = np.inf
        want = f"L{p['head']['layer']}H{int(np.argmin(row))}"
        check(k["control"]["name"] == want, f"{name}: the control head is {want} (got {k['control']['name']})")
        i = names.index(name)
        check(k["accuracy_without_head"] == runs[k["head"]["name"]]["accuracy"][i] and
              k["accuracy_without_control"] == runs[k["control"]["name"]]["accuracy"][i],
              f"{name}: the per-phenomenon knock-outs are the table's")
        head, stated = stated_without_head()[name]
        check(k["head"]["name"] == head and abs(k["accuracy_without_head"] - stated) <= 1.5 / count[name],
              f"{name}: without {head} the accuracy {k['accuracy_without_head']:.3f} holds at the stated {stated:.3f}")
    moved = False
    for x in doc["knockouts"]:
        ref = torch_accuracy(pairs, x["layer"], x["head"])
        diff = max(abs(a - ref[n]) * count[n] for a, n in zip(x["accuracy"], names))
        # One pair may flip on a near-tie between float32 and float64.
        check(diff <= 1.01, f"without {x['name']}: every phenomenon's accuracy is torch's "
              f"(largest difference {diff:.0f} pairs)")
        moved |= any(abs(a - p["accuracy"]) > 0.05 for a, p in zip(x["accuracy"], doc["phenomena"]))
    check(moved, "some knock-out moves some accuracy by more than 0.05: the comparison tests something")


def bad_input(mhaviz, tmp):
    def refused(args, words, what):
        r = run([mhaviz, "pairs", *args])
        # No hint may name a flag pairs does not have (--sentence, --tokens).
        ok = (r.returncode == 2 and all(w in r.stderr for w in words) and "Traceback" not in r.stderr
              and "--sentence" not in r.stderr and "--tokens" not in r.stderr)
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
    refused(["--model", "mhaviz-small", "--mode", "mean"], ["--ablate"], "--mode without --ablate")


def peak_mib(args):
    """Runs mhaviz under /usr/bin/time; its exit status, stderr and peak memory (MiB)."""
    out = subprocess.run(["/usr/bin/time", "-f", "peak %M KB", *args], capture_output=True, text=True, timeout=600)
    lines = out.stderr.strip().splitlines()
    peak = int(lines[-1].split()[1]) / 1024 if lines and lines[-1].startswith("peak") else float("inf")
    return out.returncode, "\n".join(lines[:-1]), peak


def hostile_files(mhaviz, tmp):
    """The pairs file read as a hostile user would write it: each refused with exit 2, a
    message of a few lines that quotes at most a short excerpt, and memory bounded."""
    def refused(text, words, what, budget_mib=400):
        path = os.path.join(tmp, "hostile.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        code, err, peak = peak_mib([mhaviz, "pairs", "--model", "mhaviz-small", "--pairs", path])
        ok = code == 2 and all(w in err for w in words) and len(err) < 1500 and peak < budget_mib
        check(ok, f"{what}: exit 2 naming {words}, {len(err)} bytes of message, peak {peak:.0f} MiB "
              f"(budget {budget_mib}; got {code}: {err.strip()[:200]})")

    # 60 MB of '[' took 2.2 GiB to refuse with an unbounded parse.
    refused("[" * (60 << 20) + "\n", ["line 1", "bytes", "..."], "a 60 MB line of nested brackets", budget_mib=160)
    # Under the line bound (five fields of 1 MiB), the nesting is refused as it opens.
    refused("[" * (4 << 20) + "\n", ["line 1", "nests", "1 level deep"], "a 4 MB line of nested brackets",
            budget_mib=160)
    pair = '{{"phenomenon": "x", "good": "{}", "bad": "고양이이 쥐를 잡았다.", "cue": "고양이", "prefix": "고"}}\n'
    # 30 MB: refused before it is copied, parsed or tokenised (it took 1.9 GiB, then 463 MiB).
    refused(pair.format("고양이가 " * (3 << 20)), ["line 1", "bytes", "..."], "a 30 MB sentence", budget_mib=160)
    # Under the parse bound but beyond any tokenisation that fits the context.
    refused(pair.format("고양이가 " * 30000), ["line 1", "context", "..."], "a 390 KB sentence, over the context")
    r = run([mhaviz, "pairs", "--model", "mhaviz-small", "--ablate", "L9H9"])
    check(r.returncode == 2 and "--sentence" not in r.stderr and "L0H0" in r.stderr,
          f"--ablate L9H9 names the model's heads, not a --sentence flag pairs does not have ({r.stderr.strip()[:200]})")
    r = run([mhaviz, "pairs", "--model", "mhaviz-small", "stray"])
    check(r.returncode == 2 and "--sentence" not in r.stderr and "stray" in r.stderr,
          f"a stray word is named without a --sentence hint ({r.stderr.strip()[:200]})")


if __name__ == "__main__":
    main([agreement, knockouts, bad_input, hostile_files])
