#!/usr/bin/python3
"""Bad input to the headless commands: every case must end with exit status 1 (runtime)
or 2 (usage), a message on stderr that says what is wrong and what to do, no crash, no
sanitizer report, and no partial or temporary file. An existing output file must survive
a failed write byte for byte.

    test_bad_input.py PATH/TO/mhaviz [unittest args]

Registered in ctest (tests/CMakeLists.txt). Under scripts/sanitize.sh (MHAVIZ_SANITIZED
set) the memory bounds are scaled for ASan's shadow memory.

Commands that write files are listed in WRITERS; a new one (export, ...) joins every
output-path test by adding a line there.
"""
import io
import json
import os
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import zipfile

import numpy as np
import proc_state

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import float32_tol, max_diff  # noqa: E402

MHAVIZ = None  # set in main
SANITIZED = bool(os.environ.get("MHAVIZ_SANITIZED"))
# Peak RSS bounds in MiB. ASan adds shadow memory and quarantine on top.
RSS_SCALE = 4 if SANITIZED else 1
HANG_GUARD_S = 600  # only to stop a hang from blocking CI; no test asserts a duration

# Commands that write files: (name, argv before the output flag, output flag, file name).
# Small sizes keep every case fast; a new writer joins every output test with one line.
WRITERS = [
    ("trace --npz", ["trace", "--d-model", "8", "--heads", "2", "-q"], "--npz", "out.npz"),
    ("trace --json", ["trace", "--d-model", "8", "--heads", "2", "-q"], "--json", "out.json"),
    ("export --png", ["export", "--d-model", "8", "--heads", "2", "-q", "--scale", "1"], "--png", "out.png"),
    ("export --svg", ["export", "--d-model", "8", "--heads", "2", "-q"], "--svg", "out.svg"),
]


class Run:
    def __init__(self, args, rc, out, err, rss_mib):
        self.args, self.rc, self.out, self.err, self.rss_mib = args, rc, out, err, rss_mib

    def __repr__(self):
        return "mhaviz %s -> exit %s, peak RSS %.0f MiB\nstderr: %s" % (
            " ".join(a if isinstance(a, str) else repr(a) for a in self.args)[:300],
            self.rc, self.rss_mib, self.err[:2000])


# Forks and execs mhaviz, then reports its exit status and peak RSS. A fresh small
# process is needed because Linux charges a child the RSS its parent had at fork time
# (this test process, with numpy loaded, is far bigger than mhaviz refusing a flag).
LAUNCHER = r"""
import os, sys
report = sys.argv[1]
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(report, "w") as f:
    f.write("%d %d" % (os.waitstatus_to_exitcode(status), ru.ru_maxrss))
"""


def run(args, stdin=None, cwd=None, preexec_fn=None, env=None):
    """Runs mhaviz; returns its exit status, stdout, stderr and its own peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as report:
        stdin_f = open(stdin, "rb") if stdin else subprocess.DEVNULL
        try:
            p = subprocess.Popen([sys.executable, "-I", "-S", "-c", LAUNCHER, report.name, MHAVIZ] + list(args),
                                 stdin=stdin_f, stdout=out, stderr=err, cwd=cwd, preexec_fn=preexec_fn,
                                 start_new_session=True, env=env)
        finally:
            if stdin:
                stdin_f.close()
        try:
            p.wait(timeout=HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            raise AssertionError("mhaviz %s hung and was killed" % " ".join(map(str, args))[:200])
        rc, maxrss_kib = map(int, report.read().split())
        out.seek(0)
        err.seek(0)
        return Run(args, rc, out.read(), err.read().decode("utf-8", "replace"), maxrss_kib / 1024.0)


_has_gui = None


def has_gui():
    """Whether this build has the window (the sanitizer builds have none: `gui` then only
    says so), so that tests of the gui command's flags can leave it out."""
    global _has_gui
    if _has_gui is None:
        _has_gui = "has no GUI" not in run(["gui", "--help"]).err
    return _has_gui


def is_temporary(name):
    """The atomic writer's temporary files (today's short names, and the older ones)."""
    return name.startswith(".mhaviz-") or ".tmp." in name


def savez(path, **arrays):
    np.savez(path, **arrays)
    return path


def weights(d, kvd=None, dtype=np.float32, seed=0):
    kvd = d if kvd is None else kvd
    rng = np.random.default_rng(seed)
    return {"W_q": rng.standard_normal((d, d)).astype(dtype) * 0.3,
            "W_k": rng.standard_normal((d, kvd)).astype(dtype) * 0.3,
            "W_v": rng.standard_normal((d, kvd)).astype(dtype) * 0.3,
            "W_o": rng.standard_normal((d, d)).astype(dtype) * 0.3}


