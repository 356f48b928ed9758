#!/usr/bin/env python3
"""Independent check of `mhaviz trace --block encoder`: the exported tensors are
recomputed from the exported x and weights in numpy (float64), and, when PyTorch is
available, fed through torch.nn.TransformerEncoderLayer, whose output must equal the
exported block_out.

usage: test_encoder.py PATH/TO/mhaviz
Exit status 0 ok, 1 mismatch, 77 skipped (numpy missing).
"""
import math
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("numpy is not installed: skipped")
    sys.exit(77)

try:
    import torch
except ImportError:
    torch = None

sys.path.insert(0, os.path.dirname(__file__))
from checks import close  # noqa: E402

SENTENCE = "The cat sat on the mat because it was warm."


def layer_norm(x, g, b, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def softmax(s):
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - m)
    return e / e.sum(axis=-1, keepdims=True)


def gelu(x):
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def numpy_block(a, norm, act, causal, heads):
    """The encoder block from the lesson's formulas, float64."""
    f = {k: a[k].astype(np.float64) for k in a.files}
    x = f["x"][0]
    eps = float(f["ln_eps"])
    src = layer_norm(x, f["ln_gamma"], f["ln_beta"], eps) if norm == "pre" else x
    q = src @ f["W_q"] + f["b_q"]
    k = src @ f["W_k"] + f["b_k"]
    v = src @ f["W_v"] + f["b_v"]
    seq, d = x.shape
    hd = d // heads
    concat = np.zeros_like(x)
    for h in range(heads):
        qh, kh, vh = (m[:, h * hd:(h + 1) * hd] for m in (q, k, v))
        s = qh @ kh.T / math.sqrt(hd)
        if causal:
            s = np.where(np.triu(np.ones((seq, seq), bool), 1), -np.inf, s)
        concat[:, h * hd:(h + 1) * hd] = softmax(s) @ vh
    out = x + concat @ f["W_o"] + f["b_o"]
    if norm == "post":
        out = layer_norm(out, f["ln_gamma"], f["ln_beta"], eps)
    ffn_in = layer_norm(out, f["ln2_gamma"], f["ln2_beta"], eps) if norm == "pre" else out
    pre_act = ffn_in @ f["ffn_W1"] + f["ffn_b1"]
    hidden = gelu(pre_act) if act == "gelu" else np.maximum(pre_act, 0.0)
    ffn_out = hidden @ f["ffn_W2"] + f["ffn_b2"]
    block = out + ffn_out
    if norm == "post":
        block = layer_norm(block, f["ln2_gamma"], f["ln2_beta"], eps)
    return {"out": out, "ffn_hidden": hidden, "ffn_out": ffn_out, "block_out": block}


def torch_block(a, norm, act, causal, heads, d_ff):
    """The same weights in PyTorch's own encoder layer (x W + b in the lesson is
    x W^T + b in torch, hence the transposes)."""
    t = lambda k: torch.tensor(a[k], dtype=torch.float64)
    d = a["x"].shape[-1]
    layer = torch.nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=d_ff, dropout=0.0,
                                             activation=act, layer_norm_eps=float(a["ln_eps"]),
                                             batch_first=True, norm_first=(norm == "pre")).double().eval()
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([t("W_q").T, t("W_k").T, t("W_v").T]))
        layer.self_attn.in_proj_bias.copy_(torch.cat([t("b_q"), t("b_k"), t("b_v")]))
        layer.self_attn.out_proj.weight.copy_(t("W_o").T)
        layer.self_attn.out_proj.bias.copy_(t("b_o"))
        layer.linear1.weight.copy_(t("ffn_W1").T)
        layer.linear1.bias.copy_(t("ffn_b1"))
        layer.linear2.weight.copy_(t("ffn_W2").T)
        layer.linear2.bias.copy_(t("ffn_b2"))
        layer.norm1.weight.copy_(t("ln_gamma"))
        layer.norm1.bias.copy_(t("ln_beta"))
        layer.norm2.weight.copy_(t("ln2_gamma"))
        layer.norm2.bias.copy_(t("ln2_beta"))
        seq = a["x"].shape[1]
        mask = None
        if causal:
            mask = torch.triu(torch.full((seq, seq), float("-inf"), dtype=torch.float64), 1)
        return layer(t("x"), src_mask=mask)[0].numpy()


