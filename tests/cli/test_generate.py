"""`mhaviz generate` from outside, on the shipped language model (mhaviz-small):

- a float64 PyTorch rebuild of the checkpoint (torch_model.py, no code shared with
  mhaviz) continues 5 English and 5 Korean prompts greedily with the same pieces
  (a step where torch's two best logits are within twice float32's bound of each other,
  checks.float32_tol, may go either way and is reported, not failed), and the prompt's
  pieces are SentencePiece's;
- the cached steps' logits equal the full recomputation's (max_logit_diff <= 1e-5; they
  are equal bit for bit by design);
  greedy text is the same with --no-cache; the same seed draws the same text;
- the JSON's cache shape and bytes (2 x layers x kv_heads x head_dim x n x 4), the
  per-step FLOPs, the context limit with its notice, the empty prompt (from <s>), a
  prompt longer than the context (cut, with a notice);
- --no-repeat N (n-gram blocking): no run of N pieces ending in a new piece occurred
  before (the prompt may repeat itself), the
  pieces are torch's greedy choice among those that do not repeat one, and the steps
  say how many pieces each blocked;
- greedy continuations of 10 Korean and 10 English prompts stay in the prompt's
  language within their paragraph (at least 90 % of the letters of its first 20 pieces
  before <s>, in the prompt's script);
- bad input: exit 2, a teaching message, nothing on standard output.

Pins properties, never the model's text, so a retrained mhaviz-small passes too.
usage: test_generate.py PATH/TO/mhaviz   (exit 77 = skipped: no torch)
"""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover
    print("python3-torch is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_model as tm  # noqa: E402
import checks  # noqa: E402
from checks import check  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CKPT = os.path.join(ROOT, "assets", "models", "mhaviz-small.npz")
TOKENIZER = os.path.join(ROOT, "assets", "models", "mhaviz-small.model")
ENGLISH = ["The cat", "Once upon a time", "The city is", "In the morning, she", "He said that the"]
KOREAN = ["고양이가", "오늘은 날씨가", "우리는 학교에서", "서울은 한국의", "그는 책을"]
NEW = 20


def run(args, timeout=300):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def generate(mhaviz, *flags):
    r = run([mhaviz, "generate", "--model", CKPT, "--json"] + list(flags))
    if r.returncode != 0:
        raise AssertionError(f"generate {flags} failed ({r.returncode}): {r.stderr}")
    return json.loads(r.stdout), r.stderr


def torch_greedy(cfg, P, ids, steps, context):
    """torch's own greedy continuation; also, per step, the gap between its best two logits
    as a fraction of what float32 rounding may move a gap: twice the logits' float32_tol
    (d_model terms, as tests/cli/test_lm.py holds mhaviz's logits to torch's)."""
    ids = list(ids)
    out, gaps = [], []
    with torch.no_grad():
        for _ in range(steps):
            if len(ids) >= context:
                break
            logits = tm.forward_logits(cfg, P, torch.tensor([ids], dtype=torch.int64))[0][0, -1]
            top = torch.topk(logits, 2)
            out.append(int(top.indices[0]))
            tie = 2 * checks.float32_tol(logits.numpy(), cfg["d_model"])
            gaps.append(float(top.values[0] - top.values[1]) / tie)
            ids.append(out[-1])
    return out, gaps


def check_torch(mhaviz, tmp):
    cfg, params = tm.load_checkpoint(CKPT)
    P = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()}
    try:
        import sentencepiece as spm
        sp = spm.SentencePieceProcessor(model_file=TOKENIZER)
    except ImportError:  # pragma: no cover
        sp = None
        print("python3-sentencepiece is not installed: the prompt's pieces are not checked against it")
    for prompt in ENGLISH + KOREAN:
        j, _ = generate(mhaviz, "--prompt", prompt, "--tokens", str(NEW))
        if sp is not None:
            check(j["prompt_ids"] == [cfg["task"]["bos"]] + sp.encode(prompt),
                  f"{prompt!r}: the prompt's pieces are SentencePiece's, <s> first")
        ours = j["ids"]
        theirs, gaps = torch_greedy(cfg, P, j["prompt_ids"], NEW, cfg["max_seq"])
        same = ours == theirs
        if not same:
            k = next(i for i in range(min(len(ours), len(theirs))) if ours[i] != theirs[i])
            if gaps[k] < 1:
                print(f"      {prompt!r}: a near-tie at new piece {k} (torch's top two logits {gaps[k]:.2f} of the "
                      "rounding bound apart); "
                      "the continuations part there")
                same = ours[:k] == theirs[:k]
        check(same and len(ours) == NEW,
              f"{prompt!r}: torch's greedy continuation is mhaviz's ({len(ours)} pieces: {j['generated_text']!r})")
        # The decode step runs the full pass's kernels in its order: equal bit for bit by
        # design (tests/core/test_decode.cpp pins it); 1e-5 is the specified bound.
        check(j["max_logit_diff"] is not None and j["max_logit_diff"] <= 1e-5,
              f"{prompt!r}: cached logits equal the full recomputation's (max diff {j['max_logit_diff']})")


