#!/usr/bin/python3
"""The limits of every command: integers as typed, messages that name the real limit,
the memory and time budget (refused before allocating, with the cap that applies),
results that overflow float32, and control characters kept off the terminal.

    test_limits.py PATH/TO/mhaviz [unittest args]

Uses test_bad_input.py's runner (exit status, stderr, own peak RSS) and checks.
"""
import json
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_bad_input as tb  # noqa: E402

RSS_SCALE = tb.RSS_SCALE

# Every integer flag of every command: (argv before the flag, flag, a value it accepts).
INT_FLAGS = [
    (["trace", "-q"], "--heads", "8"), (["trace", "-q"], "--d-model", "64"), (["trace", "-q"], "--kv-heads", "2"),
    (["trace", "-q", "--block", "encoder"], "--d-ff", "64"), (["trace", "-q"], "--seed", "1"),
    (["export", "--png", "o.png"], "--head", "0"), (["export", "--png", "o.png"], "--scale", "1"),
    (["bench"], "--seq", "8"), (["bench"], "--threads", "1"), (["bench"], "--repeat", "3"),
    (["bench", "--train"], "--repeat", "3"),
    (["trace", "--model", "m.npz"], "--example", "0"), (["trace", "--model", "m.npz"], "--layer", "0"),
    (["gui"], "--frames", "1"), (["gui"], "--width", "800"), (["gui"], "--height", "600"),
    (["gui"], "--view-head", "0"), (["gui"], "--view-query", "0"), (["gui"], "--enlarge", "0"),
] + [(["train", "--task", "offsets", "--out", "o.npz"], f, v) for f, v in [
    ("--layers", "1"), ("--heads", "2"), ("--d-model", "16"), ("--kv-heads", "1"), ("--d-ff", "8"),
    ("--offsets", "2"), ("--seq", "8"), ("--vocab", "8"), ("--steps", "1"), ("--batch", "4"), ("--warmup", "0"),
    ("--seed", "1"), ("--threads", "1")]] + [
    (["grad", "--model", "m.npz", "--data", "d.npz", "--out", "o.npz"], "--threads", "1")]


class Integers(tb.Case):
    def test_signed_padded_and_foreign_spellings_are_refused(self):
        # strtoull read " -1" as 2^64 - 1; strtol skipped spaces and took '+'.
        for argv, flag, ok in INT_FLAGS:
            if argv[0] == "gui" and not tb.has_gui():
                continue
            for v in [" " + ok, ok + " ", "+" + ok, "0x" + ok, ok + ".0", "\t" + ok]:
                with self.subTest(flag=flag, argv=argv[0], v=v):
                    r = self.fails(argv + [flag, v], 2, flag, "whole number")
                    self.assertNotIn("d_model <=", r.err.replace(flag, ""), r)

    def test_negative_seeds_are_refused(self):
        for argv in [["trace", "-q"], ["bench"], ["train", "--task", "offsets", "--out", "o.npz"]]:
            for v in ["-1", " -1", "-0"]:
                with self.subTest(argv=argv[0], v=v):
                    self.fails(argv + ["--seed", v], 2, "--seed", ">= 0")
        self.fails(["trace", "--seed", "18446744073709551616"], 2, "--seed", "18446744073709551615")
        self.works(["trace", "-q", "--d-model", "8", "--heads", "2", "--seed", "18446744073709551615"])

    def test_out_of_range_names_the_flag_and_its_own_limit(self):
        cases = [(["gui", "--frames", "0"], ["--frames", "1 and 1000000"]),
                 (["gui", "--width", "10"], ["--width", "200 and 7680"]),
                 (["gui", "--height", "99999"], ["--height", "150 and 4320"]),
                 (["gui", "--view-head", "999"], ["--view-head", "0 and 255"]),
                 (["bench", "--repeat", "99999999999"], ["--repeat", "1000000"]),
                 (["bench", "--seq", "99999999999"], ["--seq", "1024"]),
                 (["export", "--png", "o.png", "--head", "99999999999"], ["--head", "num_heads - 1"]),
                 (["trace", "--heads", "99999999999"], ["--heads", "num_heads <= 256"]),
                 (["train", "--task", "offsets", "--out", "o.npz", "--steps", "99999999999"], ["--steps", "1000000"])]
        for argv, phrases in cases:
            if argv[0] == "gui" and not tb.has_gui():
                continue
            with self.subTest(argv=argv):
                r = self.fails(argv, 2, *phrases)
                if "--heads" not in argv:
                    self.assertNotIn("d_model <=", r.err, r)

    def test_view_head_beyond_the_heads_names_them(self):
        if not tb.has_gui():
            self.skipTest("this build has no GUI")
        self.fails(["gui", "--heads", "4", "--d-model", "16", "--view-head", "7", "--frames", "1"], 2,
                   "--view-head 7 does not exist", "0 to 3")


