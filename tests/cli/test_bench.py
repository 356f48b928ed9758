"""Smoke test of `mhaviz bench` (no timing assertions: CI machines vary): it runs, exits 0,
and its last stdout line is one JSON object with the promised keys; bad flags get a
teaching error and exit status 2. The real comparison is scripts/compare_torch.py.

usage: test_bench.py PATH/TO/mhaviz
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

MHAVIZ = None
KEYS = {"isa", "seq", "d_model", "heads", "threads", "median_ms", "min_ms", "gflops", "cpu_median_ms"}
ISAS = {"avx512", "avx2", "portable", "scalar"}  # core/include/mha/isa.hpp


def run(*args):
    e = dict(os.environ)
    e.pop("DISPLAY", None)  # headless
    return subprocess.run([MHAVIZ, "bench", *args], capture_output=True, text=True, env=e, timeout=120)


class Bench(unittest.TestCase):
    def last_json(self, *args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertTrue(lines, "bench printed nothing")
        j = json.loads(lines[-1])
        self.assertIsInstance(j, dict)
        self.assertLessEqual(KEYS, set(j), f"missing keys in {j}")
        return j

    def test_names_its_kernels(self):
        # every number names the code path that made it: a "kernels:" line, the JSON's isa
        r = run("--seq", "8", "--d-model", "32", "--heads", "4", "--repeat", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        line = next((l for l in r.stdout.splitlines() if l.startswith("kernels: ")), None)
        self.assertIsNotNone(line, r.stdout)
        isa = json.loads(r.stdout.strip().splitlines()[-1])["isa"]
        self.assertIn(isa, ISAS)
        words = {"avx512": "AVX-512", "avx2": "AVX2 + FMA", "portable": "portable", "scalar": "plain C++"}
        self.assertIn(words[isa], line)

    def test_small_shape(self):
        j = self.last_json("--seq", "8", "--d-model", "32", "--heads", "4", "--repeat", "3")
        self.assertEqual((j["seq"], j["d_model"], j["heads"], j["threads"]), (8, 32, 4, 1))
        self.assertGreater(j["min_ms"], 0)
        self.assertGreaterEqual(j["median_ms"], j["min_ms"])
        self.assertGreater(j["gflops"], 0)
        # gflops is the FLOP count of the median run: 8*n*d^2 + 4*n^2*d over the time.
        flops = 8 * 8 * 32 * 32 + 4 * 8 * 8 * 32
        self.assertAlmostEqual(j["gflops"], flops / (j["median_ms"] * 1e-3) / 1e9,
                               delta=0.01 * j["gflops"] + 1e-3)

    def test_train_step(self):
        # bench --train: one training step of train's model, with the same time keys as bench.
        r = run("--train", "--layers", "2", "--heads", "2", "--d-model", "16", "--batch", "8", "--repeat", "3")
        self.assertEqual(r.returncode, 0, r.stderr)
        j = json.loads(r.stdout.strip().splitlines()[-1])
        self.assertLessEqual({"mode", "isa", "layers", "heads", "d_model", "batch", "seq", "median_ms", "min_ms",
                              "cpu_median_ms", "threads_used", "params", "optimizer_median_ms"}, set(j),
                             f"missing keys in {j}")
        self.assertEqual((j["mode"], j["layers"], j["heads"], j["d_model"], j["batch"]), ("train", 2, 2, 16, 8))
        self.assertIn(j["isa"], ISAS)
        self.assertIn("kernels: ", r.stdout)
        self.assertGreaterEqual(j["median_ms"], j["min_ms"])
        self.assertGreater(j["min_ms"], 0)
        # the optimizer's part of every step is less than the step: so are their medians
        self.assertGreater(j["optimizer_median_ms"], 0)
        self.assertLessEqual(j["optimizer_median_ms"], j["median_ms"])

    def test_train_refuses_flags_it_does_not_time(self):
        # --steps and --warmup shape `mhaviz train`'s schedule, not a step's cost: refused
        # with what to use instead (they used to be accepted and ignored).
        for flag in (["--steps", "5"], ["--warmup=3"]):
            r = run("--train", "--d-model", "16", "--heads", "2", "--repeat", "2", *flag)
            self.assertEqual(r.returncode, 2, f"{flag}: {r.stdout} {r.stderr}")
            self.assertIn("--repeat N", r.stderr)
            self.assertIn(flag[0].split("=")[0], r.stderr)
            self.assertNotIn("{", r.stdout, "timed anyway")
        r = run("--train", "--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("--steps", r.stdout)
        self.assertIn("--repeat", r.stdout)

    def test_two_threads_and_gqa(self):
        j = self.last_json("--seq", "20", "--d-model", "48", "--heads", "6", "--kv-heads", "2",
                           "--threads", "2", "--repeat", "2")
        self.assertEqual((j["threads"], j["heads"], j["kv_heads"]), (2, 6, 2))

    def test_live(self):
        # Every kind of change the app recomputes after, each checked inside the bench
        # against a fresh computation (it exits 1 if the live trace differs).
        j = self.last_json_of(["--live", "--seq", "6", "--d-model", "32", "--heads", "4", "--repeat", "3"])
        self.assertEqual((j["seq"], j["d_model"], j["heads"], j["threads"]), (6, 32, 4, 1))
        self.assertEqual(set(j["actions"]), {"idle", "word", "temperature", "scale", "mask", "norm", "heads",
                                             "kv_heads", "d_model", "seed"})
        for name, a in j["actions"].items():
            self.assertGreater(a["min_ms"], 0, name)
            self.assertGreaterEqual(a["median_ms"], a["min_ms"], name)

    def last_json_of(self, args):
        r = run(*args)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads(r.stdout.strip().splitlines()[-1])

    def test_train_step(self):
        r = run("--train", "--layers", "2", "--heads", "2", "--d-model", "16", "--block", "encoder", "--batch", "8",
                "--repeat", "3", "--threads", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(sum(l.startswith("step ") for l in lines), 3, r.stdout)
        j = json.loads(lines[-1])
        self.assertEqual((j["mode"], j["layers"], j["heads"], j["d_model"], j["block"], j["batch"], j["repeat"]),
                         ("train", 2, 2, 16, "encoder", 8, 3))
        self.assertGreater(j["min_ms"], 0)
        self.assertGreaterEqual(j["median_ms"], j["min_ms"])
        r = run("--train", "--heads", "3", "--d-model", "16")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("d_model", r.stderr)

    def test_train_step_of_the_shipped_shape(self):
        # The shipped language model's shape: its tokenizer's 4000 pieces as the vocabulary
        # (--task text, on a small text of our own), or 4000 tokens of a generated task.
        models = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "models")
        shape = ["--layers", "2", "--heads", "4", "--d-model", "128", "--block", "encoder", "--activation", "gelu",
                 "--norm", "pre", "--pos", "learned", "--seq", "64"]
        with tempfile.TemporaryDirectory() as tmp:
            corpus = os.path.join(tmp, "text.txt")
            with open(corpus, "w", encoding="utf-8") as f:
                for i in range(200):
                    f.write(f"Line {i}: attention weighs every earlier token, and the heads split the work. "
                            f"{i}번째 줄: 각 헤드는 서로 다른 위치를 봅니다.\n")
            j = self.last_json_of(["--train", "--task", "text", "--corpus", corpus, "--tokenizer",
                                   os.path.join(models, "mhaviz-small.model"), "--batch", "2", "--repeat", "1"] + shape)
            # 1432992: the parameter count the shipped model's training log states
            self.assertEqual((j["vocab"], j["params"], j["activation"], j["seq"]), (4000, 1432992, "gelu", 64))
            r = run("--train", "--task", "text", "--corpus", corpus, "--repeat", "1")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--tokenizer", r.stderr)
            r = run("--train", "--corpus", corpus, "--repeat", "1")
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--task text", r.stderr)
        j = self.last_json_of(["--train", "--vocab", "4000", "--offsets", "1", "--batch", "2", "--repeat", "1"] + shape)
        self.assertEqual((j["vocab"], j["params"]), (4000, 1432992))
        # The logits count in the step's memory: 65536 tokens over 2048 x 64 rows is 32 GiB.
        r = run("--train", "--vocab", "65536", "--batch", "2048", "--seq", "64", "--repeat", "1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("MiB of logits", r.stderr)
        self.assertIn("smaller vocabulary", r.stderr)

    def test_help(self):
        r = run("--help")
        self.assertEqual(r.returncode, 0)
        self.assertIn("--seq", r.stdout)

    def fails(self, *args, says):
        r = run(*args)
        self.assertEqual(r.returncode, 2, f"expected exit 2 for {args}, got {r.returncode}: {r.stderr}")
        self.assertEqual(r.stdout, "")
        self.assertIn("mhaviz bench: error:", r.stderr)
        self.assertIn(says, r.stderr)

    def test_bad_flags_teach(self):
        self.fails("--seq", "8", "--d-model", "30", "--heads", "4", says="not divisible by num_heads")
        self.fails("--seq", "0", says="--seq = 0 must be between 1 and")
        self.fails("--seq", "many", says="expects a whole number")
        self.fails("--seq", "8", "--threads", "0", says="--threads = 0 must be between 1 and")
        self.fails("--seq", "8", "--repeat", "0", says="--repeat = 0 must be between 1")
        self.fails("--seq", "8", "--heads", "4", "--kv-heads", "3", says="num_kv_heads")
        self.fails("--frobnicate", says="unknown flag '--frobnicate'")
        self.fails("--seq", says="--seq needs a value")
        self.fails("hello", says="takes only flags")


if __name__ == "__main__":
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