def check_cache_and_sampling(mhaviz, tmp):
    cfg, _ = tm.load_checkpoint(CKPT)
    hd = cfg["d_model"] // cfg["num_heads"]
    j, _ = generate(mhaviz, "--prompt", "고양이가", "--tokens", "12")
    c = j["cache"]
    n = len(j["prompt_ids"]) + len(j["ids"]) - 1
    check((c["layers"], c["kv_heads"], c["n"], c["head_dim"]) == (cfg["num_layers"], cfg["num_kv_heads"], n, hd),
          f"the cache's shape is (layers, kv_heads, n, head_dim) = {(c['layers'], c['kv_heads'], c['n'], c['head_dim'])}")
    check(c["bytes"] == 2 * cfg["num_layers"] * cfg["num_kv_heads"] * hd * n * 4,
          f"the cache's bytes are 2 x layers x kv_heads x head_dim x n x 4 = {c['bytes']}")
    steps = j["steps"]
    check([s["position"] for s in steps] == list(range(len(j["prompt_ids"]) + 1, n + 2)),
          "one step per new piece, at positions prompt + 1 ...")
    check(all(s["flops_full"] >= s["flops_cached"] > 0 for s in steps) and
          steps[-1]["flops_full"] / steps[-1]["flops_cached"] > 5,
          f"without the cache a step costs more FLOPs (last step {steps[-1]['flops_full'] / steps[-1]['flops_cached']:.1f}x)")
    check(all(s["ms_cached"] is not None and s["ms_full"] > 0 for s in steps), "every step is timed both ways")
    check([s["id"] for s in steps] == j["ids"], "the steps' pieces are the generated ones")

    nc, _ = generate(mhaviz, "--prompt", "고양이가", "--tokens", "12", "--no-cache")
    check(nc["ids"] == j["ids"] and nc["text"] == j["text"], "greedy: the same pieces with --no-cache")
    check(nc["cache_used"] is False and all(s["ms_cached"] is None for s in nc["steps"]),
          "--no-cache runs no cached step")

    draw = ["--prompt", "The cat", "--tokens", "30", "--temperature", "1.2", "--top-k", "50"]
    a, _ = generate(mhaviz, *draw, "--seed", "5")
    b, _ = generate(mhaviz, *draw, "--seed", "5")
    other, _ = generate(mhaviz, *draw, "--seed", "6")
    nc, _ = generate(mhaviz, *draw, "--seed", "5", "--no-cache")
    check(a["ids"] == b["ids"], "the same seed draws the same text")
    check(nc["ids"] == a["ids"], "... with or without the cache")
    check(other["ids"] != a["ids"], "another seed draws another text")
    check(a["sampling"] == {"greedy": False, "temperature": 1.2, "top_k": 50, "seed": 5, "no_repeat_ngram": 0},
          "the JSON names the sampling")

    # Text mode: the streamed text, the table, the cache line.
    r = run([mhaviz, "generate", "--model", CKPT, "--prompt", "고양이가", "--tokens", "12"])
    check(r.returncode == 0 and r.stdout.startswith(j["text"] + "\n"), "the text streams to standard output first")
    check("cached ms" in r.stdout and f"= {c['bytes']:,} bytes" in r.stdout, "then the per-step table and the cache's bytes")


def blocked(ids, n):
    """The pieces that would end a run of n pieces already in ids (a plain oracle)."""
    tail = ids[len(ids) - (n - 1):] if n > 1 else []
    return {ids[i + n - 1] for i in range(len(ids) - n + 1) if ids[i:i + n - 1] == tail}


