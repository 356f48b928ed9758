"""`--attention flash`: trace's context against a numpy recomputation of the online
softmax (tile by tile, in float64, from the trace's own q, k and v) and against the
standard path; no seq x seq tensor exported, and the table and JSON say so; bench's
JSON (peak_rss_mb) and its refusal of standard attention past its cap, naming Flash
attention and the bytes.

usage: test_flash.py PATH/TO/mhaviz
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

MHAVIZ = None


def run(*args):
    e = dict(os.environ)
    e.pop("DISPLAY", None)
    return subprocess.run([MHAVIZ, *args], capture_output=True, text=True, env=e, timeout=120)


def online_softmax_attention(q, k, v, scale, causal, br, bc):
    """Flash attention's forward for one head, written from the algorithm: running max m,
    running sum l and unnormalised output O per query row, rescaled by exp(m_old - m_new)
    whenever a key block raises the max, divided by l at the end."""
    n, m_keys = q.shape[0], k.shape[0]
    out = np.zeros((n, v.shape[1]))
    for r0 in range(0, n, br):
        rows = slice(r0, min(n, r0 + br))
        m = np.full(rows.stop - r0, -np.inf)
        l = np.zeros(rows.stop - r0)
        o = np.zeros((rows.stop - r0, v.shape[1]))
        for c0 in range(0, m_keys, bc):
            cols = slice(c0, min(m_keys, c0 + bc))
            s = scale * q[rows] @ k[cols].T
            if causal:
                i = np.arange(r0, rows.stop)[:, None]
                j = np.arange(c0, cols.stop)[None, :]
                s = np.where(j <= i, s, -np.inf)
            m_new = np.maximum(m, s.max(axis=1))
            seen = np.isfinite(m_new)  # rows that have seen a key by now
            m_safe = np.where(seen, m_new, 0.0)
            alpha = np.where(np.isfinite(m), np.exp(m - m_safe), 0.0)
            p = np.where(seen[:, None], np.exp(s - m_safe[:, None]), 0.0)
            l = alpha * l + p.sum(axis=1)
            o = alpha[:, None] * o + p @ v[cols]
            m = m_new
        out[rows] = o / l[:, None]
    return out


class Flash(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.tmp.name, name)

    def trace(self, *args, attention="standard"):
        npz = self.path(f"{attention}.npz")
        r = run("trace", "--attention", attention, "--npz", npz, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r, dict(np.load(npz))

    def check_config(self, *args, causal=False, scale=True, temperature=1.0):
        r, f = self.trace(*args, attention="flash")
        _, s = self.trace(*args)
        self.assertNotIn("scores", f)
        self.assertNotIn("attn", f)
        self.assertIn("attn", s)
        self.assertIn("no seq x seq_kv tensor was kept", r.stdout)
        self.assertIn("online softmax", r.stdout)  # the table's softmax row says how
        q, k, v, ctx = (f[n].astype(np.float64) for n in ("q", "k", "v", "context"))
        H, G, hd = q.shape[1], k.shape[1], q.shape[3]
        sc = (1.0 / np.sqrt(np.float32(hd)) if scale else 1.0) / temperature
        for h in range(H):
            g = h // (H // G)
            for br, bc in ((64, 128), (3, 5)):  # the default tile, and one that divides nothing
                want = online_softmax_attention(q[0, h], k[0, g], v[0, g], sc, causal, br, bc)
                # float32 against float64: 2e-6, relative past 1 (a few ulps of the value)
                np.testing.assert_allclose(ctx[0, h], want, atol=2e-6, rtol=2e-6,
                                           err_msg=f"head {h}, tile {br} x {bc}")
        for name in ("context", "concat", "attn_out"):
            np.testing.assert_allclose(f[name], s[name], atol=2e-6, rtol=2e-6, err_msg=name)

    def test_self_attention_numpy(self):
        self.check_config("--sentence", "the quick brown fox jumps over the lazy dog " * 8, "--d-model", "64",
                          "--heads", "4")

    def test_causal_gqa_no_scale_temperature(self):
        self.check_config("--sentence", "one two three four five six seven eight nine ten " * 14, "--d-model", "96",
                          "--heads", "6", "--kv-heads", "2", "--mask", "causal", "--no-scale", "--temperature", "4",
                          "--norm", "pre", causal=True, scale=False, temperature=4.0)

    def test_cross_attention_mqa(self):
        self.check_config("--sentence", "the cat sat on the mat " * 5, "--memory",
                          "고양이가 매트 위에 앉았다 그리고 잤다 " * 17, "--d-model", "48", "--heads", "3",
                          "--kv-heads", "1")

    def test_mhaviz_small_layers(self):
        # The shipped language model, every layer: Flash gives the standard path's numbers
        # and the same next-piece predictions.
        sentence = "The cat sat on the mat, and 고양이가 쥐를 잡았다. " * 4
        for layer in ("0", "1"):
            got = {}
            for attention in ("standard", "flash"):
                npz, js = self.path(f"{attention}{layer}.npz"), self.path(f"{attention}{layer}.json")
                r = run("trace", "--model", "mhaviz-small", "--sentence", sentence, "--layer", layer,
                        "--attention", attention, "--npz", npz, "--json", js, "--top-k", "3")
                self.assertEqual(r.returncode, 0, r.stderr)
                with open(js) as fh:
                    got[attention] = (dict(np.load(npz)), json.load(fh), r.stdout)
            (s, sj, _), (f, fj, out) = got["standard"], got["flash"]
            self.assertIn("no seq x seq_kv tensor was kept", out)
            self.assertNotIn("attn", f)
            self.assertNotIn("attention", fj)
            # Layer 0 reads the same input both ways: 2e-6. Layer 1 reads layer 0's output,
            # which carries layer 0's differences through LayerNorm and the FFN (each layer
            # on one input is held to 2e-6 in lm_tests); the logits carry every layer's.
            tol = 2e-6 if layer == "0" else 2e-5
            for name in ("context", "attn_out", "out", "logits"):
                np.testing.assert_allclose(f[name], s[name], atol=tol if name != "logits" else 1e-4, rtol=tol,
                                           err_msg=f"layer {layer}: {name}")
            self.assertEqual([[p["id"] for p in row] for row in fj["next"]],
                             [[p["id"] for p in row] for row in sj["next"]])

    def test_json_keeps_no_weights_and_says_so(self):
        out = self.path("t.json")
        r = run("trace", "--attention", "flash", "--json", out, "--d-model", "32", "--heads", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out) as fh:
            j = json.load(fh)
        self.assertNotIn("attention", j)
        self.assertIn("kept no attention weights", j["attention_note"])
        self.assertEqual(j["config"]["attention"], "flash")
        self.assertEqual(j["config"]["flash_tile"], [64, 128])
        steps = [row["tensor"] for row in j["shape_flow"]]
        self.assertNotIn("attn", steps)
        self.assertNotIn("scores", steps)

    def test_bad_attention_value(self):
        r = run("trace", "--attention", "fast")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--attention must be 'standard'", r.stderr)

    def test_bench_reports_peak_memory(self):
        for attention in ("standard", "flash"):
            r = run("bench", "--attention", attention, "--seq", "40", "--d-model", "32", "--heads", "4",
                    "--repeat", "2")
            self.assertEqual(r.returncode, 0, r.stderr)
            j = json.loads(r.stdout.strip().splitlines()[-1])
            self.assertEqual(j["attention"], attention)
            self.assertGreater(j["peak_rss_mb"], 1.0)
            self.assertLess(j["peak_rss_mb"], 1500.0)
            self.assertEqual(j["tile"], [40, 128] if attention == "flash" else [0, 0])

    def test_bench_standard_refused_past_its_cap(self):
        r = run("bench", "--attention", "standard", "--seq", "32768", "--d-model", "512", "--heads", "8")
        self.assertEqual(r.returncode, 2, r.stdout)
        # 2 (scores and attn) x 8 heads x 32768^2 x 4 bytes
        self.assertIn(f"{2 * 8 * 32768 * 32768 * 4} bytes", r.stderr)
        self.assertIn("Flash attention", r.stderr)
        self.assertIn("--attention flash", r.stderr)
        self.assertIn("1.5 GB", r.stderr)
        r = run("bench", "--seq", "2048", "--d-model", "64", "--heads", "2")  # standard is the default
        self.assertEqual(r.returncode, 2)
        self.assertIn("Flash attention", r.stderr)
        r = run("bench", "--attention", "flash", "--seq", "32769")
        self.assertEqual(r.returncode, 2)
        self.assertIn("32768", r.stderr)


if __name__ == "__main__":
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main()
