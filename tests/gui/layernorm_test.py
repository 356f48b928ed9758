#!/usr/bin/env python3
"""GUI tests of the LayerNorm view (post-LN and pre-LN side by side on the same weights):
each step's per-token mean, std and L2 norm and one head's weights under each
arrangement, against a numpy recomputation of both arrangements from the weights and
input `mhaviz trace --npz` exports.

    layernorm_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display or no numpy).
"""
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import dump_run, cli_npz  # noqa: E402

try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None

check = g.check
KO = "고양이가 쥐를 잡았다"
MODEL = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "models",
                                      "mhaviz-small.npz"))
EPS32 = 2.0 ** -23


def tol(ref, terms, ulps=32, scale=None):
    """float32 roundoff of the reference's scale (or `scale`, where the error comes from
    larger values upstream: a normalised row's mean of ~0 carries its elements' roundoff),
    growing as the root of the terms summed (docs/testing.md): holds on AVX2 and AVX-512
    alike, while a wrong weight is far off."""
    r = np.abs(np.asarray(ref, dtype=np.float64))
    if scale is None:
        scale = float(r.max()) if r.size else 0.0
    return ulps * EPS32 * max(scale, 1e-30) * math.sqrt(max(terms, 1))


def close(ours, ref, terms, what, scale=None):
    ours, ref = np.asarray(ours, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    check(ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}")
    err, t = float(np.max(np.abs(ours - ref))), tol(ref, terms, scale=scale)
    check(err <= t, f"{what}: max |diff| {err:.3g} (tolerance {t:.3g})")


def layer_norm(v, gamma, beta, eps=1e-5):
    mu = v.mean(axis=-1, keepdims=True)
    var = ((v - mu) ** 2).mean(axis=-1, keepdims=True)
    return (v - mu) / np.sqrt(var + eps) * gamma + beta


def attention(xin, z, heads, causal):
    """torch.nn.MultiheadAttention's arithmetic, written out: Q, K, V, every head's
    softmax(QK^T / sqrt(d_k)) V, concat, W_O. Returns (attn_out, weights per head)."""
    f = lambda k: z[k].astype(np.float64)  # noqa: E731
    seq, d = xin.shape
    hd = d // heads
    kv = f("W_k").shape[1] // hd
    q = (xin @ f("W_q") + f("b_q")).reshape(seq, heads, hd).transpose(1, 0, 2)
    k = (xin @ f("W_k") + f("b_k")).reshape(seq, kv, hd).transpose(1, 0, 2)
    v = (xin @ f("W_v") + f("b_v")).reshape(seq, kv, hd).transpose(1, 0, 2)
    ctx, weights = [], []
    for h in range(heads):
        g_ = h // (heads // kv)
        s = q[h] @ k[g_].T / math.sqrt(hd)
        if causal:
            s = np.where(np.triu(np.ones((seq, seq), bool), 1), -np.inf, s)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        weights.append(w)
        ctx.append(w @ v[g_])
    concat = np.concatenate(ctx, axis=1)
    return concat @ f("W_o") + f("b_o"), weights


def ffn(h, z, gelu):
    f = lambda k: z[k].astype(np.float64)  # noqa: E731
    a = h @ f("ffn_W1") + f("ffn_b1")
    a = a * 0.5 * (1 + np.vectorize(math.erf)(a / math.sqrt(2))) if gelu else np.maximum(a, 0)
    return a @ f("ffn_W2") + f("ffn_b2")


def arrangements(z, heads, causal, gelu):
    """Both arrangements of the block in float64: {norm: ([(tensor, rows)], weights)}."""
    f = lambda k: z[k].astype(np.float64)  # noqa: E731
    x = f("x")[0]
    g1, b1 = f("ln_gamma"), f("ln_beta")
    g2, b2 = f("ln2_gamma"), f("ln2_beta")
    a, wp = attention(x, z, heads, causal)
    r = x + a
    o = layer_norm(r, g1, b1)
    fo = ffn(o, z, gelu)
    post = [("x", x), ("attn_out", a), ("residual", r), ("out", o), ("ffn_out", fo), ("ffn_residual", o + fo),
            ("block_out", layer_norm(o + fo, g2, b2))]
    xl = layer_norm(x, g1, b1)
    a2, wq = attention(xl, z, heads, causal)
    o2 = x + a2
    fl = layer_norm(o2, g2, b2)
    fo2 = ffn(fl, z, gelu)
    pre = [("x", x), ("x_ln", xl), ("attn_out", a2), ("out", o2), ("ffn_ln", fl), ("ffn_out", fo2),
           ("block_out", o2 + fo2)]
    return {"post": (post, wp), "pre": (pre, wq)}


def check_view(nv, ref, head, terms, where):
    """The view's numbers against the numpy arrangements, step by step and the head's map."""
    for norm in ("post", "pre"):
        steps, weights = ref[norm]
        got = nv[norm]["stages"]
        check([s["tensor"] for s in got] == [t for t, _ in steps],
              f"{where} {norm}: steps {[s['tensor'] for s in got]} != {[t for t, _ in steps]}")
        for s, (name, m) in zip(got, steps):
            mean = m.mean(axis=1)
            std = np.sqrt(((m - mean[:, None]) ** 2).mean(axis=1))
            # A row's mean and std carry the roundoff of its elements: the bound is theirs.
            big = float(np.abs(m).max())
            close(s["rows"]["std"], std, terms, f"{where} {norm} {name} std", scale=big)
            close(s["rows"]["mean"], mean, terms, f"{where} {norm} {name} mean", scale=big)
            close(s["rows"]["l2"], np.sqrt((m ** 2).sum(axis=1)), terms, f"{where} {norm} {name} L2 norm")
        close(nv[norm]["weights"], weights[head], terms, f"{where} {norm} head {head}'s weights")


def test_seeded(mhaviz, d):
    """The seeded encoder block on the class sentence (and English with a causal mask and
    GQA): both columns against numpy; post-LN's LN1 and LN2 rows have mean 0 and std 1
    (gamma 1, beta 0), pre-LN's output rows do not."""
    cases = [
        (["--sentence", KO, "--heads", "4", "--d-model", "64", "--block", "encoder", "--norm", "post", "--seed", "7"],
         2, False),
        (["--sentence", "the cat sat on the mat", "--heads", "4", "--kv-heads", "2", "--d-model", "32", "--block",
          "encoder", "--norm", "pre", "--mask", "causal", "--activation", "gelu", "--seed", "3"], 1, True),
    ]
    for i, (args, head, causal) in enumerate(cases):
        dump = dump_run(mhaviz, d, *args, "--view", "layernorm", "--view-head", str(head), name=f"dump{i}.json")
        check(dump["ok"], dump.get("error", ""))
        nv = dump["views"]["layernorm_view"]
        check("error" not in nv, f"case {i}: {nv.get('error')}")
        check(nv["head"] == head and nv["block"] == "encoder", f"case {i}: head {nv['head']} block {nv['block']}")
        z = cli_npz(mhaviz, d, f"ref{i}.npz", *args)
        d_model, d_ff = z["W_q"].shape[0], z["ffn_W1"].shape[1]
        ref = arrangements(z, 4, causal, "gelu" in args)
        check_view(nv, ref, head, d_model + d_ff, f"case {i}")
        # The trace's own tensors for the arrangement it runs: the view's column is the same block.
        own = "post" if "post" in args else "pre"
        for s in nv[own]["stages"]:
            m = z[s["tensor"]].astype(np.float64).reshape(-1, d_model)
            close(s["rows"]["std"], m.std(axis=1), d_model + d_ff, f"case {i}: {own} {s['tensor']} vs the trace",
                  scale=float(np.abs(m).max()))
        for k in ("out", "block_out"):
            s = next(s for s in nv["post"]["stages"] if s["tensor"] == k)
            check(max(abs(v - 1) for v in s["rows"]["std"]) < 1e-3 and max(abs(v) for v in s["rows"]["mean"]) < 1e-5,
                  f"case {i}: post-LN's {k} rows should have mean 0 and std 1: {s['rows']}")
        check(nv["ln1"]["gamma"] == [1, 1] and nv["ln1"]["beta"] == [0, 0], f"case {i}: LN1 {nv['ln1']}")
        last = nv["pre"]["stages"][-1]["rows"]["std"]
        check(max(abs(v - 1) for v in last) > 0.05, f"case {i}: pre-LN's output rows are not normalised: {last}")


def test_trained(mhaviz, d):
    """mhaviz-small, a pre-LN language model, layer 1: the pre column is the trace's own
    layer (trace --model --layer 1), the post column the same weights arranged post-LN,
    both against numpy; its LayerNorms' gamma and beta are trained, not 1 and 0."""
    if not os.path.exists(MODEL):
        raise g.Skip("no mhaviz-small")
    args = ["--model", MODEL, "--sentence", KO, "--layer", "1"]
    dump = dump_run(mhaviz, d, *args, "--view", "layernorm", "--view-head", "1")
    nv = dump["views"]["layernorm_view"]
    check("error" not in nv, str(nv.get("error")))
    check(nv["trained"] and nv["layer"] == 1 and nv["current"] == "pre", f"trained {nv['trained']} layer "
          f"{nv['layer']} current {nv['current']}")
    z = cli_npz(mhaviz, d, "lm.npz", *args)
    heads = z["q"].shape[1]
    gelu = bool(np.allclose(z["ffn_hidden"][0], ffn_hidden_gelu(z), atol=1e-4))
    ref = arrangements(z, heads, True, gelu)
    d_model, d_ff = z["W_q"].shape[0], z["ffn_W1"].shape[1]
    check_view(nv, ref, 1, d_model + d_ff, "mhaviz-small L1")
    check(nv["ln1"]["gamma"] != [1, 1], f"trained LN1 gamma {nv['ln1']}")


def ffn_hidden_gelu(z):
    f = lambda k: z[k].astype(np.float64)  # noqa: E731
    a = f("ffn_ln")[0] @ f("ffn_W1") + f("ffn_b1")
    return a * 0.5 * (1 + np.vectorize(math.erf)(a / math.sqrt(2)))


def gui_run(mhaviz, d, *args, name="run", size=(1280, 800)):
    """The app for a few frames: its --dump-state and last --probe (the view's passes run
    in the frame at these sizes)."""
    dump, probe = os.path.join(d, name + ".json"), os.path.join(d, name + ".probe.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    r = subprocess.run([mhaviz, "gui", "--frames", "5", "--width", str(size[0]), "--height", str(size[1]),
                        "--dump-state", dump, "--probe", probe, *args], env=env, cwd=d, capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, f"{name}: mhaviz gui {' '.join(args)} exited {r.returncode}: {r.stderr[-800:]}")
    return g.read_json(dump), g.read_json(probe)


