"""`mhaviz trace --model`: a trained checkpoint's layer traced like a sentence, checked
against an independent numpy recomputation from the checkpoint alone; bad combinations
of flags get a usage error.

usage: test_trace_model.py PATH/TO/mhaviz
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from checks import assert_close  # noqa: E402

MHAVIZ = None


def run(*args):
    return subprocess.run([MHAVIZ, *args], capture_output=True, text=True, timeout=120)


def layer_norm(x, g, b, eps):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


class TraceModel(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.ckpt = os.path.join(cls.tmp.name, "m.npz")
        r = run("train", "--task", "offsets", "--layers", "2", "--steps", "60", "--out", cls.ckpt)
        assert r.returncode == 0, r.stderr

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_layers_match_numpy(self):
        z = np.load(self.ckpt)
        cfg = json.loads(bytes(z["config"]).decode())
        tokens = [3, 1, 4, 1, 5, 9, 2, 6]
        S, d, H = len(tokens), cfg["d_model"], cfg["num_heads"]
        hd = d // H
        x = z["tok_embed"].astype(np.float64)[tokens] + z["pos_embed"].astype(np.float64)[:S]
        for layer in range(2):
            out = os.path.join(self.tmp.name, f"t{layer}.npz")
            r = run("trace", "--model", self.ckpt, "--tokens", " ".join(map(str, tokens)), "--layer", str(layer),
                    "--npz", out, "-q")
            self.assertEqual(r.returncode, 0, r.stderr)
            t = np.load(out)
            P = {k: z[f"layers.{layer}.{k}"].astype(np.float64) for k in
                 ["W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o", "ln_gamma", "ln_beta"]}
            # Relative to scale (checks.float32_tol); every layer so far adds its d_model-long sums.
            terms = (layer + 1) * d
            assert_close(t["x"][0], x, f"layer {layer} input", terms)
            src = layer_norm(x, P["ln_gamma"], P["ln_beta"], cfg["ln_eps"])  # pre-LN
            q, k, v = (src @ P[f"W_{n}"] + P[f"b_{n}"] for n in "qkv")
            attn = np.zeros((H, S, S))
            ctx = np.zeros((S, d))
            for h in range(H):
                sl = slice(h * hd, (h + 1) * hd)
                s = q[:, sl] @ k[:, sl].T / np.sqrt(hd)
                s[np.triu(np.ones((S, S), bool), 1)] = -np.inf
                a = np.exp(s - s.max(-1, keepdims=True))
                attn[h] = a / a.sum(-1, keepdims=True)
                ctx[:, sl] = attn[h] @ v[:, sl]
            assert_close(t["attn"][0], attn, f"layer {layer} attn", terms)
            x = x + ctx @ P["W_o"] + P["b_o"]  # pre-LN, attention only: the layer's output
            assert_close(t["out"][0], x, f"layer {layer} out", terms)

    def test_example_and_table(self):
        r = run("trace", "--model", self.ckpt, "--example", "2", "--layer", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("layer 1 of 2", r.stdout)
        self.assertIn("split heads", r.stdout)

    def test_export(self):
        png = os.path.join(self.tmp.name, "m.png")
        r = run("export", "--model", self.ckpt, "--example", "1", "--layer", "1", "--png", png, "-q")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(png, "rb") as f:
            self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
        bad = os.path.join(self.tmp.name, "bad.png")
        r = run("export", "--model", self.ckpt, "--d-model", "32", "--png", bad)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("cannot be used with --model", r.stderr)
        self.assertFalse(os.path.exists(bad))

    def test_export_header_names_the_models_positional_encoding(self):
        # The layer's own config has PE off; the header must say what the model adds.
        with np.load(self.ckpt) as z:
            pos = json.loads(bytes(z["config"]))["positional"]
        want = {"learned": "learned positional embeddings, added below layer 0",
                "sinusoidal": "sinusoidal PE, added below layer 0", "none": "no positional encoding"}[pos]
        for layer in ("0", "1"):
            svg = os.path.join(self.tmp.name, f"h{layer}.svg")
            r = run("export", "--model", self.ckpt, "--example", "1", "--layer", layer, "--svg", svg, "-q")
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(svg, encoding="utf-8") as f:
                text = f.read()
            self.assertIn(want, text)
            if pos != "none":
                self.assertNotIn("no positional encoding", text)

    def test_usage_errors(self):
        for args, words in [(["--model", self.ckpt, "--heads", "4"], "cannot be used with --model"),
                            # A sentence needs a language model's tokenizer (train --task text).
                            (["--model", self.ckpt, "--sentence", "a b"], "not a language model"),
                            (["--tokens", "1 2"], "--model"),
                            (["--model", self.ckpt, "--layer", "2"], "layer")]:
            r = run("trace", *args)
            self.assertIn(r.returncode, (1, 2), r.stderr)
            self.assertIn(words, r.stderr)
            self.assertNotIn("Traceback", r.stderr)
        r = run("trace", "--model", self.ckpt, "--tokens", "1 x 2")
        self.assertIn(r.returncode, (1, 2))
        self.assertIn("x", r.stderr)


if __name__ == "__main__":
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
