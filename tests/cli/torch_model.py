"""An mhaviz checkpoint rebuilt in PyTorch from its config alone, sharing no code with
mhaviz: the reference the training tests compare gradients and AdamW steps against.

Semantics (core/include/mha/model.hpp, mha.hpp, ffn.hpp), row-vector convention
Q = x W_q + b_q:
  x0 = tok_embed[tokens] + PE                     (sinusoidal, learned pos_embed, or none)
  attention sublayer   post: LN1(x + MHA(x))   pre: x + MHA(LN1(x))   none: x + MHA(x)
  encoder block adds   post: LN2(y + FFN(y))   pre: y + FFN(LN2(y))   none: y + FFN(y)
  h = LN_f(x_L) for pre-LN, else x_L;  logits_k = h unembed.k + unembed_b.k
  loss = mean cross-entropy over every (sequence, position, target) whose target != -1
GQA: query head h reads K/V head h // (num_heads / num_kv_heads).
Head ablation (forward_trace's `ablate`): W_O reads a given vector in place of a
knocked-out query head's context, at every position (zeros: zero ablation; the head's
mean context: mean ablation).
"""
import json
import math
import os
import subprocess

import numpy as np
import torch


def load_checkpoint(path):
    z = np.load(path)
    cfg = json.loads(bytes(z["config"]).decode("utf-8"))
    params = {k: z[k] for k in z.files if k != "config"}
    return cfg, params


def save_checkpoint(path, cfg, params):
    cfg_bytes = np.frombuffer(json.dumps(cfg).encode("utf-8"), dtype=np.uint8)
    np.savez(path, config=cfg_bytes, **{k: np.asarray(v, dtype=np.float32) for k, v in params.items()})


def sinusoidal(seq, d):
    pe = np.zeros((seq, d), dtype=np.float64)
    for i in range(0, d, 2):
        denom = 10000.0 ** (i / d)
        for pos in range(seq):
            pe[pos, i] = math.sin(pos / denom)
            if i + 1 < d:
                pe[pos, i + 1] = math.cos(pos / denom)
    return pe.astype(np.float32)  # the model adds the float32 table


def layer_norm(x, gamma, beta, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)  # biased, as torch.nn.LayerNorm
    return (x - mu) / torch.sqrt(var + eps) * gamma + beta


def mha(cfg, P, pre, x, ablate=None, keep=None, weights=None):
    """ablate: {head: (head_dim,) tensor} replacing that head's context before W_O;
    keep: a dict that receives context (B, H, S, hd), concat and attn_out;
    weights: a list that receives this layer's attention weights (B, H, S, S)."""
    B, S, d = x.shape
    H, G = cfg["num_heads"], cfg["num_kv_heads"]
    hd = d // H
    q = (x @ P[pre + "W_q"] + P[pre + "b_q"]).reshape(B, S, H, hd).transpose(1, 2)
    k = (x @ P[pre + "W_k"] + P[pre + "b_k"]).reshape(B, S, G, hd).transpose(1, 2)
    v = (x @ P[pre + "W_v"] + P[pre + "b_v"]).reshape(B, S, G, hd).transpose(1, 2)
    k = k.repeat_interleave(H // G, dim=1)
    v = v.repeat_interleave(H // G, dim=1)
    scores = q @ k.transpose(-1, -2)
    if cfg["scale"]:
        scores = scores / math.sqrt(hd)
    scores = scores / cfg["temperature"]
    if cfg["mask"] == "causal":
        hidden = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
        scores = scores.masked_fill(hidden, float("-inf"))
    attn = torch.softmax(scores, dim=-1)
    if weights is not None:
        weights.append(attn)  # the caller's record of every layer's weights
    context = attn @ v
    if ablate:
        context_used = context.clone()
        for h, value in ablate.items():
            context_used[:, h, :, :] = value
    else:
        context_used = context
    concat = context_used.transpose(1, 2).reshape(B, S, d)
    attn_out = concat @ P[pre + "W_o"] + P[pre + "b_o"]
    if keep is not None:
        keep.update(context=context, concat=concat, attn_out=attn_out)
    return attn_out


def ffn(cfg, P, pre, x):
    hidden = x @ P[pre + "ffn_W1"] + P[pre + "ffn_b1"]
    hidden = torch.relu(hidden) if cfg["activation"] == "relu" else torch.nn.functional.gelu(hidden)
    return hidden @ P[pre + "ffn_W2"] + P[pre + "ffn_b2"]


def sublayer(cfg, x, f, gamma, beta):
    eps, norm = cfg["ln_eps"], cfg["norm"]
    if norm == "post":
        return layer_norm(x + f(x), gamma, beta, eps)
    if norm == "pre":
        return x + f(layer_norm(x, gamma, beta, eps))
    return x + f(x)


def forward_loss(cfg, P, tokens, targets):
    """tokens (B, S) int64, targets (B, S, K) int64; returns the mean cross-entropy."""
    total = 0
    count = 0
    for k, logits in enumerate(forward_logits(cfg, P, tokens)):
        t = targets[:, :, k].reshape(-1)
        total = total + torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), t.clamp(min=0), reduction="none")[t >= 0].sum()
        count += int((t >= 0).sum())
    return total / count