def test_present(mhaviz, d):
    """Presented at the projector's sizes, in Korean and English: both columns, both maps
    and the head picker inside the window, the columns side by side."""
    for (w, h), pct in (((1280, 800), 150), ((1920, 1080), 100), ((1280, 800), 200)):
        for lang in ("ko", "en"):
            where = f"{w}x{h} {pct}% {lang}"
            _, p = gui_run(mhaviz, d, "--sentence", KO, "--block", "encoder", "--view", "layernorm", "--present", "--lang",
                           lang, "--text-size", str(pct), size=(w, h), name=f"present_{w}_{pct}_{lang}")
            win, wd = p["window"], p["widgets"]
            check(p.get("layernorm", {}).get("ready"), f"{where}: the view is not ready: {p.get('layernorm')}")
            for k in ("norms_post", "norms_pre", "norms_map_post", "norms_map_pre", "##norms_head"):
                r = wd.get(k)
                check(r is not None and r[0] >= -0.5 and r[1] >= -0.5 and r[0] + r[2] <= win[0] + 0.5 and
                      r[1] + r[3] <= win[1] + 0.5, f"{where}: {k} at {r} is not wholly in the window {win}")
            check(wd["norms_pre"][0] >= wd["norms_post"][0] + wd["norms_post"][2],
                  f"{where}: the columns are not side by side: {wd['norms_post']} {wd['norms_pre']}")


TESTS = {
    "seeded": test_seeded,
    "trained": test_trained,
    "present": test_present,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "layernorm", needs_numpy=True))