class Case(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mhaviz-bad-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def check_clean(self, r):
        self.assertNotIn("Sanitizer", r.err, r)
        self.assertNotIn("runtime error:", r.err, r)
        self.assertGreaterEqual(r.rc, 0, "killed by signal %d: %r" % (-r.rc, r))

    def fails(self, args, code, *phrases, **kw):
        """Runs and asserts: exit `code`, a one-paragraph error naming the problem (every
        phrase, case-insensitive), nothing on stdout, nothing new in the work dir."""
        before = set(os.listdir(self.dir))
        r = run(args, **kw)
        self.check_clean(r)
        self.assertEqual(r.rc, code, r)
        self.assertIn(": error: ", r.err, r)
        for p in phrases:
            self.assertIn(p.lower(), r.err.lower(), r)
        self.assertEqual(r.out, b"", r)
        self.assertEqual(set(os.listdir(self.dir)), before, "files appeared: %r" % r)
        return r

    def works(self, args, **kw):
        r = run(args, **kw)
        self.check_clean(r)
        self.assertEqual(r.rc, 0, r)
        return r

    def outputs(self):
        """What a failing run must leave behind: nothing (no outputs, no temporaries)."""
        return ["--npz", self.path("out.npz"), "--json", self.path("out.json")]


# ---------------------------------------------------------------------------------------
class Sentences(Case):
    def test_empty_sentence(self):
        self.fails(["trace", "--sentence", ""] + self.outputs(), 2, "empty", "type at least one word")

    def test_whitespace_only_sentence(self):
        for s in [" ", "   \t\n ", "\u3000\u00a0\u2003"]:
            with self.subTest(s=repr(s)):
                self.fails(["trace", "--sentence", s] + self.outputs(), 2, "empty", "type at least one word")

    def test_empty_sentence_file_and_stdin(self):
        open(self.path("empty.txt"), "w").close()
        self.fails(["trace", "--sentence-file", self.path("empty.txt")] + self.outputs(), 2, "empty")
        self.fails(["trace", "--sentence-file", "-"] + self.outputs(), 2, "empty", stdin=self.path("empty.txt"))

    def test_empty_memory_sentence(self):
        self.fails(["trace", "--memory", ""] + self.outputs(), 2, "--memory is empty", "leave out --memory")
        self.fails(["trace", "--memory", "  "] + self.outputs(), 2, "memory sentence has no tokens")

    def test_invalid_utf8_is_replaced_and_reported(self):
        bad = b"caf\xe9 \xff\xfe ok \xc0\xaf \xed\xa0\x80 \xe3\x81"
        r = self.works(["trace", "--d-model", "8", "--heads", "2", "--sentence", bad,
                        "--json", self.path("t.json")])
        self.assertIn("invalid UTF-8", r.err)
        self.assertIn("U+FFFD", r.err)
        r.out.decode("utf-8")  # strict: the table must be valid UTF-8
        with open(self.path("t.json"), "rb") as f:
            doc = json.loads(f.read().decode("utf-8"))
        self.assertIn("ok", doc["tokens"])
        self.assertTrue(any("\ufffd" in t for t in doc["tokens"]), doc["tokens"])
        self.assertIn("U+FFFD", doc["notice"])

    def test_multi_megabyte_sentence_file(self):
        # 4 MiB: far more than argv can carry (128 KiB per argument), so from a file.
        with open(self.path("big.txt"), "w") as f:
            f.write("고양이가 mouse, " * ((4 << 20) // 20 + 1))  # 20 bytes each
        self.assertGreater(os.path.getsize(self.path("big.txt")), 4 << 20)
        for src, stdin in [(self.path("big.txt"), None), ("-", self.path("big.txt"))]:
            with self.subTest(source=src):
                r = self.works(["trace", "-q", "--d-model", "64", "--heads", "2", "--sentence-file", src,
                                "--json", self.path("t.json")], stdin=stdin)
                self.assertIn("Only the first 1024 tokens are used (cap)", r.err, r)
                self.assertIn("1024 KiB was cut off", r.err, r)
                with open(self.path("t.json"), encoding="utf-8") as f:
                    doc = json.load(f)
                self.assertEqual(len(doc["tokens"]), 1024)
                self.assertEqual(doc["tokens"][:3], ["고양이가", "mouse", ","])
                # 1024 x 1024 x 2 heads of attention, also as JSON text (~50 MiB), plus 1 MiB
                # of sentence: measured ~130 MiB (~280 under ASan).
                self.assertLess(r.rss_mib, 300 * RSS_SCALE, r)

    def test_json_too_large_is_refused_before_computing(self):
        with open(self.path("s.txt"), "w") as f:
            f.write("w " * 1024)
        r = self.fails(["trace", "--sentence-file", self.path("s.txt")] + self.outputs(), 2,
                       "--json would hold 8388608 attention weights", "Use --npz")
        self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)

    def test_long_sentence_in_argv(self):
        r = self.works(["trace", "-q", "--d-model", "16", "--heads", "2", "--sentence", "word " * 25000])
        self.assertIn("Only the first 1024 tokens are used (cap); 23976 more were left out", r.err, r)

    def test_one_giant_word(self):
        with open(self.path("giant.txt"), "w") as f:
            f.write("a" * (3 << 20))
        r = self.works(["trace", "--d-model", "8", "--heads", "2", "--sentence-file", self.path("giant.txt")])
        self.assertIn("cut off", r.err)
        # The table shows the start of the word, not a megabyte of it.
        self.assertLess(len(r.out), 8000, r.out[:200])
        self.assertIn(b"... (+", r.out)
        self.assertLess(r.rss_mib, 100 * RSS_SCALE, r)

    def test_endless_or_binary_sentence_file(self):
        # /dev/zero never ends: at most 1 MiB + 1 byte is read, then it is refused.
        r = self.fails(["trace", "--sentence-file", "/dev/zero"] + self.outputs(), 1, "NUL bytes",
                       "not a text file")
        self.assertLess(r.rss_mib, 100 * RSS_SCALE, r)

    def test_missing_sentence_file(self):
        self.fails(["trace", "--sentence-file", self.path("nope.txt")] + self.outputs(), 1, "Cannot read",
                   "No such file", "Check the path")

    def test_control_characters_are_escaped_on_the_terminal(self):
        r = self.works(["trace", "--d-model", "8", "--heads", "2", "--sentence", "a\x1b[2Jb \x07bell"])
        self.assertNotIn(b"\x1b", r.out)
        self.assertNotIn(b"\x07", r.out)
        self.assertIn(b"a\\x1B", r.out)

    def test_conflicting_sentence_sources(self):
        with open(self.path("s.txt"), "w") as f:
            f.write("a b")
        self.fails(["trace", "--sentence", "x", "--sentence-file", self.path("s.txt")], 2, "not both")


    def test_export_shares_the_input_checks(self):
        # export parses and prepares with the same code as trace; a few cases prove it.
        out = ["--png", self.path("out.png"), "--svg", self.path("out.svg")]
        self.fails(["export", "--sentence", ""] + out, 2, "empty")
        self.fails(["export", "--d-model", "2000000"] + out, 2, "over the cap of 4096")
        self.fails(["export", "--sentence-file", "/dev/zero"] + out, 1, "NUL bytes")
        self.fails(["export", "--input", "/dev/zero"] + out, 1, "not a valid .npz")
        self.fails(["export", "--temperature", "1e-40"] + out, 2, "below the minimum")
        self.fails(["export", "--png", self.path("o"), "--svg", self.path("o")], 2, "name the same file")
        self.fails(["export", "--d-model", "8"], 2, "--png FILE.png and/or --svg FILE.svg")

    def test_export_header_shows_the_sentence_file(self):
        # Was: the header showed the default sentence while the file's was computed.
        with open(self.path("s.txt"), "w", encoding="utf-8") as f:
            f.write("고양이가 쥐를 잡았다")
        self.works(["export", "-q", "--d-model", "8", "--heads", "2", "--sentence-file", self.path("s.txt"),
                    "--svg", self.path("o.svg")])
        with open(self.path("o.svg"), encoding="utf-8") as f:
            svg = f.read()
        self.assertIn("고양이가 쥐를 잡았다", svg)
        self.assertNotIn("The cat sat", svg)


# ---------------------------------------------------------------------------------------
class Sizes(Case):
    def test_d_model_not_divisible_by_heads(self):
        r = self.fails(["trace", "--d-model", "10", "--heads", "3"] + self.outputs(), 2,
                       "d_model = 10 is not divisible by num_heads = 3", "Try d_model = 9 or 12")
        # The common head counts that divide 10, not every divisor (5 and 10 heads of
        # 2 and 1 dimensions teach nothing).
        self.assertIn("or num_heads = 1 or 2.", r.err)
        self.assertNotIn("5, 10", r.err)
        # d_model = 524 = 4 x 131: never "131 heads".
        r = self.fails(["trace", "--d-model", "524", "--heads", "3"] + self.outputs(), 2,
                       "Try d_model = 522 or 525", "or num_heads in {1, 2, 4}.")
        self.assertNotIn("131", r.err)

    def test_heads_not_divisible_by_kv_heads(self):
        self.fails(["trace", "--heads", "8", "--kv-heads", "3"] + self.outputs(), 2,
                   "num_heads = 8 is not divisible by num_kv_heads = 3", "Try num_kv_heads in {1, 2, 4, 8}")
        self.fails(["trace", "--heads", "4", "--kv-heads", "8"] + self.outputs(), 2, "num_kv_heads")

    def test_more_heads_than_dimensions(self):
        self.fails(["trace", "--d-model", "4", "--heads", "8"] + self.outputs(), 2, "more than d_model",
                   "Try num_heads in {1, 2, 4}")

    def test_zero_and_negative_sizes(self):
        cases = [(["--heads", "0"], "must be at least 1"), (["--heads", "-3"], "must be at least 1"),
                 (["--d-model", "0"], "must be greater than 0"), (["--d-model", "-512"], "must be greater than 0"),
                 (["--kv-heads", "0"], "must be at least 1"), (["--kv-heads", "-2"], "must be at least 1")]
        for args, phrase in cases:
            with self.subTest(args=args):
                self.fails(["trace"] + args + self.outputs(), 2, phrase, "Try" if "kv" not in args[0] else "1")

    def test_non_numbers(self):
        for flag in ["--heads", "--d-model", "--kv-heads", "--seed"]:
            for v in ["abc", "12.5", "", "8x", "0x10", "1e3"]:
                with self.subTest(flag=flag, v=v):
                    self.fails(["trace", flag, v] + self.outputs(), 2, "expects a whole number", repr(v)[1:-1])
        for v in ["abc", "", "1..2", "nan", "inf", "-inf"]:
            with self.subTest(flag="--temperature", v=v):
                self.fails(["trace", "--temperature", v] + self.outputs(), 2, "--temperature expects a number")
        self.fails(["trace", "--seed", "-1"], 2, "whole number >= 0")
        self.fails(["trace", "--mask", "upper"], 2, "'none' or 'causal'")
        self.fails(["trace", "--norm", "batch"], 2, "'post'", "'pre'", "'none'")

    def test_unknown_flags_and_stray_arguments(self):
        self.fails(["trace", "--bogus"] + self.outputs(), 2, "unknown flag '--bogus'", "mhaviz trace --help")
        self.fails(["trace", "--Heads", "8"], 2, "unknown flag '--Heads'")
        self.fails(["trace", "the", "cat"], 2, "unexpected argument 'the'", "--sentence \"the")
        self.fails(["trace", "--heads"], 2, "--heads needs a value")
        self.fails(["trace", "--npz"], 2, "--npz needs a value")
        self.fails(["trace", "--npz", ""], 2, "--npz needs a file name")
        self.fails(["trace", "--json", ""], 2, "--json needs a file name")
        r = run(["nonsense"])
        self.check_clean(r)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("unknown command 'nonsense'", r.err)

    def test_absurd_sizes_are_refused_before_allocating(self):
        # d_model = 2,000,000 would need 4 x 16 TB of weights: refused from the flags alone.
        cases = [(["--d-model", "2000000"], "over the cap of 4096"),
                 (["--heads", "1000000", "--d-model", "1000000"], "over the cap"),
                 (["--heads", "100000"], "over the cap of 256"),
                 (["--d-model", "99999999999999999999"], "expects a whole number"),
                 (["--d-model", "3000000000"], "far outside"),
                 (["--kv-heads", "2147483648"], "far outside")]
        for args, phrase in cases:
            with self.subTest(args=args):
                r = self.fails(["trace"] + args + self.outputs(), 2, phrase)
                self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)

    def test_attention_maps_over_the_memory_cap(self):
        # Within every single cap, but 256 heads x 1024 x 1024 attention weights (x2 for
        # scores) are 2 GiB: refused with the estimate, before embedding anything.
        with open(self.path("s.txt"), "w") as f:
            f.write("w " * 1100)
        r = self.fails(["trace", "--d-model", "4096", "--heads", "256", "--sentence-file", self.path("s.txt")]
                       + self.outputs(), 2, "MiB for its trace", "Use fewer tokens, fewer heads")
        self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)

    def test_temperature_out_of_range(self):
        for v in ["0", "-1", "1e-40", "0.0001"]:
            with self.subTest(v=v):
                self.fails(["trace", "--temperature", v] + self.outputs(), 2, "temperature", "Try")
        self.fails(["trace", "--temperature", "1e300"] + self.outputs(), 2, "far outside the usable range")

    def test_d_model_at_the_cap_runs(self):
        r = self.works(["trace", "-q", "--d-model", "4096", "--heads", "64", "--sentence", "the cat sat",
                        "--npz", self.path("t.npz")])
        z = np.load(self.path("t.npz"))
        self.assertEqual(z["attn"].shape, (1, 64, 3, 3))
        self.assertTrue(np.isfinite(z["attn"]).all() and np.isfinite(z["out"]).all())
        sums = z["attn"].sum(-1, dtype=np.float64)  # normalised exactly; float32 sums seq_kv terms
        self.assertLessEqual(max_diff(sums, np.ones_like(sums)), float32_tol(1.0, z["attn"].shape[-1]))


