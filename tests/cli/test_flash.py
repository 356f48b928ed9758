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

sys.path.insert(0, os.path.dirname(__file__))
from checks import assert_close  # noqa: E402

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
                # float32 against float64, from the same q, k, v: relative to the context's
                # scale (checks.float32_tol), the scores' hd and the weighted sum's seq_kv terms.
                assert_close(ctx[0, h], want, f"head {h}, tile {br} x {bc}", hd + k.shape[2])
        # Two float32 results, each within the bound of the exact one: twice its ulps. Both
        # paths share the projections; they differ in the attention and W_O's d_model sums.
        terms = k.shape[2] + hd + f["attn_out"].shape[-1]
        for name in ("context", "concat", "attn_out"):
            assert_close(f[name], s[name], f"flash against standard: {name}", terms, ulps=32)

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
            # Two float32 results: twice the bound's ulps. The paths differ in each layer's
            # attention sums (hd and seq terms) and W_O's d_model; layer 1 reads layer 0's
            # output, so it carries layer 0's differences too, as the logits carry both.
            seq, hd = f["context"].shape[-2:]
            terms = (int(layer) + 1) * (seq + hd + f["attn_out"].shape[-1])
            for name in ("context", "attn_out", "out", "logits"):
                assert_close(f[name], s[name], f"layer {layer}: {name}", terms, ulps=32)
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