def check_no_repeat(mhaviz, tmp):
    cfg, params = tm.load_checkpoint(CKPT)
    P = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()}
    for prompt, n in (("할머니께서", 3), ("The cat", 4), ("고양이가 쥐를 잡았다. 고양이가", 2)):
        j, _ = generate(mhaviz, "--prompt", prompt, "--tokens", "40", "--no-repeat", str(n))
        ids = j["prompt_ids"] + j["ids"]
        # The prompt may repeat itself (the third one does); no run that ends in a new piece may.
        runs = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
        new = [i for i in range(len(ids) - n + 1) if i + n > len(j["prompt_ids"])]
        check(all(runs[i] not in runs[:i] for i in new), f"{prompt!r} --no-repeat {n}: no run of {n} pieces that "
              f"ends in a new piece occurred before ({j['generated_text']!r})")
        check(j["sampling"]["no_repeat_ngram"] == n and all(s["blocked"] >= 0 for s in j["steps"]) and
              any(s["blocked"] > 0 for s in j["steps"]), f"{prompt!r}: the steps say what they blocked "
              f"({[s['blocked'] for s in j['steps']]})")
        # torch's greedy choice among the pieces that repeat no run of n.
        seq, ok = list(j["prompt_ids"]), True
        with torch.no_grad():
            for step, got in enumerate(j["ids"]):
                logits = tm.forward_logits(cfg, P, torch.tensor([seq]))[0][0, -1].clone()
                out = blocked(seq, n)
                for b in out:
                    logits[b] = -float("inf")
                top2 = torch.topk(logits, 2).values
                ok &= got == int(torch.argmax(logits)) or float(top2[0] - top2[1]) < TIE
                ok &= j["steps"][step]["blocked"] == len(out)
                seq.append(got)
        check(ok, f"{prompt!r} --no-repeat {n}: each piece is torch's greedy choice among those not blocked, and "
              "each step blocked the oracle's count")
    plain, _ = generate(mhaviz, "--prompt", "할머니께서", "--tokens", "40")
    check(all(s["blocked"] == 0 for s in plain["steps"]) and plain["sampling"]["no_repeat_ngram"] == 0,
          "without --no-repeat nothing is blocked")


def check_language(mhaviz, tmp):
    """Within its paragraph (up to the <s> the model writes to end it) a continuation
    stays in the prompt's language. After <s> the model starts a new paragraph, in either
    language as its training stream does; docs/model-card.md counts those switches."""
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import generation_report as G
    lengths = []
    for prompt in G.PROMPTS_KO + G.PROMPTS_EN:
        j, _ = generate(mhaviz, "--prompt", prompt, "--tokens", "24")
        pieces = j["pieces"]
        para = pieces[:pieces.index("<s>")] if "<s>" in pieces else pieces
        text = "".join(p for p in para[:20] if not G.CONTROL.match(p)).replace("\u2581", " ")
        share = G.script_share(text, bool(G.HANGUL.search(prompt)))
        lengths.append(len(para))
        check(share >= 0.9, f"{prompt!r}: the new pieces of its paragraph stay in the prompt's language "
              f"({share:.2f} of the letters of {len(para)} pieces: {text!r})")
    # A model that ended every paragraph at once would pass the above without writing.
    check(sum(n >= 4 for n in lengths) >= 15, f"most continuations write a sentence before <s>: {lengths}")


def check_stop_at_s(mhaviz, tmp):
    """--stop-at-s ends the text at the first <s> the model writes (the same pieces as
    without it, up to and with that <s>), says so in a notice, and changes nothing when
    no <s> comes."""
    stopped = 0
    for prompt in ("고양이가", "할머니께서", "The cat", "옛날에"):
        full, _ = generate(mhaviz, "--prompt", prompt, "--tokens", "40", "--no-repeat", "4")
        cut, _ = generate(mhaviz, "--prompt", prompt, "--tokens", "40", "--no-repeat", "4", "--stop-at-s")
        ids = full["ids"]
        if "<s>" in full["pieces"][:-1]:
            end = full["pieces"].index("<s>") + 1
            stopped += 1
            check(cut["ids"] == ids[:end], f"{prompt!r}: --stop-at-s keeps the pieces up to <s>: {cut['pieces']} vs "
                  f"{full['pieces'][:end]}")
            check(any("stopped at <s>" in n for n in cut["notices"]), f"{prompt!r}: a notice says why: {cut['notices']}")
        else:
            check(cut["ids"] == ids, f"{prompt!r}: no <s>, the same text")
    check(stopped >= 2, f"the shipped model ends a paragraph with <s> within 40 pieces for most prompts ({stopped})")


