"""An independent numpy recomputation of everything `mhaviz trace --npz` exports.

It reads only the inputs and weights from the archive (x, memory, W_*, b_*, ln_*) and
recomputes every intermediate tensor in float64, straight from the lesson's formulas.
"""
import numpy as np


def layer_norm(x, gamma, beta, eps):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def recompute(z, heads, kv_heads=None, mask="none", norm="post", scale=True, temperature=1.0):
    f = {k: z[k].astype(np.float64) for k in z.files}
    x = f["x"]                                   # (1, seq, d_model)
    _, seq, d = x.shape
    g = kv_heads or heads
    hd = d // heads
    eps = float(f["ln_eps"])
    src = layer_norm(x, f["ln_gamma"], f["ln_beta"], eps) if norm == "pre" else x
    mem = f["memory"] if "memory" in f else src
    skv = mem.shape[1]
    Q = src @ f["W_q"] + f["b_q"]                # row-vector convention: Q = x W_Q + b_Q
    K = mem @ f["W_k"] + f["b_k"]
    V = mem @ f["W_v"] + f["b_v"]
    q = Q.reshape(1, seq, heads, hd).transpose(0, 2, 1, 3)      # (1, H, seq, hd)
    k = K.reshape(1, skv, g, hd).transpose(0, 2, 1, 3)          # (1, G, seq_kv, hd)
    v = V.reshape(1, skv, g, hd).transpose(0, 2, 1, 3)
    kr = np.repeat(k, heads // g, axis=1)        # query head h reads K/V head h // (H / G)
    vr = np.repeat(v, heads // g, axis=1)
    scores = q @ kr.transpose(0, 1, 3, 2)
    if scale:
        scores = scores / np.sqrt(hd)
    scores = scores / temperature
    if mask == "causal":
        scores = np.where(np.triu(np.ones((seq, skv), bool), 1), -np.inf, scores)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    attn = e / e.sum(-1, keepdims=True)
    context = attn @ vr
    concat = context.transpose(0, 2, 1, 3).reshape(1, seq, d)
    attn_out = concat @ f["W_o"] + f["b_o"]
    residual = x + attn_out
    out = layer_norm(residual, f["ln_gamma"], f["ln_beta"], eps) if norm == "post" else residual
    r = dict(q=q, k=k, v=v, scores=scores, attn=attn, context=context, concat=concat,
             attn_out=attn_out, residual=residual, out=out)
    if norm == "pre":
        r["x_ln"] = src
    return r


def max_error(z, ref):
    """Largest |exported - recomputed| over every recomputed tensor (-inf must match)."""
    worst = {}
    for name, want in ref.items():
        got = z[name].astype(np.float64)
        assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
        inf = np.isinf(want)
        assert np.array_equal(np.isinf(got), inf), f"{name}: -inf pattern differs"
        with np.errstate(invalid="ignore"):
            worst[name] = float(np.abs(np.where(inf, 0, got - want)).max())
    return worst
