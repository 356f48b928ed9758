"""mhaviz against PyTorch's own torch.nn.MultiheadAttention, a real peer: the same
weights in, the same per-head attention weights and output out.

torch stores in_proj_weight as (3*d_model, d_model) and computes x @ W.T (column-vector
convention); mhaviz's W_q is (d_model, d_model) with Q = x W_q (row-vector convention).
So W_q = in_proj_weight[:d].T, and so on.

usage: test_torch.py PATH/TO/mhaviz
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from checks import assert_close  # noqa: E402

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None

MHAVIZ = None


@unittest.skipIf(torch is None, "python3-torch is not installed")
class AgainstTorch(unittest.TestCase):
    def check(self, seq, d, heads, causal=False, seq_kv=None, seed=0):
        torch.manual_seed(seed)
        mha = torch.nn.MultiheadAttention(d, heads, batch_first=True, bias=True)
        with torch.no_grad():  # torch initialises biases to 0: make them visible
            mha.in_proj_bias.uniform_(-0.5, 0.5)
            mha.out_proj.bias.uniform_(-0.5, 0.5)
        x = torch.randn(1, seq, d)
        mem = torch.randn(1, seq_kv, d) if seq_kv else x
        mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1) if causal else None
        with torch.no_grad():  # the reference in float64, from the same float32 values
            out, attn = mha.double()(x.double(), mem.double(), mem.double(), attn_mask=mask, need_weights=True,
                                     average_attn_weights=False)
            mha.float()
        W = mha.in_proj_weight.detach().numpy()
        b = mha.in_proj_bias.detach().numpy()
        with tempfile.TemporaryDirectory() as tmp:
            inp, wts, res = (os.path.join(tmp, n) for n in ("x.npz", "w.npz", "out.npz"))
            arrays = {"x": x.numpy()}
            if seq_kv:
                arrays["memory"] = mem.numpy()
            np.savez(inp, **arrays)
            np.savez(wts, W_q=W[:d].T, W_k=W[d:2 * d].T, W_v=W[2 * d:].T,
                     b_q=b[:d], b_k=b[d:2 * d], b_v=b[2 * d:],
                     W_o=mha.out_proj.weight.detach().numpy().T, b_o=mha.out_proj.bias.detach().numpy())
            args = [MHAVIZ, "trace", "--input", inp, "--weights", wts, "--heads", str(heads),
                    "--norm", "none", "--npz", res, "--quiet"]
            if causal:
                args += ["--mask", "causal"]
            r = subprocess.run(args, capture_output=True, text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            z = np.load(res)
        # Relative to each tensor's scale; the projections' d terms are the longest sums.
        assert_close(z["attn"], attn.numpy(), "attention weights against torch", terms=d)
        assert_close(z["attn_out"], out.numpy(), "output against torch", terms=d)

    def test_self_attention(self):
        self.check(seq=7, d=64, heads=8)

    def test_lesson_size(self):
        self.check(seq=16, d=512, heads=8, seed=1)

    def test_causal(self):
        self.check(seq=9, d=48, heads=6, causal=True, seed=2)

    def test_cross_attention(self):
        self.check(seq=5, d=32, heads=4, seq_kv=8, seed=3)

    def test_single_head(self):
        self.check(seq=4, d=16, heads=1, seed=4)


if __name__ == "__main__":
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
