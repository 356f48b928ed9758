"""Head ablation from the outside: `trace --model ... --ablate` against a PyTorch rebuild
(torch_model.py, which shares no code with mhaviz) with the same heads knocked out, zero
and mean, on random head sets (within checks.float32_tol of each tensor's scale); `trace --ablate` on a seeded layer; export's
--ablate; the bad-input messages of --heads and --ablate (exit 2, the valid range).

Usage: test_ablation.py path/to/mhaviz
"""
import json
import os
import sys

import numpy as np

try:
    import torch
except ImportError:
    print("python3-torch is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_model as tm  # noqa: E402
from checks import check, close, main, tol_ratio  # noqa: E402

# (flags, vocab, seq): plain MHA, GQA, MQA, encoder blocks, every norm, one head
CONFIGS = [
    ("--layers 2 --heads 4 --kv-heads 2 --d-model 16 --norm post --mask none --pos sinusoidal", 7, 6),
    ("--layers 2 --heads 4 --d-model 16 --block encoder --activation gelu --norm pre --mask causal --pos learned",
     10, 8),
    ("--layers 3 --heads 8 --kv-heads 1 --d-model 32 --norm none --mask causal --pos none", 9, 7),
    ("--layers 1 --heads 1 --d-model 8 --block encoder --activation relu --norm post --mask causal --pos learned",
     13, 9),
]


def head_sets(rng, layers, heads, count=3):
    """Random non-empty sets of (layer, head), one of them every head of the model."""
    everything = [(l, h) for l in range(layers) for h in range(heads)]
    sets = [everything]
    for _ in range(count - 1):
        n = int(rng.integers(1, len(everything) + 1))
        idx = rng.choice(len(everything), size=n, replace=False)
        sets.append([everything[i] for i in sorted(idx)])
    return sets


def check_torch(mhaviz, tmp):
    for n, (flags, vocab, seq) in enumerate(CONFIGS):
        rng = np.random.default_rng(500 + n)
        tokens, targets = tm.random_batch(rng, 1, seq, vocab, 1)
        data = os.path.join(tmp, f"abl_data{n}.npz")
        tm.save_batch(data, tokens, targets)
        init = tm.make_model(mhaviz, tmp, f"abl_init{n}.npz", flags.split() + ["--seed", str(n)], data, vocab)
        cfg, params = tm.load_checkpoint(init)
        params = tm.perturb(rng, params)
        model = os.path.join(tmp, f"abl_model{n}.npz")
        tm.save_checkpoint(model, cfg, params)
        P = {k: torch.tensor(np.asarray(v), dtype=torch.float64) for k, v in params.items()}
        tok = torch.from_numpy(np.asarray(tokens, dtype=np.int64))
        L, H = cfg["num_layers"], cfg["num_heads"]
        clean, _ = tm.forward_trace(cfg, P, tok)
        # Mean ablation of a model trained on no task: each head's mean context over the
        # input itself, from the plain model.
        means = [c["context"][0].mean(dim=1) for c in clean]  # (H, hd) per layer
        worst = 0.0
        for heads in head_sets(rng, L, H):
            spec = ",".join(f"{l}.{h}" for l, h in heads)
            for mode in ("zero", "mean"):
                ablate = {}
                for l, h in heads:
                    value = torch.zeros(cfg["d_model"] // H, dtype=torch.float64) if mode == "zero" else means[l][h]
                    ablate.setdefault(l, {})[h] = value
                layers, _ = tm.forward_trace(cfg, P, tok, ablate)
                for l in range(L):
                    out = os.path.join(tmp, f"abl_{n}_{l}.npz")
                    r = tm.run([mhaviz, "trace", "--model", model, "--tokens", " ".join(map(str, tokens[0])),
                                "--layer", str(l), "--ablate", spec, "--ablate-mode", mode, "--npz", out, "-q"])
                    if r.returncode != 0:
                        check(False, f"config {n}: trace --ablate {spec} --ablate-mode {mode} ran: {r.stderr}")
                        continue
                    z = np.load(out)
                    # Every layer so far adds its projections' and FFN's sums.
                    terms = (l + 1) * (cfg["d_model"] + (cfg.get("d_ff") or 0))
                    for key in ("context", "concat", "attn_out", "out", "block_out"):
                        if key not in layers[l]:
                            continue
                        ref = layers[l][key].detach().numpy().reshape(-1)
                        ok, msg = close(z[key].reshape(-1), ref, f"config {n} layer {l} {key} with {spec} {mode}",
                                        terms)
                        worst = max(worst, tol_ratio(z[key].reshape(-1), ref, terms))
                        if not ok:
                            check(False, msg)
        check(worst <= 1, f"config {n} [{flags}]: trace --ablate matches torch, zero and mean, on random head sets "
                          f"(worst {worst:.2f} of float32_tol)")


def check_seeded_trace(mhaviz, tmp):
    out = os.path.join(tmp, "seeded.npz")
    js = os.path.join(tmp, "seeded.json")
    r = tm.run([mhaviz, "trace", "--sentence", "the cat sat on the mat", "--heads", "4", "--d-model", "16",
                "--ablate", "0.1,L0H3", "--npz", out, "--json", js])
    check(r.returncode == 0 and "knocked out (zero ablation): L0H1, L0H3" in r.stdout,
          "trace --ablate on a seeded layer runs and names the knocked-out heads")
    if r.returncode != 0:
        return
    with open(js, encoding="utf-8") as f:
        check(json.load(f).get("ablated_heads") == [1, 3], "trace --json names the layer's knocked-out heads")
    z = np.load(out)
    concat = z["concat"].reshape(-1, 16)
    context = z["context"].reshape(4, -1, 4)
    zeroed = np.all(concat[:, 4:8] == 0) and np.all(concat[:, 12:16] == 0)
    kept = np.array_equal(concat[:, 0:4], context[0]) and np.array_equal(concat[:, 8:12], context[2])
    check(zeroed and kept, "seeded --ablate: heads 1 and 3 are zero in concat, heads 0 and 2 are their context")
    attn_out = concat.astype(np.float64) @ z["W_o"].astype(np.float64) + z["b_o"].astype(np.float64)
    check(close(z["attn_out"].reshape(-1, 16), attn_out, "", 16)[0], "seeded --ablate: W_O reads the new concat")
    png = os.path.join(tmp, "ablated.png")
    r = tm.run([mhaviz, "export", "--sentence", "the cat sat", "--heads", "2", "--d-model", "8", "--ablate", "0.1",
                "--png", png, "-q"])
    check(r.returncode == 0 and os.path.getsize(png) > 0, "export --ablate writes the ablated layer's picture")


def check_bad_input(mhaviz, tmp):
    cases = [
        (["--ablate", "1-3"], "Ranges such as 1-3"),
        (["--ablate", ""], "is empty"),
        (["--ablate", "0.1,0.1"], "named twice"),
        (["--ablate", "0.1,"], "empty item"),
        (["--ablate", "L1"], "is not a head"),
        (["--ablate", "0.x"], "is not a head"),
        (["--ablate", "1.0"], "L0H0 (0.0) to L0H7 (0.7)"),
        (["--ablate", "0.8"], "heads (0 to 7)"),
        (["--ablate-mode", "half"], "'zero'"),
    ]
    for extra, words in cases:
        r = tm.run([mhaviz, "trace", "-q"] + extra)
        check(r.returncode == 2 and words in r.stderr,
              f"trace {' '.join(extra)!r}: exit 2 saying {words!r} (got {r.returncode}: {r.stderr.strip()[:160]})")
    env = dict(os.environ)
    env.pop("DISPLAY", None)
    env.pop("WAYLAND_DISPLAY", None)
    r = tm.run([mhaviz, "gui", "--ablate", "1-3"], env=env)
    if "has no GUI" not in r.stderr:  # the sanitizer builds have no window
        check(r.returncode == 2 and "Ranges such as 1-3" in r.stderr, "gui --ablate 1-3: the same refusal, exit 2")


if __name__ == "__main__":
    main([check_torch, check_seeded_trace, check_bad_input])