def check_limits(mhaviz, tmp):
    cfg, _ = tm.load_checkpoint(CKPT)
    context = cfg["max_seq"]
    j, err = generate(mhaviz, "--prompt", "The cat", "--tokens", "200")
    check(len(j["prompt_ids"]) + len(j["ids"]) == context and "context" in err and len(j["notices"]) == 1,
          f"generation stops at the context ({context} pieces) with a notice")
    check(j["cache"]["n"] == context - 1, "the cache then holds every piece read")
    j, err = generate(mhaviz, "--prompt", "", "--tokens", "5")
    check(j["prompt_ids"] == [cfg["task"]["bos"]] and len(j["ids"]) == 5 and err == "",
          "an empty prompt generates from <s>")
    j, _ = generate(mhaviz, "--tokens", "3")
    check(j["prompt_ids"] == [cfg["task"]["bos"]] and len(j["ids"]) == 3, "no --prompt: from <s>")
    long = " ".join(["the cat sat on the mat"] * 40)
    j, err = generate(mhaviz, "--prompt", long, "--tokens", "5")
    check(len(j["prompt_ids"]) == context - 1 and len(j["ids"]) == 1 and "first " + str(context - 1) in err,
          "a prompt longer than the context is cut (its start kept) with a notice")
    r = run([mhaviz, "generate", "--model", "mhaviz-small", "--tokens", "2"])
    check(r.returncode == 0, "--model mhaviz-small names the shipped model")
    odd = os.path.join(tmp, "m\udcff.npz")  # a file name that is not UTF-8
    shutil.copy(CKPT, odd)
    r = run([mhaviz, "generate", "--model", odd, "--tokens", "2", "--json"])
    check(r.returncode == 0 and json.loads(r.stdout)["model"].endswith("m\ufffd.npz"),
          "a model path that is not UTF-8 is written as valid JSON (U+FFFD for the bad byte)")


def check_bad_input(mhaviz, tmp):
    cfg, _ = tm.load_checkpoint(CKPT)
    offsets = os.path.join(tmp, "offsets.npz")
    r = run([mhaviz, "train", "--task", "offsets", "--steps", "0", "--out", offsets])
    check(r.returncode == 0, "an offsets checkpoint to refuse")
    cases = [
        (["--tokens", "0"], ["--tokens", "1 to"]),
        (["--tokens", "-3"], ["--tokens", "1 to"]),
        (["--tokens", "99999999999"], ["--tokens"]),
        (["--tokens", "5000"], ["--tokens", "1 to 1024"]),
        (["--tokens", "ten"], ["--tokens"]),
        (["--temperature", "0"], ["--temperature", "positive"]),
        (["--temperature", "-1"], ["--temperature", "positive"]),
        (["--temperature", "nan"], ["--temperature", "expects a number"]),
        (["--temperature", "inf"], ["--temperature", "expects a number"]),
        (["--temperature", "warm"], ["--temperature", "number"]),
        (["--top-k", "0"], ["--top-k"]),
        (["--top-k", "-2"], ["--top-k"]),
        (["--top-k", str(len(cfg["vocab"]) + 1)], ["--top-k", str(len(cfg["vocab"]))]),
        (["--no-repeat", "-1"], ["--no-repeat", "0 to 32"]),
        (["--no-repeat", "33"], ["--no-repeat", "0 to 32"]),
        (["--no-repeat", "three"], ["--no-repeat"]),
        (["--prompt", "\udcff"], []),
        (["--model", offsets], ["not a language model", "--task text"]),
        (["--threads", "0"], ["--threads"]),
        (["stray"], ["--prompt"]),
    ]
    for flags, words in cases:
        args = [mhaviz, "generate"] + (["--model", CKPT] if "--model" not in flags else []) + flags
        try:
            r = subprocess.run(args, capture_output=True, timeout=120, cwd=ROOT)
        except UnicodeEncodeError:  # pragma: no cover
            continue
        err = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 2 and r.stdout == b"" and all(w in err for w in words) and "error" in err,
              f"generate {' '.join(f.encode('utf-8', 'surrogateescape').decode('utf-8', 'replace') for f in flags)}: "
              f"exit 2 ({r.returncode}), nothing written, {err.strip()[:150]!r}")


if __name__ == "__main__":
    checks.main([check_torch, check_cache_and_sampling, check_no_repeat, check_language, check_stop_at_s, check_limits,
                 check_bad_input])
