"""The value-weighted attention norms (Kobayashi et al. 2020) that `mhaviz trace` writes as
`attn_norms`, recomputed in numpy from the trace's input and weights alone:

    attn_norms[h, i, j] = attn[h, i, j] * || (x_j W_V^h + b_V^h) W_O^h ||

(x_j the key's input: LN(x) for pre-LN; W_V^h the columns of the head's K/V head), on
seeded layers (MHA, GQA, pre- and post-LN) and on mhaviz-small's layers; the JSON's
copy equals the .npz's; a wrong head's W_O rows fail the check; Flash writes none, and a
trace too large for a second attention-sized array leaves them out with a note.

Usage: test_norms.py MHAVIZ"""
import json
import os
import subprocess
import sys

import numpy as np

from checks import check, main


def run(args):
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def recompute(z, shift=0):
    """attn_norms from x (or x_ln), W_v, b_v, W_o and attn; `shift` reads head h+shift's
    rows of W_o instead (a deliberately wrong site)."""
    attn = z["attn"][0].astype(np.float64)  # (H, S, S)
    H = attn.shape[0]
    x = (z["x_ln"] if "x_ln" in z.files else z["x"])[0].astype(np.float64)
    W_v, b_v, W_o = (z[k].astype(np.float64) for k in ("W_v", "b_v", "W_o"))
    d = W_o.shape[0]
    hd = d // H
    G = W_v.shape[1] // hd
    v = x @ W_v + b_v  # (S, G * hd)
    out = np.empty_like(attn)
    for h in range(H):
        g = h // (H // G)
        rows = ((h + shift) % H) * hd
        f = v[:, g * hd:(g + 1) * hd] @ W_o[rows:rows + hd]  # (S, d): each key's term
        out[h] = attn[h] * np.linalg.norm(f, axis=1)[None, :]
    return out


def compare(got, want):
    scale = max(float(np.abs(want).max()), 1e-30)
    return float(np.abs(got - want).max()) / scale


def seeded(mhaviz, tmp):
    cases = [["--heads", "4"], ["--heads", "8", "--kv-heads", "2", "--norm", "pre"],
             ["--heads", "6", "--d-model", "48", "--mask", "causal", "--norm", "none"]]
    for flags in cases:
        npz, js = os.path.join(tmp, "t.npz"), os.path.join(tmp, "t.json")
        r = run([mhaviz, "trace", "--sentence", "고양이가 쥐를 잡았다 and the cat sat", *flags, "--npz", npz,
                 "--json", js, "-q"])
        check(r.returncode == 0, f"trace {' '.join(flags)} writes the files ({r.stderr.strip()[:200]})")
        if r.returncode != 0:
            continue
        z = np.load(npz)
        got = z["attn_norms"][0].astype(np.float64)
        err = compare(got, recompute(z))
        check(got.shape == z["attn"][0].shape and err <= 1e-5,
              f"{' '.join(flags)}: attn_norms {got.shape} are numpy's (worst {err:.1e} of the scale; bound 1e-5)")
        wrong = compare(got, recompute(z, shift=1))
        check(wrong > 1e-2, f"{' '.join(flags)}: with another head's W_O rows the check fails ({wrong:.1e})")
        with open(js, encoding="utf-8") as f:
            doc = json.load(f)
        check(np.allclose(np.array(doc["attn_norms"]), got, rtol=1e-6, atol=0),
              f"{' '.join(flags)}: the JSON's attn_norms are the .npz's")


def language_model(mhaviz, tmp):
    for layer in ("0", "1"):
        npz, js = os.path.join(tmp, "lm.npz"), os.path.join(tmp, "lm.json")
        r = run([mhaviz, "trace", "--model", "mhaviz-small", "--sentence", "할머니께서 방에서 주무신다", "--layer", layer,
                 "--npz", npz, "--json", js, "-q"])
        check(r.returncode == 0, f"trace --model mhaviz-small --layer {layer} ({r.stderr.strip()[:200]})")
        if r.returncode != 0:
            continue
        z = np.load(npz)
        err = compare(z["attn_norms"][0].astype(np.float64), recompute(z))
        check(err <= 1e-5, f"mhaviz-small layer {layer}: attn_norms are numpy's (worst {err:.1e} of the scale)")
        with open(js, encoding="utf-8") as f:
            check("attn_norms" in json.load(f), f"mhaviz-small layer {layer}: the JSON has them too")


def left_out(mhaviz, tmp):
    npz = os.path.join(tmp, "flash.npz")
    r = run([mhaviz, "trace", "--sentence", "a b c d", "--attention", "flash", "--npz", npz, "-q"])
    check(r.returncode == 0 and "attn_norms" not in np.load(npz).files,
          "Flash keeps no attention weights, so the .npz has no attn_norms")
    if os.environ.get("MHAVIZ_SANITIZED"):
        print("skip  the 600 MiB trace under a sanitizer (checked in the normal build)")
        return
    # 64 heads x 1024 tokens: attn and scores are 256 MiB each; another 256 MiB (and its
    # copy) would take the trace past its cap, so the norms are left out with a note.
    big = os.path.join(tmp, "big.npz")
    words = " ".join(f"w{i}" for i in range(1024))
    r = run([mhaviz, "trace", "--sentence", words, "--heads", "64", "--d-model", "512", "--npz", big, "-q"])
    ok = r.returncode == 0 and "attn_norms" in r.stderr and "left out" in r.stderr
    if ok:
        with np.load(big) as z:
            ok = "attn_norms" not in z.files and "attn" in z.files
    check(ok, f"a trace too large for the norms beside it is written without them, with a note "
          f"({r.returncode}: {r.stderr.strip()[:200]})")
    if os.path.exists(big):
        os.remove(big)


if __name__ == "__main__":
    main([seeded, language_model, left_out])
