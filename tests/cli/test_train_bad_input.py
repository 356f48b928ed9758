#!/usr/bin/python3
"""Bad input to `mhaviz train` and `mhaviz grad`: every case ends with exit status 1
(runtime, files) or 2 (usage), a teaching message on stderr, and NO output file (nor a
temporary one). Also: the happy paths these start from, a diverging run, Ctrl-C.

    test_train_bad_input.py PATH/TO/mhaviz [unittest args]
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import proc_state

MHAVIZ = None  # set in main
SMALL = ["--d-model", "8", "--heads", "2", "--steps", "3", "--batch", "4", "--threads", "1"]


def run(args, timeout=120):
    return subprocess.run([MHAVIZ] + args, capture_output=True, text=True, timeout=timeout)


def save_cfg(path, cfg, params):
    np.savez(path, config=np.frombuffer(json.dumps(cfg).encode(), dtype=np.uint8), **params)


class TrainBadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = self.path("out.npz")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def refused(self, args, code, *words):
        r = run(args)
        self.assertEqual(r.returncode, code, f"{args}: rc {r.returncode}\nstdout {r.stdout}\nstderr {r.stderr}")
        for w in words:
            self.assertIn(w, r.stderr, f"{args}: stderr lacks {w!r}: {r.stderr}")
        self.assertNotIn("terminate called", r.stderr)
        self.assertFalse(os.path.exists(self.out), f"{args} left an output file")
        leftovers = [f for f in os.listdir(self.dir) if f.startswith(".mhaviz-") or ".tmp." in f]
        self.assertEqual(leftovers, [], f"{args} left temporary files")
        return r

    # A small trained model and a batch that fits it: the starting points of the cases.
    def model(self):
        m = self.path("m.npz")
        r = run(["train", "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5", "--out", m] + SMALL)
        self.assertEqual(r.returncode, 0, r.stderr)
        return m

    def batch(self, tokens=None, targets=None, name="t.npz"):
        p = self.path(name)
        tokens = np.array([[0, 1, 2, 3, 4, 0]], dtype=np.int64) if tokens is None else tokens
        targets = np.full(tokens.shape + (2,), -1, dtype=np.int64) if targets is None else targets
        np.savez(p, tokens=tokens, targets=targets)
        return p

    # --- usage errors (exit 2) ---
    def test_unknown_task(self):
        self.refused(["train", "--task", "juggle", "--out", self.out], 2, "Unknown task 'juggle'", "offsets")

    def test_no_task_no_data(self):
        self.refused(["train", "--out", self.out], 2, "--task")

    def test_missing_out(self):
        self.refused(["train", "--task", "offsets"], 2, "--out")

    def test_unknown_flag(self):
        self.refused(["train", "--task", "offsets", "--hedas", "2", "--out", self.out], 2, "--hedas", "--help")

    def test_bad_norm(self):
        self.refused(["train", "--task", "offsets", "--norm", "middle", "--out", self.out], 2, "--norm")

    def test_sizes_over_caps(self):
        self.refused(["train", "--task", "offsets", "--layers", "99", "--out", self.out], 2, "--layers")
        self.refused(["train", "--task", "offsets", "--d-model", "100000", "--out", self.out], 2, "--d-model")
        self.refused(["train", "--task", "offsets", "--d-model", "1024", "--heads", "2", "--block", "encoder",
                      "--d-ff", "16384", "--layers", "6", "--vocab", "1000", "--out", self.out], 2, "parameters")
        self.refused(["train", "--task", "offsets", "--d-model", "10", "--heads", "3", "--out", self.out], 2,
                     "divisible")
        self.refused(["train", "--task", "offsets", "--offsets", "20", "--out", self.out], 2, "offsets")
        self.refused(["train", "--task", "offsets", "--seq", "256", "--d-model", "1024", "--heads", "8", "--layers", "6",
                      "--batch", "4096", "--out", self.out], 2, "activations", "--batch")

    def test_bad_lr(self):
        self.refused(["train", "--task", "offsets", "--lr", "-1", "--out", self.out], 2, "learning rate")
        self.refused(["train", "--task", "offsets", "--lr", "abc", "--out", self.out], 2, "--lr")

    def test_model_flags_with_init(self):
        m = self.model()
        self.refused(["train", "--init", m, "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5",
                      "--heads", "4", "--out", self.out], 2, "--heads", "--init")

    # --- files (exit 1) ---
    def test_checkpoint_missing_key(self):
        m = self.model()
        z = dict(np.load(m))
        del z["layers.0.W_q"]
        bad = self.path("bad.npz")
        np.savez(bad, **z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "layers.0.W_q")

    def test_checkpoint_extra_key(self):
        m = self.model()
        z = dict(np.load(m))
        z["layers.7.W_q"] = np.zeros((8, 8), np.float32)
        bad = self.path("bad.npz")
        np.savez(bad, **z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "layers.7.W_q")

    def test_checkpoint_misshapen_key(self):
        m = self.model()
        z = dict(np.load(m))
        z["unembed.1"] = np.zeros((8, 4), np.float32)
        bad = self.path("bad.npz")
        np.savez(bad, **z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "unembed.1", "(8, 5)")

    def test_checkpoint_version_and_format(self):
        m = self.model()
        z = dict(np.load(m))
        cfg = json.loads(bytes(z.pop("config")))
        bad = self.path("bad.npz")
        save_cfg(bad, dict(cfg, version=2), z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "version 2")
        save_cfg(bad, dict(cfg, format="something-else"), z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "not an mhaviz model")
        save_cfg(bad, {k: v for k, v in cfg.items() if k != "num_heads"}, z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "num_heads")
        save_cfg(bad, dict(cfg, num_layers=1000), z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "layers")

    def test_checkpoint_config_not_json(self):
        m = self.model()
        z = dict(np.load(m))
        z["config"] = np.frombuffer(b"{not json", dtype=np.uint8)
        bad = self.path("bad.npz")
        np.savez(bad, **z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "not JSON")
        z["config"] = np.zeros(3, np.float32)
        np.savez(bad, **z)
        self.refused(["grad", "--model", bad, "--data", self.batch(), "--out", self.out], 1, "uint8")

    def test_not_a_checkpoint(self):
        t = self.batch()
        self.refused(["grad", "--model", t, "--data", t, "--out", self.out], 1, "no 'config'")
        self.refused(["grad", "--model", self.path("nope.npz"), "--data", t, "--out", self.out], 1, "nope.npz")

    def test_token_ids_outside_vocabulary(self):
        m = self.model()
        t = self.batch(tokens=np.array([[0, 1, 2, 3, 9, 0]]))
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, "Token id 9", "vocabulary")
        self.refused(["train", "--init", m, "--data", t, "--out", self.out], 1, "Token id 9")

    def test_data_shapes_disagree(self):
        m = self.model()
        t = self.batch(targets=np.zeros((1, 6, 3), np.int64))  # 3 targets; the model predicts 2
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, "3 targets", "predicts 2")
        t = self.batch(tokens=np.zeros((1, 9), np.int64), targets=np.zeros((1, 9, 2), np.int64))
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, "max_seq")
        t = self.batch(tokens=np.zeros((2, 6), np.int64), targets=np.zeros((1, 6, 2), np.int64))
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, "'targets' has shape")
        p = self.path("floats.npz")
        np.savez(p, tokens=np.zeros((1, 6), np.float32), targets=np.zeros((1, 6, 2), np.int64))
        self.refused(["grad", "--model", m, "--data", p, "--out", self.out], 1, "integers")
        np.savez(p, tokens=np.zeros((1, 6), np.int64))
        self.refused(["grad", "--model", m, "--data", p, "--out", self.out], 1, "targets")

    def test_diverging_run(self):
        r = self.refused(["train", "--task", "offsets", "--lr", "1e30", "--clip", "0", "--steps", "50",
                          "--d-model", "8", "--heads", "2", "--batch", "4", "--out", self.out], 1,
                         "diverged at step", "--lr", "No checkpoint")
        self.assertEqual(r.stdout, "")

    # --- the happy paths the cases start from ---
    def test_train_writes_checkpoint_and_json(self):
        log = self.path("log.csv")
        r = run(["train", "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5", "--log", log,
                 "--out", self.out] + SMALL)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("At every position", r.stderr)  # the task's explanation comes first
        lines = r.stdout.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        j = json.loads(lines[0])
        self.assertEqual(j["steps"], 3)
        self.assertEqual(len(j["accuracy"]), 2)
        self.assertEqual(len(j["heads"]), 2)
        self.assertEqual(set(j["heads"][0]), {"layer", "head", "label", "score", "back", "self", "first",
                                              "reverse", "induction"})
        z = np.load(self.out)
        cfg = json.loads(bytes(z["config"]))
        self.assertEqual((cfg["format"], cfg["version"], cfg["num_targets"]), ("mhaviz-model", 1, 2))
        self.assertEqual(cfg["task"]["name"], "offsets")
        self.assertEqual(z["tok_embed"].dtype, np.float32)
        with open(log) as f:
            rows = f.read().splitlines()
        self.assertEqual(rows[0], "step,lr,loss,accuracy_0,accuracy_1,grad_norm")
        self.assertEqual(len(rows), 4)

    def test_same_seed_same_model(self):
        a, b = self.path("a.npz"), self.path("b.npz")
        base = ["train", "--task", "reverse", "--seq", "6", "--vocab", "5"] + SMALL[:-2]
        self.assertEqual(run(base + ["--threads", "1", "--out", a]).returncode, 0)
        self.assertEqual(run(base + ["--threads", "2", "--out", b]).returncode, 0)
        za, zb = np.load(a), np.load(b)
        for k in za.files:
            np.testing.assert_array_equal(za[k], zb[k], err_msg=k)

    def test_interrupt_still_writes_checkpoint(self):
        p = subprocess.Popen([MHAVIZ, "train", "--task", "offsets", "--steps", "1000000", "--out", self.out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # "Model: ..." is printed once the handler is in place; then let a few steps run.
        line = ""
        while not line.startswith("Model:"):
            line = p.stderr.readline()
            self.assertNotEqual(line, "", "mhaviz train ended before training")
        # A few steps: a third of a second more of the run's CPU time (not the clock's).
        proc_state.wait_cpu(p, proc_state.cpu_seconds(p.pid) + 0.3, "a few training steps")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        j = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(j["status"], "interrupted")
        self.assertGreater(j["steps"], 0)
        self.assertTrue(os.path.exists(self.out))
        self.assertIn("tok_embed", np.load(self.out).files)


def main():
    global MHAVIZ
    MHAVIZ = sys.argv[1]
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])


if __name__ == "__main__":
    main()
