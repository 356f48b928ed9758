"""`mhaviz train --init M.npz --data T.npz` against torch.optim.AdamW, in float32 on
both sides: 20 steps from the same weights on the same batch, with the same schedule
(linear warm-up, then cosine decay to min_lr_ratio * lr, as LearningRate in
core/src/adamw.cpp), weight decay on parameters with >= 2 dimensions only (two param
groups), and torch.nn.utils.clip_grad_norm_. The loss of every step and the final
weights agree to 1e-4 (relative; per tensor by norm).

Except b_k: its exact gradient is 0 (the softmax ignores the constant q.b_k a key bias
adds to a whole row of scores), so both sides hand AdamW float32 rounding noise, and
AdamW's m / sqrt(v) scales noise to a full lr-sized step. Both b_k walk away from their
start, each on its own noise: the test checks only that b_k leaves the output unchanged
(the loss curves agree) and that torch's gradient for it is ~0.

usage: test_train_adamw.py PATH/TO/mhaviz   (exit 77 = skipped: no torch)
"""
import csv
import math
import os
import sys
import tempfile

import numpy as np

try:
    import torch
except ImportError:  # pragma: no cover
    print("python3-torch is not installed: skipped")
    sys.exit(77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_model as tm  # noqa: E402

TOL = 1e-4
STEPS, LR, WARMUP, WD, CLIP, MIN_LR_RATIO = 20, 1e-2, 5, 0.1, 0.5, 0.1
CASES = [
    "--layers 2 --heads 4 --kv-heads 2 --d-model 16 --norm pre --mask causal --pos learned",
    "--layers 1 --heads 2 --d-model 8 --block encoder --activation gelu --norm post --mask none --pos sinusoidal",
]


def learning_rate(step):
    """LearningRate in core/src/adamw.cpp, rounded to float32 as mhaviz keeps it."""
    if WARMUP > 0 and step < WARMUP:
        return float(np.float32(LR) * np.float32(step + 1) / np.float32(WARMUP))
    progress = min(1.0, (step - WARMUP) / (STEPS - WARMUP))
    lr = float(np.float32(LR))
    min_lr = lr * MIN_LR_RATIO
    return float(np.float32(min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (lr - min_lr)))


def torch_run(cfg, params, tokens, targets):
    P = tm.to_torch(params, torch.float32)
    decay = [p for p in P.values() if p.dim() >= 2]
    no_decay = [p for p in P.values() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": WD}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=LR, betas=(0.9, 0.999), eps=1e-8)
    losses, lrs, bk_grad = [], [], 0.0
    x, y = torch.from_numpy(tokens), torch.from_numpy(targets)
    for step in range(STEPS):
        lr = learning_rate(step)
        for g in opt.param_groups:
            g["lr"] = lr
        opt.zero_grad()
        loss = tm.forward_loss(cfg, P, x, y)
        loss.backward()
        total = torch.nn.utils.clip_grad_norm_(list(P.values()), CLIP).item()
        bk = sum(float(p.grad.norm()) for k, p in P.items() if k.endswith(".b_k"))
        bk_grad = max(bk_grad, bk / total)
        opt.step()
        losses.append(loss.item())
        lrs.append(lr)
    assert bk_grad < 1e-5, f"torch's b_k gradient is {bk_grad:.3g} of the total: not ~0"
    return losses, lrs, {k: v.detach().numpy() for k, v in P.items()}


def check_case(mhaviz, tmp, n, flags):
    rng = np.random.default_rng(77 + n)
    vocab, seq, K = 9, 8, 2
    tokens, targets = tm.random_batch(rng, 4, seq, vocab, K)
    data = os.path.join(tmp, f"data{n}.npz")
    tm.save_batch(data, tokens, targets)
    init = tm.make_model(mhaviz, tmp, f"init{n}.npz", flags.split() + ["--seed", str(n + 5)], data, vocab)
    cfg, params = tm.load_checkpoint(init)
    params = tm.perturb(rng, params, 0.1)
    start = os.path.join(tmp, f"start{n}.npz")
    tm.save_checkpoint(start, cfg, params)
    out, log = os.path.join(tmp, f"out{n}.npz"), os.path.join(tmp, f"log{n}.csv")
    r = tm.run([mhaviz, "train", "--init", start, "--data", data, "--steps", str(STEPS), "--lr", str(LR),
                "--warmup", str(WARMUP), "--weight-decay", str(WD), "--clip", str(CLIP), "--log", log, "--out", out])
    if r.returncode != 0:
        raise AssertionError(f"case {n}: mhaviz train failed ({r.returncode}): {r.stderr}")
    with open(log) as f:
        rows = list(csv.DictReader(f))
    m_losses = [float(row["loss"]) for row in rows]
    m_lrs = [float(row["lr"]) for row in rows]
    _, m_params = tm.load_checkpoint(out)
    t_losses, t_lrs, t_params = torch_run(cfg, params, tokens, targets)

    failures = []
    loss_err = max(abs(a - b) / abs(b) for a, b in zip(m_losses, t_losses))
    lr_err = max(abs(a - b) / b for a, b in zip(m_lrs, t_lrs))
    if len(m_losses) != STEPS or loss_err > TOL:
        failures.append(f"loss curves differ (worst relative {loss_err:.3g}): mhaviz {m_losses} torch {t_losses}")
    if lr_err > 1e-6:
        failures.append(f"learning rates differ: mhaviz {m_lrs} torch {t_lrs}")
    w_err, w_name = 0.0, ""
    for k, ref in t_params.items():
        if k.endswith(".b_k"):
            continue
        got = m_params[k]
        e = np.linalg.norm(got.astype(np.float64) - ref) / max(np.linalg.norm(ref), 1e-12)
        if e > w_err:
            w_err, w_name = e, k
    if w_err > TOL:
        failures.append(f"final weights differ: worst {w_name}, relative {w_err:.3g}")
    print(f"case {n} [{flags}]: loss {t_losses[0]:.5f} -> {t_losses[-1]:.5f}; worst relative loss error "
          f"{loss_err:.3g}, worst final weight error {w_err:.3g} ({w_name})")
    return failures


def main():
    mhaviz = sys.argv[1]
    torch.set_default_dtype(torch.float32)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, flags in enumerate(CASES):
            bad += [f"case {n}: {f}" for f in check_case(mhaviz, tmp, n, flags)]
    if bad:
        print("\n".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