def forward_logits(cfg, P, tokens, keep=None):
    """tokens (B, S) int64; returns one (B, S, vocab) tensor of logits per target. A list
    `keep` receives each layer's attention weights (B, H, S, S)."""
    B, S = tokens.shape
    x = P["tok_embed"][tokens]
    if cfg["positional"] == "learned":
        x = x + P["pos_embed"][:S]
    elif cfg["positional"] == "sinusoidal":
        x = x + torch.from_numpy(sinusoidal(S, cfg["d_model"])).to(x.dtype)
    for l in range(cfg["num_layers"]):
        pre = f"layers.{l}."
        x = sublayer(cfg, x, lambda t: mha(cfg, P, pre, t, weights=keep), P[pre + "ln_gamma"], P[pre + "ln_beta"])
        if cfg["block"] == "encoder":
            x = sublayer(cfg, x, lambda t: ffn(cfg, P, pre, t), P[pre + "ln2_gamma"], P[pre + "ln2_beta"])
    if cfg["norm"] == "pre":
        x = layer_norm(x, P["lnf_gamma"], P["lnf_beta"], cfg["ln_eps"])
    return [x @ P[f"unembed.{k}"] + P[f"unembed_b.{k}"] for k in range(cfg["num_targets"])]


def forward_trace(cfg, P, tokens, ablate=None):
    """tokens (B, S) int64; ablate: {layer: {head: (head_dim,) tensor}}. Returns per layer a
    dict of context, concat, attn_out, out (after the attention sublayer) and, for the
    encoder block, block_out; and the logits of target 0."""
    B, S = tokens.shape
    x = P["tok_embed"][tokens]
    if cfg["positional"] == "learned":
        x = x + P["pos_embed"][:S]
    elif cfg["positional"] == "sinusoidal":
        x = x + torch.from_numpy(sinusoidal(S, cfg["d_model"])).to(x.dtype)
    layers = []
    for l in range(cfg["num_layers"]):
        pre = f"layers.{l}."
        keep = {}
        a = (ablate or {}).get(l)
        x = sublayer(cfg, x, lambda t: mha(cfg, P, pre, t, a, keep), P[pre + "ln_gamma"], P[pre + "ln_beta"])
        keep["out"] = x
        if cfg["block"] == "encoder":
            x = sublayer(cfg, x, lambda t: ffn(cfg, P, pre, t), P[pre + "ln2_gamma"], P[pre + "ln2_beta"])
            keep["block_out"] = x
        layers.append(keep)
    if cfg["norm"] == "pre":
        x = layer_norm(x, P["lnf_gamma"], P["lnf_beta"], cfg["ln_eps"])
    return layers, x @ P["unembed.0"] + P["unembed_b.0"]


def to_torch(params, dtype):
    return {k: torch.tensor(np.asarray(v), dtype=dtype, requires_grad=True) for k, v in params.items()}


def save_batch(path, tokens, targets):
    np.savez(path, tokens=np.asarray(tokens, dtype=np.int64), targets=np.asarray(targets, dtype=np.int64))


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=120, **kw)


def random_batch(rng, batch, seq, vocab, targets, empty=0.2):
    tokens = rng.integers(0, vocab, size=(batch, seq))
    tgt = rng.integers(0, vocab, size=(batch, seq, targets))
    tgt[rng.random(tgt.shape) < empty] = -1
    tgt[0, 0, 0] = 1  # at least one counted target
    return tokens, tgt


def perturb(rng, params, scale=0.5):
    """Every tensor moved off its initial value (LayerNorm gains off 1, biases off 0),
    so no gradient is trivially zero or symmetric. The noise is relative to the tensor's
    own spread: a weight of the initial scale keeps the model well conditioned (weights
    2x their initial scale made a 3-layer model without LayerNorm so saturated that
    torch's own float32 gradients were 1e-3 off its float64 ones)."""
    out = {}
    for k, v in params.items():
        v = np.asarray(v, dtype=np.float64)
        spread = max(float(v.std()), 0.1)
        out[k] = (v + scale * spread * rng.standard_normal(v.shape)).astype(np.float32)
    return out


def make_model(mhaviz, tmp, name, flags, data_path, vocab):
    """An initial checkpoint from `mhaviz train --steps 0`, for the model `flags` describe."""
    path = os.path.join(tmp, name)
    r = run([mhaviz, "train", "--data", data_path, "--vocab", str(vocab), "--steps", "0", "--out", path] + flags)
    if r.returncode != 0:
        raise AssertionError(f"mhaviz train {' '.join(flags)} failed ({r.returncode}): {r.stderr}")
    return path