# ---------------------------------------------------------------------------------------
class NpzFiles(Case):
    def x(self, name, x, **more):
        return savez(self.path(name), x=x, **more)

    def test_missing_file(self):
        for flag in ["--input", "--weights"]:
            with self.subTest(flag=flag):
                self.fails(["trace", flag, self.path("nope.npz")] + self.outputs(), 1,
                           "Cannot read", "No such file", "Check the path")

    def test_truncated_file(self):
        p = self.x("x.npz", np.ones((3, 8), np.float32))
        data = open(p, "rb").read()
        for cut in [len(data) // 2, len(data) - 10, 30]:
            with self.subTest(cut=cut):
                with open(self.path("cut.npz"), "wb") as f:
                    f.write(data[:cut])
                self.fails(["trace", "--input", self.path("cut.npz")] + self.outputs(), 1,
                           "not a valid .npz (zip) archive", "truncated", "numpy.savez")

    def test_random_bytes(self):
        rng = np.random.default_rng(3)
        with open(self.path("r.npz"), "wb") as f:
            f.write(rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
        self.fails(["trace", "--input", self.path("r.npz")] + self.outputs(), 1, "not a valid .npz (zip) archive",
                   "numpy.savez")
        with open(self.path("pk.npz"), "wb") as f:  # looks like a zip, is not one
            f.write(b"PK\x03\x04" + rng.integers(0, 256, 5000, dtype=np.uint8).tobytes())
        self.fails(["trace", "--weights", self.path("pk.npz")] + self.outputs(), 1, "not a valid .npz")

    def test_zip_that_lies_about_its_size(self):
        # Was: a 184-byte .npz whose directory claims a 2 GiB member got 2 GiB allocated
        # (peak RSS 2.1 GB) before the read failed.
        import struct
        p = self.path("liar.npz")
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
            b = io.BytesIO()
            np.save(b, np.ones((2, 8), np.float32))
            z.writestr("x.npy", b.getvalue())
        data = bytearray(open(p, "rb").read())
        struct.pack_into("<I", data, 22, 0x7FFFFFF0)  # local header: uncompressed size
        struct.pack_into("<I", data, data.find(b"PK\x01\x02") + 24, 0x7FFFFFF0)  # central directory
        with open(p, "wb") as f:
            f.write(data)
        r = self.fails(["trace", "--input", p] + self.outputs(), 1, "truncated or corrupt", "numpy.savez")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)

    def test_empty_file_directory_and_device(self):
        open(self.path("e.npz"), "w").close()
        self.fails(["trace", "--input", self.path("e.npz")] + self.outputs(), 1, "is empty", "numpy.savez")
        os.mkdir(self.path("d.npz"))
        self.fails(["trace", "--input", self.path("d.npz")] + self.outputs(), 1, "is a directory")
        r = self.fails(["trace", "--input", "/dev/zero"] + self.outputs(), 1, "not a valid .npz")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)

    def test_npy_instead_of_npz(self):
        np.save(self.path("x.npy"), np.ones((2, 8), np.float32))
        self.fails(["trace", "--input", self.path("x.npy")] + self.outputs(), 1, "single .npy array",
                   "numpy.savez(path, x=array)")

    def test_float64_and_int_inputs_are_converted(self):
        x64 = np.random.default_rng(0).standard_normal((3, 8))
        for name, x in [("f64", x64), ("i32", np.arange(24, dtype=np.int32).reshape(3, 8) - 12),
                        ("i64", np.arange(24, dtype=np.int64).reshape(1, 3, 8)),
                        ("u8", np.arange(24, dtype=np.uint8).reshape(3, 8)),
                        ("f64_fortran", np.asfortranarray(x64)),
                        ("f8_bigendian", x64.astype(">f8")),
                        ("f16", x64.astype(np.float16)), ("f16_bigendian", x64.astype(">f2"))]:
            with self.subTest(dtype=name):
                self.works(["trace", "-q", "--heads", "2", "--input", self.x(name + ".npz", x),
                            "--npz", self.path("t.npz")])
                got = np.load(self.path("t.npz"))["x"]
                self.assertEqual(got.dtype, np.float32)
                np.testing.assert_array_equal(got.reshape(3, 8), x.reshape(3, 8).astype(np.float32))

    def test_float64_and_int_weights_are_converted(self):
        w = weights(8, dtype=np.float64)
        w["b_q"] = np.arange(8, dtype=np.int16)
        self.works(["trace", "-q", "--d-model", "8", "--heads", "2", "--weights",
                    savez(self.path("w.npz"), **w), "--npz", self.path("t.npz")])
        z = np.load(self.path("t.npz"))
        np.testing.assert_array_equal(z["W_k"], w["W_k"].astype(np.float32))
        np.testing.assert_array_equal(z["b_q"], np.arange(8, dtype=np.float32))

    def test_object_string_and_complex_dtypes_are_refused(self):
        arrays = {"object": np.array([[1.0, "a"]], dtype=object),
                  "unicode": np.array([["a", "b"]]),
                  "bytes": np.array([[b"ab"]]),
                  "complex": np.ones((2, 8), np.complex64),
                  "datetime": np.array([["2024-01-01"]], dtype="datetime64[D]")}
        for name, x in arrays.items():
            with self.subTest(dtype=name):
                p = self.x(name + ".npz", x)
                r = self.fails(["trace", "--input", p] + self.outputs(), 1, "has dtype", "cannot use as numbers",
                               "astype(numpy.float32)")
                self.assertIn(x.dtype.str, r.err)

    def test_input_with_wrong_shape_or_keys(self):
        cases = [("1d", {"x": np.ones(8, np.float32)}, "must be (seq, d_model) or (1, seq, d_model)"),
                 ("4d", {"x": np.ones((1, 1, 2, 8), np.float32)}, "must be (seq, d_model)"),
                 ("batch2", {"x": np.ones((2, 3, 8), np.float32)}, "batch 1"),
                 ("no_tokens", {"x": np.ones((0, 8), np.float32)}, "holds no tokens"),
                 ("no_x", {"y": np.ones((2, 8), np.float32)}, "has no array 'x'")]
        for name, arrays, phrase in cases:
            with self.subTest(case=name):
                self.fails(["trace", "--input", savez(self.path(name + ".npz"), **arrays)] + self.outputs(), 1,
                           phrase)

    def test_input_with_an_empty_memory_sentence(self):
        self.fails(["trace", "--heads", "2", "--input", self.x("m.npz", np.ones((2, 8), np.float32)),
                    "--memory", " \t "] + self.outputs(), 2, "memory sentence has no tokens", "Leave out --memory")

    def test_input_over_the_token_cap(self):
        self.fails(["trace", "--heads", "2", "--input", self.x("long.npz", np.ones((1025, 8), np.float32))]
                   + self.outputs(), 2, "1025 tokens, over the cap of 1024")

    def test_input_with_nan_inf_or_huge_values(self):
        for name, v, phrase in [("nan", np.nan, "NaN or Inf"), ("inf", -np.inf, "NaN or Inf"),
                                ("huge", 3e6, "larger than 100000")]:
            with self.subTest(value=name):
                x = np.ones((3, 8), np.float32)
                x[1, 2] = v
                self.fails(["trace", "--heads", "2", "--input", self.x(name + ".npz", x)] + self.outputs(), 1,
                           phrase)

    def test_weights_with_wrong_shape(self):
        w = weights(8)
        w["W_k"] = np.ones((8, 6), np.float32)
        self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights", savez(self.path("w.npz"), **w)]
                   + self.outputs(), 1, "weight 'W_k' has shape (8, 6)", "needs (8, 8)",
                   # the settings by name (the app's Lesson view shows this too), then the flags
                   "Check d_model, num_heads and num_kv_heads (--d-model, --heads, --kv-heads)")
        w = weights(8)
        w["b_o"] = np.ones((1, 8), np.float32)
        self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights", savez(self.path("w2.npz"), **w)]
                   + self.outputs(), 1, "'b_o' has shape (1, 8)", "needs (8,)")
        self.fails(["trace", "--d-model", "16", "--heads", "2", "--weights", savez(self.path("w3.npz"), **weights(8))]
                   + self.outputs(), 1, "W_q has shape (8, 8) but d_model = 16")
        w = weights(8)
        del w["W_o"]
        self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights", savez(self.path("w4.npz"), **w)]
                   + self.outputs(), 1, "has no array 'W_o'", "needs W_q, W_k, W_v and W_o")

    def test_weights_with_nan_inf_or_huge_values(self):
        for key, idx, v, phrase in [("W_v", (2, 3), np.nan, "contains NaN or Inf"), ("W_q", (0, 0), np.inf, "contains NaN or Inf"),
                                    ("b_k", (5,), -np.inf, "contains NaN or Inf"), ("ln_gamma", (1,), np.nan, "contains NaN or Inf"),
                                    ("W_o", (7, 1), 2e6, "limit of |value| <= 100000")]:
            with self.subTest(key=key, v=v):
                w = weights(8)
                if key not in w:
                    w[key] = np.ones(8, np.float32)
                w[key][idx] = v
                r = self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights",
                                savez(self.path(key + ".npz"), **w)] + self.outputs(), 1, "Weight " + key, phrase)
                where = ("row %d, column %d" % idx) if len(idx) == 2 else ("index %d" % idx[0])
                self.assertIn(where, r.err)

    def test_bad_ln_eps(self):
        w = weights(8)
        self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights",
                    savez(self.path("e1.npz"), ln_eps=np.array([1e-5, 1e-5], np.float32), **w)] + self.outputs(), 1,
                   "ln_eps must be a single number")
        # Was: exit 2 (a usage error, as if a flag were wrong) and the file not named.
        for name, v, shown in [("e2", 0, "ln_eps is 0;"), ("e3", -1e-5, "ln_eps is -1e-05;"), ("e4", np.nan, "ln_eps is nan;")]:
            with self.subTest(v=v):
                p = savez(self.path(name + ".npz"), ln_eps=np.float32(v), **w)
                self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights", p] + self.outputs(), 1,
                           "'%s': %s" % (p, shown), "must be a small positive number")

    def test_compressed_npz_is_read(self):
        x = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
        np.savez_compressed(self.path("c.npz"), x=x)
        self.works(["trace", "-q", "--heads", "2", "--input", self.path("c.npz"), "--npz", self.path("t.npz")])
        np.testing.assert_array_equal(np.load(self.path("t.npz"))["x"][0], x)