class Budget(tb.Case):
    def test_trace_over_the_memory_cap_is_refused_before_allocating(self):
        # 254 heads x 1024 x 1024 weights, twice (scores, attn): 2 GiB, once peaking at 2.1 GB.
        with open(self.path("s.txt"), "w") as f:
            f.write("w " * 1024)
        for cmd in (["trace", "-q"], ["export", "--png", self.path("o.png")]):
            with self.subTest(cmd=cmd[0]):
                r = self.fails(cmd + ["--heads", "254", "--d-model", "254", "--sentence-file", self.path("s.txt")], 2,
                               "MiB for its trace", "cap of 896 MiB")
                self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)

    def test_window_and_screenshot_are_capped(self):
        # 16384 x 16384 with --screenshot once took 5.8 GB.
        if not tb.has_gui():
            self.skipTest("this build has no GUI")
        self.fails(["gui", "--width", "16384", "--height", "16384", "--screenshot", self.path("s.png")], 2,
                   "--width", "7680")

    def test_training_step_over_the_memory_cap_is_refused_before_allocating(self):
        # Once accepted: 5 encoder layers of d_model 1024, batch 5 x 256 tokens peaked at 3.1 GB.
        args = ["--task", "offsets", "--seq", "256", "--vocab", "1000", "--d-model", "1024", "--layers", "5",
                "--heads", "16", "--block", "encoder", "--batch", "5"]
        r = self.fails(["train"] + args + ["--out", self.path("m.npz")], 2, "training memory cap", "--batch")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)
        self.fails(["bench", "--train"] + args, 2, "training memory cap")

    def test_svg_too_large_is_refused_before_the_forward_pass(self):
        with open(self.path("s.txt"), "w") as f:
            f.write("w " * 1024)
        # 64 heads x 1024 x 1024: a 512 MiB trace, never computed.
        r = self.fails(["export", "--heads", "64", "--d-model", "64", "--sentence-file", self.path("s.txt"),
                        "--svg", self.path("o.svg")], 2, "--svg limit is 300,000", "64 heads x 1024 x 1024")
        self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)


class Bench(tb.Case):
    def test_repeat_beyond_the_time_cap_is_refused_up_front(self):
        # --repeat 1000000 at d_model 4096 was weeks of work.
        r = self.fails(["bench", "--d-model", "4096", "--heads", "8", "--seq", "1024", "--repeat", "1000000"], 2,
                       "--repeat 1000000", "time cap", "at most --repeat")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)
        self.fails(["bench", "--train", "--d-model", "256", "--heads", "4", "--layers", "6", "--batch", "64",
                    "--repeat", "100000"], 2, "--repeat 100000", "time cap")

    def test_live_checks_every_configuration_before_the_first(self):
        # The 'heads' action steps 100 -> 200 heads: over the trace cap at 1024 tokens. It
        # used to fail after timing the actions before it.
        r = self.fails(["bench", "--live", "--seq", "1024", "--d-model", "200", "--heads", "100", "--repeat", "1"], 2,
                       "'heads' action", "cap of 896 MiB")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)
        self.fails(["bench", "--live", "--seq", "1024", "--d-model", "4096", "--heads", "8"], 2, "time cap")

    def test_live_steps_d_model_down_at_the_cap(self):
        # At d_model 4096 the slider's next step (4104) is over the cap: the action steps down.
        r = self.works(["bench", "--live", "--seq", "2", "--d-model", "4096", "--heads", "256",
                        "--repeat", "1"])
        self.assertIn(b"d_model", r.out)


class Overflow(tb.Case):
    def test_encoder_without_norm_that_overflows_fails_instead_of_writing_inf(self):
        # Every value within the 1e5 cap, but with no LayerNorm the FFN multiplies an
        # attention output of ~4e21 by W1 and W2: ~7e38, past float32. Constant arrays
        # compress to almost nothing.
        d, f = 2048, 8192
        big = np.float32(1e5)
        np.savez_compressed(self.path("w.npz"), W_q=np.zeros((d, d), np.float32), W_k=np.zeros((d, d), np.float32),
                            W_v=np.full((d, d), big), W_o=np.full((d, d), big), ffn_W1=np.full((d, f), big),
                            ffn_W2=np.full((f, d), big))
        np.savez_compressed(self.path("x.npz"), x=np.full((1, d), big))
        args = ["--input", self.path("x.npz"), "--weights", self.path("w.npz"), "--block", "encoder", "--d-ff", str(f),
                "--norm", "none"]
        self.fails(["trace"] + args + ["--npz", self.path("o.npz"), "--json", self.path("o.json")], 1,
                   "overflowed float32", "norm post or pre")
        self.fails(["export"] + args + ["--png", self.path("o.png")], 1, "overflowed float32")
        # With a LayerNorm between the sublayers the same weights stay finite.
        r = self.works(["trace"] + args[:-1] + ["post", "-q", "--npz", self.path("o.npz")])
        z = np.load(self.path("o.npz"))
        self.assertTrue(all(np.isfinite(z[k]).all() for k in z.files if k != "scores"), r)


class Terminal(tb.Case):
    ESC = "\x1b]0;pwned\x07\x1b[31m"
    BIDI = "\u202e"

    def assertClean(self, text):
        for bad in ["\x1b", "\x07", self.BIDI]:
            self.assertNotIn(bad.encode(), text if isinstance(text, bytes) else text.encode())

    def test_tokens_paths_and_messages_are_escaped_on_the_terminal_only(self):
        sentence = "cat" + self.ESC + " dog" + self.BIDI + "god"
        out = self.path("o" + self.ESC + self.BIDI + ".json")
        r = self.works(["trace", "--d-model", "8", "--heads", "2", "--sentence", sentence, "--json", out])
        self.assertClean(r.out)
        self.assertIn(b"\\x1B", r.out)
        self.assertIn(b"\\u{202E}", r.out)
        with open(out, encoding="utf-8") as fh:  # the file keeps every token exactly
            self.assertIn("dog" + self.BIDI + "god", json.load(fh)["tokens"])
        r = self.fails(["trace", "--input", self.path("x" + self.ESC + self.BIDI + ".npz")], 1, "Cannot read")
        self.assertClean(r.err)
        r = self.fails(["trace", "--heads", self.ESC], 2, "--heads")
        self.assertClean(r.err)
        r = self.fails(["export", "--png", self.path("no" + self.ESC + "/a.png"), "--sentence", "x" + self.BIDI], 1)
        self.assertClean(r.err)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_limits.py PATH/TO/mhaviz [unittest args]")
    tb.MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
