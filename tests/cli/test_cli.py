"""CLI tests of `mhaviz trace`: the table, the exports checked by an independent numpy
recomputation, the round trip, and every validation message and error path.

usage: test_cli.py PATH/TO/mhaviz
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from checks import assert_close, float32_tol, max_diff  # noqa: E402
from mha_numpy import recompute  # noqa: E402

MHAVIZ = None


def assert_trace_close(z, ref, what=""):
    """Every recomputed tensor within checks.float32_tol of its own scale; the longest
    reduction on the way to any of them is d_model long (the projections)."""
    d = z["x"].shape[-1]
    for name, want in ref.items():
        assert_close(z[name], want, f"{what}{name} against numpy", terms=d)


class Archive(dict):
    """A dict that reads like np.load's archive, for recompute() on changed weights."""
    @property
    def files(self):
        return list(self)


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("DISPLAY", None)  # headless commands must not need a display
    if env:
        e.update(env)
    return subprocess.run([MHAVIZ, *args], capture_output=True, text=True, env=e, timeout=120)


class Base(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def ok(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, f"mhaviz {' '.join(args)} failed:\n{r.stderr}")
        return r

    def fails(self, code, *args, says=()):
        r = run(*args)
        self.assertEqual(r.returncode, code, f"expected exit {code} for {args}, got {r.returncode}\n{r.stderr}")
        self.assertIn("error:", r.stderr)
        self.assertEqual(r.stdout, "", "errors go to stderr only")
        for s in says:
            self.assertIn(s, r.stderr)
        return r

    def assertNoFilesLeft(self):
        self.assertEqual(os.listdir(self.dir), [], "a failed run left files behind")


class TraceTable(Base):
    def test_korean_sentence_table(self):
        r = self.ok("trace", "--sentence", "고양이가 쥐를 잡았다")
        self.assertIn("tokens (3): [고양이가] [쥐를] [잡았다]", r.stdout)
        for step, shape in [("input", "(1, 3, 512)"), ("Q projection", "(1, 3, 512)"),
                            ("split heads", "(1, 8, 3, 64)"), ("scores", "(1, 8, 3, 3)"),
                            ("softmax", "(1, 8, 3, 3)"), ("context", "(1, 8, 3, 64)"),
                            ("concat", "(1, 3, 512)"), ("output projection", "(1, 3, 512)"),
                            ("residual + LayerNorm", "(1, 3, 512)")]:
            line = next((l for l in r.stdout.splitlines() if l.startswith(step)), None)
            self.assertIsNotNone(line, f"no row for {step}")
            self.assertIn(shape, line)
        # FLOPs of the Q projection: 2 * seq * d^2 + seq * d (bias).
        self.assertIn(f"{2 * 3 * 512 * 512 + 3 * 512:,}", r.stdout)
        # The columns line up: every row's separators where the header's are (the
        # longest cell of a column had run one space past them).
        rows = [l for l in r.stdout.splitlines() if "|" in l or "-+-" in l]
        bars = [[i for i, ch in enumerate(l) if ch == ("+" if "-+-" in l else "|")] for l in rows]
        self.assertTrue(len(rows) >= 12 and all(b == bars[0] for b in bars), "\n".join(rows))

    def test_gqa_and_cross_shapes(self):
        r = self.ok("trace", "--sentence", "a b c d", "--heads", "8", "--d-model", "64", "--kv-heads", "2",
                    "--memory", "x y")
        self.assertIn("cross-attention", r.stdout)
        self.assertIn("(1, 8, 4, 2)", r.stdout)        # scores: 4 queries x 2 memory keys
        self.assertIn("W_K (64, 16)", r.stdout)        # 2 K/V heads x head_dim 8

    def test_help_and_version(self):
        r = self.ok("trace", "--help")
        for flag in ["--sentence", "--heads", "--d-model", "--kv-heads", "--seed", "--mask", "--norm",
                     "--no-scale", "--no-pe", "--memory", "--input", "--weights", "--npz", "--json"]:
            self.assertIn(flag, r.stdout)
        self.assertRegex(self.ok("--version").stdout, r"^mhaviz \d+\.\d+\.\d+")


class Exports(Base):
    CONFIGS = [
        ([], {}),
        (["--heads", "4", "--d-model", "32", "--mask", "causal", "--norm", "pre"],
         dict(heads=4, mask="causal", norm="pre")),
        (["--heads", "6", "--d-model", "48", "--kv-heads", "2", "--norm", "none", "--no-scale"],
         dict(heads=6, kv_heads=2, norm="none", scale=False)),
        (["--heads", "2", "--d-model", "16", "--memory", "쥐를 잡았다 !", "--temperature", "0.5"],
         dict(heads=2, temperature=0.5)),
        (["--heads", "1", "--d-model", "8", "--kv-heads", "1", "--no-pe", "--seed", "7"], dict(heads=1)),
    ]

    def test_numpy_recomputation_matches(self):
        for flags, kw in self.CONFIGS:
            with self.subTest(flags=flags):
                out = self.path("t.npz")
                self.ok("trace", "--sentence", "고양이가 쥐를 잡았다, and the cat sat.", "--npz", out, "--quiet", *flags)
                z = np.load(out)
                for name in z.files:
                    self.assertEqual(z[name].dtype, np.float32, name)
                kw = dict(kw)
                kw.setdefault("heads", 8)
                assert_trace_close(z, recompute(z, **kw))
                # Each row is normalised exactly; float32 sums its seq_kv terms.
                sums = z["attn"].sum(-1, dtype=np.float64)
                self.assertLessEqual(max_diff(sums, np.ones_like(sums)), float32_tol(1.0, z["attn"].shape[-1]))

    def test_tolerance_power(self):
        """The tolerance passes float32 rounding and fails a defect: mhaviz's tensors still
        match numpy run on weights one ulp off, and fail where one weight is wrong (W_Q's
        largest entry zeroed) or two heads of W_V are swapped."""
        out = self.path("p.npz")
        self.ok("trace", "--sentence", "고양이가 쥐를 잡았다, and the cat sat.", "--npz", out, "--quiet")
        z = np.load(out)
        base = Archive((k, z[k]) for k in z.files)
        ulp = Archive(base)
        for k in ("W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "ln_gamma", "ln_beta"):
            ulp[k] = np.nextafter(base[k], np.float32(np.inf))
        assert_trace_close(z, recompute(ulp, heads=8), "every weight one ulp up: ")
        wq = Archive(base)
        wq["W_q"] = base["W_q"].copy()
        wq["W_q"].flat[np.argmax(np.abs(base["W_q"]))] = 0
        with self.assertRaises(AssertionError, msg="W_Q's largest entry zeroed must fail"):
            assert_trace_close(z, recompute(wq, heads=8))
        wv = Archive(base)
        hd = z["x"].shape[-1] // 8
        wv["W_v"] = np.concatenate([base["W_v"][:, hd:2 * hd], base["W_v"][:, :hd], base["W_v"][:, 2 * hd:]], 1)
        with self.assertRaises(AssertionError, msg="heads 0 and 1 of W_V swapped must fail"):
            assert_trace_close(z, recompute(wv, heads=8))

    def test_json(self):
        out = self.path("t.json")
        npz = self.path("t.npz")
        self.ok("trace", "--sentence", "고양이가 쥐를 잡았다", "--heads", "2", "--d-model", "8", "--json", out,
                "--npz", npz, "--mask", "causal")
        with open(out, encoding="utf-8") as f:
            j = json.load(f)
        self.assertEqual(j["tokens"], ["고양이가", "쥐를", "잡았다"])
        self.assertEqual(j["config"]["num_heads"], 2)
        self.assertEqual(j["config"]["mask"], "causal")
        self.assertEqual([r["tensor"] for r in j["shape_flow"]][-1], "out")
        a = np.array(j["attention"])
        self.assertEqual(a.shape, (2, 3, 3))
        np.testing.assert_allclose(a, np.load(npz)["attn"][0], atol=1e-7)
        self.assertEqual(a[0, 0, 1], 0.0)

    def test_round_trip(self):
        """A trace fed back through --input/--weights reproduces itself."""
        for flags in (["--heads", "4", "--d-model", "32"],
                      ["--heads", "4", "--d-model", "32", "--kv-heads", "2", "--norm", "pre", "--mask", "causal"],
                      ["--heads", "2", "--d-model", "16", "--memory", "x y z"]):
            with self.subTest(flags=flags):
                a, b = self.path("a.npz"), self.path("b.npz")
                self.ok("trace", "--sentence", "one two three four", "--npz", a, "--quiet", *flags)
                rest = [f for i, f in enumerate(flags) if f not in ("--memory", "--kv-heads") and
                        (i == 0 or flags[i - 1] not in ("--memory", "--kv-heads"))]
                self.ok("trace", "--input", a, "--weights", a, "--npz", b, "--quiet", *rest)
                za, zb = np.load(a), np.load(b)
                self.assertEqual(sorted(za.files), sorted(zb.files))
                for k in za.files:
                    np.testing.assert_array_equal(za[k], zb[k], err_msg=k)

    def test_input_shapes_and_missing_bias(self):
        x = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
        w = {n: np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32) * 0.3
             for n in ("W_q", "W_k", "W_v", "W_o")}
        np.savez(self.path("x.npz"), x=x)
        np.savez(self.path("w.npz"), **w)
        out = self.path("o.npz")
        self.ok("trace", "--input", self.path("x.npz"), "--weights", self.path("w.npz"), "--heads", "2",
                "--npz", out, "--quiet")
        z = np.load(out)
        np.testing.assert_array_equal(z["x"][0], x)        # no positional encoding added to --input
        np.testing.assert_array_equal(z["b_q"], 0)          # a missing bias is 0
        assert_trace_close(z, recompute(z, heads=2))
        # d_model comes from the file: 6 heads divide 48 even though they don't divide the default 512.
        np.savez(self.path("x48.npz"), x=np.ones((3, 48), np.float32))
        self.ok("trace", "--input", self.path("x48.npz"), "--heads", "6", "--quiet")
        # (1, seq, d_model) and float64 are accepted too.
        np.savez(self.path("x3.npz"), x=x[None].astype(np.float64))
        self.ok("trace", "--input", self.path("x3.npz"), "--heads", "2", "--quiet")


class Errors(Base):
    def test_usage_errors_exit_2(self):
        cases = [
            (["--d-model", "100", "--heads", "8"], ["d_model = 100 is not divisible by num_heads = 8",
                                                   "Try d_model = 96 or 104"]),
            (["--heads", "8", "--kv-heads", "3"], ["num_heads = 8 is not divisible by num_kv_heads = 3"]),
            (["--heads", "0"], ["num_heads = 0 must be at least 1"]),
            (["--d-model", "-5"], ["must be greater than 0"]),
            (["--d-model", "2000000"], ["cap of 4096"]),
            (["--heads", "abc"], ["--heads expects a whole number, got 'abc'"]),
            (["--kv-heads", "0"], ["--kv-heads = 0 must be at least 1"]),
            (["--mask", "future"], ["--mask must be 'none' or 'causal'"]),
            (["--norm", "middle"], ["--norm must be 'post'"]),
            (["--frobnicate"], ["unknown flag '--frobnicate'"]),
            (["hello"], ["unexpected argument 'hello'"]),
            (["--sentence"], ["--sentence needs a value, but the next argument is the flag '--npz'"]),
            (["--sentence", "   "], ["empty"]),
            (["--memory", "a b", "--mask", "causal"], ["no 'later' to hide"]),
            (["--temperature", "0"], ["temperature = 0 must be"]),
            (["--heads", "99999999999"], ["far outside"]),
        ]
        for flags, says in cases:
            with self.subTest(flags=flags):
                self.fails(2, "trace", *flags, "--npz", self.path("o.npz"), says=says)
                self.assertNoFilesLeft()

    def test_runtime_errors_exit_1_and_leave_nothing(self):
        missing = self.path("nope.npz")
        self.fails(1, "trace", "--input", missing, "--npz", self.path("o.npz"), says=["Cannot read", "nope.npz"])
        with open(self.path("junk.npz"), "wb") as f:
            f.write(os.urandom(300))
        self.fails(1, "trace", "--weights", self.path("junk.npz"), says=["not a valid .npz"])
        np.savez(self.path("w.npz"), W_q=np.zeros((4, 4), np.float32))
        self.fails(1, "trace", "--weights", self.path("w.npz"), "--d-model", "4", "--heads", "2",
                   says=["has no array 'W_k'"])
        np.savez(self.path("w2.npz"), W_q=np.eye(8, dtype=np.float32), W_k=np.eye(8, dtype=np.float32),
                 W_v=np.eye(8, dtype=np.float32), W_o=np.full((8, 8), np.nan, np.float32))
        self.fails(1, "trace", "--weights", self.path("w2.npz"), "--d-model", "8", "--heads", "2",
                   says=["W_o contains NaN or Inf"])
        np.savez(self.path("w3.npz"), W_q=np.eye(8, dtype=np.float32), W_k=np.eye(8, 6, dtype=np.float32),
                 W_v=np.eye(8, dtype=np.float32), W_o=np.eye(8, dtype=np.float32))
        self.fails(1, "trace", "--weights", self.path("w3.npz"), "--d-model", "8", "--heads", "2",
                   "--kv-heads", "2", says=["W_k", "(8, 6)", "(8, 8)"])
        for f in ("junk.npz", "w.npz", "w2.npz", "w3.npz"):
            os.remove(self.path(f))
        self.assertNoFilesLeft()

    def test_unwritable_output_leaves_nothing_and_keeps_old_file(self):
        self.fails(1, "trace", "--npz", self.path("no/such/dir/o.npz"), says=["does not exist"])
        self.assertNoFilesLeft()
        # A path whose parent is a regular file cannot be created, even by root.
        blocker = self.path("file")
        with open(blocker, "w") as f:
            f.write("keep me")
        self.fails(1, "trace", "--json", os.path.join(blocker, "o.json"), says=["Cannot write"])
        self.assertEqual(os.listdir(self.dir), ["file"])
        with open(blocker) as f:
            self.assertEqual(f.read(), "keep me")
        # Two outputs, one of them impossible: neither is written.
        self.fails(1, "trace", "--npz", self.path("good.npz"), "--json", os.path.join(blocker, "o.json"))
        self.assertEqual(os.listdir(self.dir), ["file"])


class GuiRefusesWhatTraceRefuses(Base):
    """`gui` and `trace` share one declaration of the flags that say what to compute, so
    a usage error is the same error, with exit status 2, in both. Without a display, a
    `gui` that wrongly accepted the flags would exit 1 ("cannot open a window") instead."""

    def setUp(self):
        super().setUp()
        if run("gui", "--help").returncode != 0:
            self.skipTest("built without the GUI")
        self.x = self.path("x.npz")
        np.savez(self.x, x=np.ones((3, 16), np.float32))
        self.s = self.path("s.txt")
        with open(self.s, "w") as f:
            f.write("the cat sat")

    def same_error(self, *args, says):
        env = {"XDG_CONFIG_HOME": self.path("config")}
        t = run("trace", *args, env=env)
        g = run("gui", "--no-settings", *args, env=env)
        self.assertEqual(t.returncode, 2, t.stderr)
        self.assertIn(says, t.stderr)
        self.assertEqual((g.returncode, g.stderr.replace("mhaviz gui", "mhaviz trace")), (t.returncode, t.stderr),
                         f"gui and trace disagree on {args}")

    def test_input_with_a_different_d_model(self):
        # The gui used to take d_model from the file silently.
        self.same_error("--input", self.x, "--d-model", "32", says="does not match")

    def test_input_with_a_sentence_file(self):
        # The gui used to accept both and use the file's x.
        self.same_error("--input", self.x, "--sentence-file", self.s, says="not both")

    def test_input_with_a_sentence(self):
        self.same_error("--input", self.x, "--sentence", "the cat", says="not both")

    def test_sentence_and_sentence_file(self):
        self.same_error("--sentence", "x", "--sentence-file", self.s, says="not both")

    def test_bad_values(self):
        for args, says in [(["--heads", "abc"], "expects a whole number"), (["--mask", "upper"], "'causal'"),
                           (["--memory", ""], "--memory is empty"), (["--kv-heads", "0"], "must be at least 1"),
                           (["--temperature", "1e300"], "far outside"), (["--sentence-file", ""], "needs a file"),
                           (["--bogus"], "unknown flag '--bogus'"), (["--heads", "--no-pe"], "needs a value"),
                           (["the", "cat"], "unexpected argument 'the'")]:
            with self.subTest(args=args):
                self.same_error(*args, says=says)


if __name__ == "__main__":
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