# ---------------------------------------------------------------------------------------
def can_unshare_mounts():
    try:
        return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                               "mount -t tmpfs -o size=64k t /mnt && umount /mnt"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    except OSError:
        return False


OLD = b"the teacher's file from yesterday\n" * 10


class Outputs(Case):
    """Output paths that cannot be written, for every command in WRITERS."""

    def assert_intact(self, d, fname):
        names = os.listdir(d)
        self.assertEqual([n for n in names if is_temporary(n)], [], "temporary file left in %s" % d)
        with open(os.path.join(d, fname), "rb") as f:
            self.assertEqual(f.read(), OLD, "the existing file was changed")

    def test_directory_does_not_exist(self):
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                target = self.path("no/such/dir/" + fname)
                self.fails(argv + [flag, target], 1, "does not exist", "mkdir -p", "Nothing was changed")
                self.assertFalse(os.path.exists(self.path("no")))

    def test_parent_is_a_regular_file(self):
        with open(self.path("file"), "wb") as f:
            f.write(OLD)
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                self.fails(argv + [flag, self.path("file/" + fname)], 1, "is a file, not a directory")
                with open(self.path("file"), "rb") as f:
                    self.assertEqual(f.read(), OLD)

    def test_location_that_accepts_no_files(self):
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                self.fails(argv + [flag, "/proc/" + fname], 1, "'/proc' does not accept new files",
                           "choose a directory you can write to")

    def test_output_is_a_directory(self):
        os.mkdir(self.path("out"))
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                self.fails(argv + [flag, self.path("out")], 1, "is a directory", "give a file name")

    def test_one_bad_output_leaves_no_other_output(self):
        # --npz is fine, --json is not: neither may appear.
        self.fails(["trace", "-q", "--d-model", "8", "--heads", "2", "--npz", self.path("out.npz"),
                    "--json", self.path("missing/out.json")], 1, "does not exist")
        self.assertFalse(os.path.exists(self.path("out.npz")))

    def test_file_size_limit_keeps_the_old_file(self):
        # Works without mounts: RLIMIT_FSIZE ('ulimit -f') makes write(2) fail part-way.
        # SIGXFSZ keeps its default action (death): mhaviz must still report EFBIG with a
        # message and clean up instead of dying with a half-written temporary file.
        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                with open(self.path(fname), "wb") as f:
                    f.write(OLD)
                self.fails(argv + ["--d-model", "64", "--heads", "4", flag, self.path(fname)], 1, "File too large",
                           "ulimit -f", preexec_fn=limit)
                self.assert_intact(self.dir, fname)

    def in_namespace(self, setup, argv):
        """Runs `setup` (shell, $D = the directory to write in) and mhaviz in a private
        mount namespace, so mounts vanish with it; returns (Run, listing of $D, old file)."""
        d = tempfile.mkdtemp(dir=self.dir, prefix="mnt")
        argv = [a.replace("$D", d) for a in argv]
        script = ('set -e; D="$1"; H="$2"; shift 2\n' + setup + '\nset +e\n'
                  '"$@" >"$H/stdout" 2>"$H/stderr"; echo $? >"$H/rc"\n'
                  'ls -a "$D" >"$H/ls"; cat "$D/old" >"$H/old" 2>/dev/null; true\n')
        h = tempfile.mkdtemp(dir=self.dir, prefix="host")
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", d, h,
                            MHAVIZ] + argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.assertEqual(p.returncode, 0, p.stdout)
        read = lambda n, m="r": open(os.path.join(h, n), m).read()
        r = Run(argv, int(read("rc")), read("stdout", "rb"), read("stderr"), 0)
        return r, read("ls").split(), read("old", "rb"), d

    @unittest.skipUnless(can_unshare_mounts(), "needs unshare -m and mount (root in a mount namespace)")
    def test_full_disk_keeps_the_old_file(self):
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                # A 256 KiB tmpfs holding the old output, then filled to the last block.
                setup = ('mount -t tmpfs -o size=256k mhaviz-full "$D"\n'
                         'printf "%s" "$OLD" >"$D/old"\n'
                         'dd if=/dev/zero of="$D/filler" bs=4096 2>/dev/null || true')
                os.environ["OLD"] = OLD.decode()
                r, names, old, d = self.in_namespace(setup, argv + ["--d-model", "64", "--heads", "4", flag, "$D/old"])
                self.check_clean(r)
                self.assertEqual(r.rc, 1, r)
                self.assertIn("No space left on device", r.err, r)
                self.assertIn("Free some space", r.err, r)
                self.assertEqual(sorted(names), [".", "..", "filler", "old"], "leftover files: %s" % names)
                self.assertEqual(old, OLD)

    @unittest.skipUnless(can_unshare_mounts(), "needs unshare -m and mount (root in a mount namespace)")
    def test_read_only_location_keeps_the_old_file(self):
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                setup = ('mount -t tmpfs -o size=256k mhaviz-ro "$D"\n'
                         'printf "%s" "$OLD" >"$D/old"\n'
                         'mount -o remount,ro "$D"')
                os.environ["OLD"] = OLD.decode()
                r, names, old, d = self.in_namespace(setup, argv + [flag, "$D/old"])
                self.check_clean(r)
                self.assertEqual(r.rc, 1, r)
                self.assertIn("Read-only file system", r.err, r)
                self.assertIn("choose a directory you can write to", r.err, r)
                self.assertEqual(sorted(names), [".", "..", "old"])
                self.assertEqual(old, OLD)

    def test_interrupted_writes_leave_no_temporary(self):
        # SIGINT/SIGTERM at any moment: the output is absent or complete, never partial,
        # and no temporary file remains. The moments are spread over the whole run; the
        # property holds for every one of them, so no timing is asserted.
        args = ["trace", "-q", "--d-model", "1024", "--heads", "8", "--sentence", "w " * 300,
                "--npz", self.path("big.npz"), "--json", self.path("big.json")]
        # The moments are measured in the run's own CPU time, not the clock's, so a busy
        # machine spreads them the same way.
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.works(args)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        full = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        for i in range(12):
            for f in os.listdir(self.dir):
                os.unlink(self.path(f))
            p = subprocess.Popen([MHAVIZ] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            moment = full * (0.3 + 0.9 * i / 12)
            while p.poll() is None and proc_state.cpu_seconds(p.pid) < moment:
                time.sleep(0.002)
            p.send_signal(signal.SIGINT if i % 2 else signal.SIGTERM)
            err = p.communicate()[1].decode("utf-8", "replace")
            self.assertNotIn("Sanitizer", err)
            names = sorted(os.listdir(self.dir))
            self.assertEqual([n for n in names if is_temporary(n)], [], "temporary file left (signal %d)" % i)
            self.assertIn(names, [[], ["big.json", "big.npz"]])
            if names:
                self.assertEqual(np.load(self.path("big.npz"))["attn"].shape, (1, 8, 300, 300))
                with open(self.path("big.json"), encoding="utf-8") as f:
                    json.load(f)

    def test_same_file_for_two_outputs(self):
        self.fails(["trace", "--npz", self.path("o"), "--json", self.path("o")], 2, "name the same file")

    def test_device_node_is_written_not_replaced(self):
        # Was: rename(2) over the path replaced a device node (as root: /dev/null itself)
        # with a regular file. A private null device stands in for /dev/null.
        try:
            os.mknod(self.path("null"), 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            self.skipTest("mknod not permitted")
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                self.works(argv + [flag, self.path("null")])
                self.assertTrue(stat.S_ISCHR(os.stat(self.path("null")).st_mode), "the device node was replaced")
                self.assertEqual(sorted(os.listdir(self.dir)), ["null"])

    def test_fifo_receives_the_bytes(self):
        os.mkfifo(self.path("fifo"))
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                got = []
                reader = threading.Thread(target=lambda: got.append(open(self.path("fifo"), "rb").read()))
                reader.start()
                self.works(argv + [flag, self.path("fifo")])
                reader.join(HANG_GUARD_S)
                self.assertTrue(got and len(got[0]) > 100, "nothing came through the FIFO")
                self.assertTrue(stat.S_ISFIFO(os.stat(self.path("fifo")).st_mode))
                self.assertEqual(sorted(os.listdir(self.dir)), ["fifo"])

    def test_symlink_is_followed_not_replaced(self):
        os.mkdir(self.path("real"))
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                with open(self.path("real/" + fname), "wb") as f:
                    f.write(OLD)
                if os.path.lexists(self.path("link")):
                    os.unlink(self.path("link"))
                os.symlink("real/" + fname, self.path("link"))
                self.works(argv + [flag, self.path("link")])
                self.assertTrue(os.path.islink(self.path("link")), "the symlink was replaced by a file")
                with open(self.path("real/" + fname), "rb") as f:
                    self.assertNotEqual(f.read(), OLD, "the link's target was not written")
                self.assertEqual([n for n in os.listdir(self.path("real")) if is_temporary(n)], [])
                os.unlink(self.path("link"))

    def test_own_descriptor_as_output(self):
        # Never /dev/stdout here: a binary without the fix renames a regular file over
        # the system's /dev/stdout symlink (this happened once). /proc/self/fd/1 and
        # /dev/fd/1 (-> /proc/self/fd) name the same descriptor, and an unfixed binary
        # merely fails to create its temporary file in /proc.
        for path in ["/proc/self/fd/1", "/dev/fd/1"]:
            with self.subTest(path=path):
                r = self.works(["trace", "-q", "--d-model", "8", "--heads", "2", "--json", path])
                self.assertEqual(json.loads(r.out.decode("utf-8"))["config"]["d_model"], 8)

    def test_successful_write_replaces_and_leaves_no_temporary(self):
        for name, argv, flag, fname in WRITERS:
            with self.subTest(writer=name):
                with open(self.path(fname), "wb") as f:
                    f.write(OLD)
                self.works(argv + [flag, self.path(fname)])
                self.assertEqual([n for n in os.listdir(self.dir) if is_temporary(n)], [])
                with open(self.path(fname), "rb") as f:
                    self.assertNotEqual(f.read(), OLD)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_bad_input.py PATH/TO/mhaviz [unittest args]")
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
