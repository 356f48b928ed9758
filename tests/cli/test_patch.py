"""mhaviz patch against a PyTorch rebuild of the shipped checkpoint (torch_model.py, float64):
the clean and corrupt log-probabilities of the target, and for every head the patched one
(every position together, and each position alone) and what it recovers, within 1e-4 of
the log-probabilities' scale; every layer's heads together too. The same comparison with
the patch put at the wrong site (the next head, the next position) must fail, so the
check can tell sites apart. Bad input exits 2 with a message naming the problem and
prints nothing on standard output.

Usage: test_patch.py MHAVIZ (exit 77 without torch or sentencepiece)."""
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
# The honorific subject against a plain one of as many pieces (▁할머니께서, ▁형이): is the
# honorific verb's first piece (▁주무, of 주무신다) carried from the subject to the verb?
CLEAN, CORRUPT, TARGET = "할머니께서 방에서", "형이 방에서", "주무"


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


class Rebuild:
    """The checkpoint in float64 torch; patch(heads_positions) runs the corrupt ids with
    each (layer, head, positions) context taken from the clean run."""

    def __init__(self, clean_ids, corrupt_ids):
        self.cfg, params = torch_model.load_checkpoint(MODEL)
        self.P = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()}
        self.clean_ids = torch.tensor([clean_ids])
        self.corrupt_ids = torch.tensor([corrupt_ids])
        with torch.no_grad():
            self.clean_layers, self.clean_logits = torch_model.forward_trace(self.cfg, self.P, self.clean_ids)
            self.corrupt_layers, self.corrupt_logits = torch_model.forward_trace(self.cfg, self.P, self.corrupt_ids)

    def logp(self, logits, target):
        return float(torch.log_softmax(logits[0, -1], dim=-1)[target])

    def patch(self, sites, target):
        """sites: [(layer, head, positions or None)]."""
        ablate = {}
        for layer, head, positions in sites:
            value = self.clean_layers[layer]["context"][0, head].clone()  # (S, hd)
            if positions is not None:
                mixed = self.corrupt_layers[layer]["context"][0, head].clone()
                mixed[positions] = value[positions]
                value = mixed
            ablate.setdefault(layer, {})[head] = value
        with torch.no_grad():
            _, logits = torch_model.forward_trace(self.cfg, self.P, self.corrupt_ids, ablate)
        return self.logp(logits, target)


def compare(doc, ref, shift_head=0, shift_position=0):
    """The largest difference between mhaviz's and torch's log-probabilities, relative to
    their scale, with torch's patch moved by `shift_head` heads / `shift_position`
    positions (0, 0: the same site)."""
    H = ref.cfg["num_heads"]
    target = doc["target"]["id"]
    scale = max(1.0, abs(doc["clean"]["logp"]), abs(doc["corrupt"]["logp"]))
    worst = 0.0
    for h in doc["heads"]:
        layer, head = h["layer"], (h["head"] + shift_head) % H
        worst = max(worst, abs(h["logp"] - ref.patch([(layer, head, None)], target)) / scale)
        S = len(h["positions_logp"])
        for i, got in enumerate(h["positions_logp"]):
            j = (i + shift_position) % S
            worst = max(worst, abs(got - ref.patch([(layer, head, [j])], target)) / scale)
    return worst