def cli_checks(exe, tmp):
    """Flags and files of the encoder block: errors teach, files round-trip."""
    failures = 0

    def run(*args):
        return subprocess.run([exe, "trace", "--quiet", *args], capture_output=True, text=True)

    def expect(name, r, code, *words):
        nonlocal failures
        ok = r.returncode == code and all(w in r.stderr for w in words)
        if not ok:
            print(f"FAIL cli {name}: exit {r.returncode} (want {code}), stderr {r.stderr!r}")
            failures += 1

    expect("bad --block", run("--block", "decoder"), 2, "--block", "encoder")
    expect("bad --d-ff", run("--block", "encoder", "--d-ff", "0"), 2, "--d-ff", "4 x d_model")
    expect("bad --activation", run("--block", "encoder", "--activation", "swish"), 2, "gelu")
    expect("d_ff over the cap", run("--block", "encoder", "--d-model", "16", "--heads", "2", "--d-ff", "100000"),
           2, "d_ff", "cap")

    # Round trip: the exported x and weights reproduce block_out, d_ff read from the file.
    first = os.path.join(tmp, "first.npz")
    again = os.path.join(tmp, "again.npz")
    common = ["--d-model", "24", "--heads", "3", "--norm", "pre", "--block", "encoder", "--activation", "gelu"]
    expect("export", run("--sentence", SENTENCE, *common, "--d-ff", "40", "--npz", first), 0)
    expect("round trip", run("--input", first, "--weights", first, *common, "--npz", again), 0)
    a, b = np.load(first), np.load(again)
    if a["ffn_W1"].shape != (24, 40) or not np.array_equal(a["block_out"], b["block_out"]):
        print("FAIL cli round trip: block_out differs or d_ff was not read from the file")
        failures += 1

    # A weights file without the FFN cannot run the encoder block.
    attn_only = os.path.join(tmp, "attn_only.npz")
    expect("attention export", run("--d-model", "24", "--heads", "3", "--npz", attn_only), 0)
    expect("missing ffn weights", run("--weights", attn_only, *common), 1, "ffn_W1", "--block encoder")
    expect("wrong d_ff", run("--weights", first, *common, "--d-ff", "41"), 1, "ffn_W1", "d_ff")
    return failures


def main():
    exe = sys.argv[1]
    failures = 0
    checks = 0
    with tempfile.TemporaryDirectory() as tmp:
        failures += cli_checks(exe, tmp)
        for norm in ("post", "pre", "none"):
            for act in ("relu", "gelu"):
                for causal in (False, True):
                    heads, d_model, d_ff = 4, 32, 48
                    path = os.path.join(tmp, f"{norm}_{act}_{causal}.npz")
                    cmd = [exe, "trace", "--quiet", "--sentence", SENTENCE, "--d-model", str(d_model),
                           "--heads", str(heads), "--block", "encoder", "--d-ff", str(d_ff), "--activation", act,
                           "--norm", norm, "--mask", "causal" if causal else "none", "--seed", "7", "--npz", path]
                    subprocess.run(cmd, check=True)
                    a = np.load(path)
                    name = f"norm={norm} act={act} causal={causal}"
                    want = numpy_block(a, norm, act, causal, heads)
                    # Relative to each tensor's scale (checks.float32_tol); the block's
                    # reductions are the projections' d_model and the FFN's d_ff terms.
                    terms = d_model + d_ff
                    for key, ref in want.items():
                        ok, msg = close(a[key][0], ref, f"numpy {name} {key}", terms)
                        checks += 1
                        if not ok:
                            print("FAIL " + msg)
                            failures += 1
                    if torch is not None and norm != "none":  # torch's layer always normalises
                        ref = torch_block(a, norm, act, causal, heads, d_ff)
                        ok, msg = close(a["block_out"][0], ref, f"torch.nn.TransformerEncoderLayer {name} block_out",
                                        terms)
                        checks += 1
                        print(("" if ok else "FAIL ") + msg)
                        failures += not ok
    print(f"{checks} comparisons, {failures} failures (tolerances relative to scale, float32_tol)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
