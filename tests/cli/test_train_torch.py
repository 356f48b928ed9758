"""`mhaviz grad` against torch autograd: for each of a fixed list of seeded model
configurations (1-3 layers, 1-8 heads, GQA, masks, post/pre/no LayerNorm, attention
or encoder block with ReLU / exact GELU, sinusoidal / learned / no positions, several
targets with -1 entries, scale off and a temperature), the loss and the gradient of
EVERY parameter match a float64 PyTorch rebuild of the checkpoint.

Tolerance, per tensor: ||g_mhaviz - g_torch|| <= 1e-4 * ||g_torch|| + 1e-6 * G, where G
is the largest gradient norm of the model: the floor is for gradients that are exactly 0
in exact arithmetic, where float32 leaves rounding noise (b_k: the softmax ignores the
constant q.b_k a key bias adds to a whole row of scores; LayerNorm parameters under
norm none are unused). And |loss_mhaviz - loss_torch| <= 1e-5 * |loss_torch|. For scale,
each configuration also prints how far torch's own float32 gradients are from float64.

usage: test_train_torch.py PATH/TO/mhaviz   (exit 77 = skipped: no torch)
"""
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

REL, FLOOR, LOSS_REL = 1e-4, 1e-6, 1e-5

# (flags, targets K, vocab, seq, config overrides)
CONFIGS = [
    ("--layers 1 --heads 2 --d-model 16 --norm pre --mask causal --pos learned", 2, 11, 8, {}),
    ("--layers 2 --heads 4 --kv-heads 2 --d-model 16 --norm post --mask none --pos sinusoidal", 1, 7, 6, {}),
    ("--layers 3 --heads 8 --kv-heads 1 --d-model 32 --norm none --mask causal --pos none", 3, 9, 7, {}),
    ("--layers 1 --heads 1 --d-model 8 --block encoder --activation relu --norm post --mask causal --pos learned",
     1, 13, 9, {}),
    ("--layers 2 --heads 4 --d-model 16 --block encoder --activation gelu --norm pre --mask none --pos sinusoidal",
     2, 10, 5, {}),
    ("--layers 2 --heads 2 --kv-heads 1 --d-model 12 --block encoder --activation gelu --norm none --mask causal "
     "--pos learned", 2, 8, 8, {}),
    ("--layers 1 --heads 8 --kv-heads 4 --d-model 32 --block encoder --activation relu --d-ff 24 --norm pre "
     "--mask causal --pos none", 1, 12, 6, {}),
    ("--layers 3 --heads 2 --d-model 8 --norm post --mask causal --pos learned", 4, 6, 9, {}),
    ("--layers 2 --heads 6 --kv-heads 3 --d-model 24 --norm pre --mask none --pos learned", 1, 9, 7,
     {"scale": False}),
    ("--layers 1 --heads 4 --d-model 16 --block encoder --activation gelu --norm post --mask none --pos sinusoidal",
     3, 11, 6, {"temperature": 0.7}),
    ("--layers 2 --heads 3 --d-model 12 --norm none --mask none --pos none", 2, 5, 8, {}),
    ("--layers 3 --heads 4 --kv-heads 2 --d-model 16 --block encoder --activation relu --norm pre --mask causal "
     "--pos learned", 2, 10, 8, {"ln_eps": 1e-3}),
]


def check_config(mhaviz, tmp, n, flags, K, vocab, seq, overrides):
    rng = np.random.default_rng(1000 + n)
    tokens, targets = tm.random_batch(rng, 3, seq, vocab, K)
    data = os.path.join(tmp, f"data{n}.npz")
    tm.save_batch(data, tokens, targets)
    init = tm.make_model(mhaviz, tmp, f"init{n}.npz", flags.split() + ["--seed", str(n)], data, vocab)
    cfg, params = tm.load_checkpoint(init)
    cfg.update(overrides)
    params = tm.perturb(rng, params)
    model = os.path.join(tmp, f"model{n}.npz")
    tm.save_checkpoint(model, cfg, params)
    out = os.path.join(tmp, f"grad{n}.npz")
    r = tm.run([mhaviz, "grad", "--model", model, "--data", data, "--out", out])
    if r.returncode != 0:
        raise AssertionError(f"config {n}: mhaviz grad failed: {r.stderr}")
    g = np.load(out)

    P = tm.to_torch(params, torch.float64)
    loss = tm.forward_loss(cfg, P, torch.from_numpy(tokens), torch.from_numpy(targets))
    loss.backward()
    failures, worst = [], (0.0, "")
    top = max(np.linalg.norm(p.grad.numpy()) for p in P.values() if p.grad is not None)
    expected = {"loss"} | {"grad." + k for k in params}
    if set(g.files) != expected:
        failures.append(f"keys differ: extra {sorted(set(g.files) - expected)}, missing {sorted(expected - set(g.files))}")
    loss_err = abs(float(g["loss"]) - loss.item())
    if loss_err > LOSS_REL * abs(loss.item()):
        failures.append(f"loss {float(g['loss']):.8g} vs torch {loss.item():.8g}")
    for name, p in P.items():
        ref = p.grad.numpy() if p.grad is not None else np.zeros(p.shape)
        got = g["grad." + name].astype(np.float64)
        if got.shape != ref.shape:
            failures.append(f"grad.{name}: shape {got.shape} vs {ref.shape}")
            continue
        diff, size = np.linalg.norm(got - ref), np.linalg.norm(ref)
        rel = diff / size if size > 0 else 0.0
        if size > FLOOR * top and rel > worst[0]:
            worst = (rel, name)
        if diff > REL * size + FLOOR * top:
            failures.append(f"grad.{name}: ||diff|| {diff:.3g}, ||torch|| {size:.3g}, ratio of norms "
                            f"{np.linalg.norm(got) / max(size, 1e-30):.6f}")
    return failures, worst


def main():
    mhaviz = sys.argv[1]
    torch.set_default_dtype(torch.float64)
    bad, worst = [], (0.0, "")
    with tempfile.TemporaryDirectory() as tmp:
        for n, (flags, K, vocab, seq, overrides) in enumerate(CONFIGS):
            failures, w = check_config(mhaviz, tmp, n, flags, K, vocab, seq, overrides)
            if w[0] > worst[0]:
                worst = (w[0], f"config {n} ({flags} {overrides or ''}) {w[1]}")
            for f in failures:
                bad.append(f"config {n} [{flags} {overrides or ''}]: {f}")
    print(f"{len(CONFIGS)} configurations; worst relative gradient error {worst[0]:.3g} at {worst[1]}")
    if bad:
        print("\n".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