def agreement(mhaviz, tmp):
    r = run([mhaviz, "patch", "--model", "mhaviz-small", "--clean", CLEAN, "--corrupt", CORRUPT, "--target", TARGET,
             "--json"])
    check(r.returncode == 0, f"patch --json runs ({r.stderr.strip()[:300]})")
    if r.returncode != 0:
        return
    doc = json.loads(r.stdout)
    sp = spm.SentencePieceProcessor(model_file=TOKENIZER)
    clean = [sp.bos_id()] + sp.encode(CLEAN)
    corrupt = [sp.bos_id()] + sp.encode(CORRUPT)
    check(doc["clean"]["ids"] == clean and doc["corrupt"]["ids"] == corrupt,
          f"the pieces are sentencepiece's ({len(clean)} each)")
    ref = Rebuild(clean, corrupt)
    target = doc["target"]["id"]
    check(not doc["target"]["default"] and doc["target"]["piece"] == "\u2581" + TARGET and
          target == sp.piece_to_id("\u2581" + TARGET), f"--target {TARGET} is the piece ▁{TARGET}")
    lc, lx = ref.logp(ref.clean_logits, target), ref.logp(ref.corrupt_logits, target)
    scale = max(1.0, abs(lc), abs(lx))
    check(abs(doc["clean"]["logp"] - lc) <= 1e-4 * scale and abs(doc["corrupt"]["logp"] - lx) <= 1e-4 * scale,
          f"clean {doc['clean']['logp']:.5f} / corrupt {doc['corrupt']['logp']:.5f} are torch's "
          f"{lc:.5f} / {lx:.5f}")
    H, L = ref.cfg["num_heads"], ref.cfg["num_layers"]
    check(len(doc["heads"]) == L * H and all(len(h["positions"]) == len(clean) for h in doc["heads"]),
          f"{L * H} heads, each with {len(clean)} positions")
    worst = compare(doc, ref)
    check(worst <= 1e-4, f"every patched log-probability is torch's (worst {worst:.1e} of the scale; bound 1e-4)")
    rec_worst = 0.0
    for h in doc["heads"]:
        want = (h["logp"] - lx) / (lc - lx)
        rec_worst = max(rec_worst, abs(h["recovered"] - want))
    check(rec_worst <= 1e-4 * scale / abs(lc - lx) + 1e-9,
          f"recovered = (patched - corrupt) / (clean - corrupt) (worst {rec_worst:.1e})")
    for l in doc["layers"]:
        want = ref.patch([(l["layer"], h, None) for h in range(H)], target)
        check(abs(l["logp"] - want) <= 1e-4 * scale, f"layer {l['layer']}'s heads together: {l['logp']:.5f} "
              f"vs torch {want:.5f}")
    # The check tells sites apart: torch's patch one head or one position over differs.
    wrong_head, wrong_position = compare(doc, ref, shift_head=1), compare(doc, ref, shift_position=1)
    check(wrong_head > 1e-3 and wrong_position > 1e-3,
          f"the same check fails with the patch at the wrong head ({wrong_head:.1e}) or position "
          f"({wrong_position:.1e})")
    moved = max(abs(h["recovered"]) for h in doc["heads"])
    check(moved > 0.05, f"some head recovers more than 0.05 of the difference ({moved:.2f}): the test tests something")

    r = run([mhaviz, "patch", "--model", "mhaviz-small", "--clean", CLEAN, "--corrupt", CORRUPT, "--layer-only",
             "--json", "--target", doc["target"]["piece"]])
    lo = json.loads(r.stdout) if r.returncode == 0 else {}
    check(r.returncode == 0 and all("positions" not in h for h in lo.get("heads", [{}]))
          and [h["logp"] for h in lo["heads"]] == [h["logp"] for h in doc["heads"]],
          "--layer-only gives the same grid without positions; the piece spelled with its ▁ is the same target")
    # Without --target: the clean run's likeliest next piece.
    r = run([mhaviz, "patch", "--model", "mhaviz-small", "--clean", CLEAN, "--corrupt", CORRUPT, "--layer-only",
             "--json"])
    d = json.loads(r.stdout) if r.returncode == 0 else {"target": {}}
    want = int(torch.argmax(ref.clean_logits[0, -1]))
    check(d["target"].get("default") and d["target"].get("id") == want,
          f"the default target is the clean run's likeliest next piece ({d['target'].get('piece')})")
    r = run([mhaviz, "patch", "--model", "mhaviz-small", "--clean", CLEAN, "--corrupt", CORRUPT])
    check(r.returncode == 0 and "layer x head" in r.stdout and "head x position" in r.stdout,
          "the table prints both grids")


def bad_input(mhaviz, tmp):
    def refused(args, words, what, code=2):
        r = run([mhaviz, "patch", *args])
        # No hint may name a flag patch does not have (--sentence, --tokens), but for
        # another command's, spelled out with it (mhaviz trace ... --sentence S).
        own = r.stderr.replace("mhaviz trace --model M --sentence S", "")
        ok = (r.returncode == code and all(w in r.stderr for w in words) and r.stdout == ""
              and "Traceback" not in r.stderr and len(r.stderr) < 2000
              and "--sentence" not in own and "--tokens" not in own)
        check(ok, f"{what}: exit {code} naming {words}, nothing on stdout (got {r.returncode}: "
              f"{r.stderr.strip()[:240]})")

    m = ["--model", "mhaviz-small"]
    refused(m + ["--clean", CLEAN, "--corrupt", "아이가 방에서"], ["--clean is", "--corrupt", "[▁아이]", "same number"],
            "different piece counts, both tokenisations named")
    refused(m + ["--clean", "", "--corrupt", CORRUPT], ["--clean", "empty"], "an empty clean sentence")
    refused(m + ["--clean", CLEAN, "--corrupt", "   "], ["--corrupt", "empty"], "a blank corrupt sentence")
    refused(m + ["--clean", CLEAN, "--corrupt", CORRUPT, "--target", "qqqzzz"],
            ["qqqzzz", "not a piece", "likeliest"], "a target not in the vocabulary")
    refused(m + ["--clean", CLEAN, "--corrupt", CLEAN], ["same log-probability"], "two identical sentences")
    refused(m + ["--clean", "가" * 4000, "--corrupt", CORRUPT], ["--clean", "context"], "a sentence over the context")
    refused(m + ["--clean", CLEAN], ["--corrupt"], "no corrupt sentence")
    refused(["--clean", CLEAN, "--corrupt", CORRUPT], ["--model"], "no model")
    refused(m + ["--clean", CLEAN, "--corrupt", CORRUPT, "stray"], ["stray", "no bare words"], "a stray word")
    task = os.path.join(tmp, "offsets.npz")
    r = run([mhaviz, "train", "--task", "offsets", "--steps", "1", "--d-model", "16", "--heads", "2", "--out", task])
    if r.returncode == 0:
        refused(["--model", task, "--clean", CLEAN, "--corrupt", CORRUPT], ["language model"], "a task model")
    refused(["--model", os.path.join(tmp, "none.npz"), "--clean", CLEAN, "--corrupt", CORRUPT], ["none.npz"],
            "a missing model")


if __name__ == "__main__":
    main([agreement, bad_input])
