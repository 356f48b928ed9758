#!/usr/bin/python3
"""Archives and outputs under attack, checked from outside (the helpers and rules of
test_bad_input.py): zip bombs in .npz inputs (peak RSS measured), numpy's reading of odd
archives, signals during writes that block, standard output that cannot be written, and
the same output spelled two ways.

    test_outputs_archives.py PATH/TO/mhaviz [unittest args]
"""
import os
import signal
import subprocess
import sys
import time
import unittest
import zipfile
import zlib

import numpy as np
import proc_state

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_bad_input as bad  # noqa: E402
from test_bad_input import RSS_SCALE, is_temporary, savez  # noqa: E402


def npy_header(descr, shape):
    h = "{'descr': '%s', 'fortran_order': False, 'shape': %r, }" % (descr, tuple(shape))
    h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode()


def add_zero_bomb(z, name, descr, shape):
    """A deflated member: a valid .npy of zeros, streamed (never whole in this process)
    so a few hundred MiB of data cost a few hundred KiB of file."""
    n = int(np.prod(shape)) * int(descr[2:])
    with z.open(name, "w", force_zip64=True) as f:
        f.write(npy_header(descr, shape))
        chunk = bytes(1 << 22)
        while n > 0:
            f.write(chunk[:min(n, len(chunk))])
            n -= min(n, len(chunk))


class ZipBombs(bad.Case):
    def bomb(self, name, members, extra=None):
        p = self.path(name)
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            for m in members:
                add_zero_bomb(z, *m)
            for k, v in (extra or {}).items():
                with z.open(k + ".npy", "w") as f:
                    np.save(f, v)
        return p

    def test_unused_members_are_never_inflated(self):
        # Was: every member was inflated (1-byte zeros growing 4x as float32) before any
        # check: a 1.8 MB file took 8.2 GB. Four 256 MiB uint8 members the input does not
        # use (4 GiB as float32) beside a small valid x.
        x = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)
        p = self.bomb("unused.npz", [("junk%d.npy" % i, "|u1", (1 << 28,)) for i in range(4)], {"x": x})
        self.assertLess(os.path.getsize(p), 8 << 20)
        r = self.works(["trace", "-q", "--heads", "2", "--input", p, "--npz", self.path("t.npz")])
        self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)
        np.testing.assert_array_equal(np.load(self.path("t.npz"))["x"][0], x)

    def test_a_used_member_too_large_is_refused_at_its_header(self):
        # x of 1024 x 2^17 uint8 (128 MiB, 512 MiB as float32): refused from its header.
        p = self.bomb("x.npz", [("x.npy", "|u1", (1024, 1 << 17))])
        r = self.fails(["trace", "--heads", "2", "--input", p] + self.outputs(), 1, "'x' has shape (1024, 131072)",
                       "d_model at most 4096")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)
        # Weights: W_q declares (8192, 8192) int8 (64 MiB; 256 MiB as float32) for d_model 8.
        w = self.bomb("w.npz", [("W_q.npy", "|i1", (8192, 8192))])
        r = self.fails(["trace", "--d-model", "8", "--heads", "2", "--weights", w] + self.outputs(), 1,
                       "weight 'W_q' has shape (8192, 8192)", "d_model 8")
        self.assertLess(r.rss_mib, 60 * RSS_SCALE, r)

    def grad_fails(self, model, data, phrase):
        r = bad.run(["grad", "--model", model, "--data", data, "--out", self.path("g.npz")])
        self.check_clean(r)
        self.assertEqual(r.rc, 1, r)
        self.assertIn(phrase, r.err, r)
        self.assertFalse(os.path.exists(self.path("g.npz")))
        return r

    def test_checkpoint_and_batch_members_are_checked_first(self):
        # A checkpoint or a batch with a member its configuration does not use (256 MiB of
        # uint8 zeros, 1 GiB as float32): refused from the member's name and header.
        m = self.path("m.npz")
        self.works(["train", "--task", "offsets", "--steps", "1", "--d-model", "8", "--seq", "4", "--out", m])
        with zipfile.ZipFile(m, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
            add_zero_bomb(z, "extra.npy", "|u1", (1 << 28,))
        b = self.bomb("b.npz", [("extra.npy", "|u1", (1 << 28,))],
                      {"tokens": np.zeros((1, 4), np.int32), "targets": np.zeros((1, 4), np.int32)})
        good_b = savez(self.path("good_b.npz"), tokens=np.zeros((1, 4), np.int32), targets=np.zeros((1, 4), np.int32))
        r = self.grad_fails(m, good_b, "holds 'extra', which this model's configuration does not use")
        self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)
        os.unlink(m)
        self.works(["train", "--task", "offsets", "--steps", "1", "--d-model", "8", "--seq", "4", "--out", m])
        r = self.grad_fails(m, b, "holds 'extra'; a batch file has only 'tokens' and 'targets'")
        self.assertLess(r.rss_mib, 80 * RSS_SCALE, r)


class NumpyArchives(bad.Case):
    """Archives numpy reads are read as numpy reads them."""

    def test_member_named_twice_reads_the_last_as_numpy_does(self):
        # Was: "File already exists. Is it truncated?" although numpy reads the file.
        p = self.path("dup.npz")
        first, last = np.ones((2, 8), np.float32), np.full((3, 8), 0.25, np.float32)
        with zipfile.ZipFile(p, "w") as z:
            for a in (first, last):
                with z.open("x.npy", "w") as f:
                    np.save(f, a)
        np.testing.assert_array_equal(np.load(p)["x"], last)  # numpy's reading
        self.works(["trace", "-q", "--heads", "2", "--input", p, "--npz", self.path("t.npz")])
        np.testing.assert_array_equal(np.load(self.path("t.npz"))["x"][0], last)

    def test_member_without_npy_suffix(self):
        # Was: "has no array 'x'" although numpy.load(p)['x'] works.
        p = self.path("bare.npz")
        x = np.arange(16, dtype=np.float32).reshape(2, 8) / 10
        with zipfile.ZipFile(p, "w") as z:
            with z.open("x", "w") as f:
                np.save(f, x)
        np.testing.assert_array_equal(np.load(p)["x"], x)
        self.works(["trace", "-q", "--heads", "2", "--input", p, "--npz", self.path("t.npz")])
        np.testing.assert_array_equal(np.load(self.path("t.npz"))["x"][0], x)

    def test_header_with_a_key_twice_is_refused(self):
        p = self.path("twice.npz")
        h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 8), 'shape': (1, 16), }"
        h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
        with zipfile.ZipFile(p, "w") as z:
            z.writestr("x.npy", b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + bytes(64))
        self.fails(["trace", "--heads", "2", "--input", p] + self.outputs(), 1, "names 'shape' twice")


class BlockedWrites(bad.Case):
    """A signal during a write that blocks ends the run, and removes the temporary files."""

    def stop_while_blocked(self, argv, sig, **popen):
        p = subprocess.Popen([bad.MHAVIZ] + argv, stderr=subprocess.PIPE, **popen)
        proc_state.wait_blocked(p, "the write to block")
        self.assertIsNone(p.poll(), "mhaviz ended before the write could block")
        p.send_signal(sig)
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            self.fail("signal %d was ignored during a blocked write" % sig)
        return p

    def test_fifo_nobody_opens(self):
        # Was: signals were blocked for the whole write: `mhaviz trace --json FIFO` with no
        # reader ignored SIGTERM for a minute or more.
        os.mkfifo(self.path("p"))
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig=sig):
                p = self.stop_while_blocked(["trace", "-q", "--d-model", "8", "--heads", "2",
                                             "--npz", self.path("o.npz"), "--json", self.path("p")], sig,
                                            stdout=subprocess.DEVNULL)
                p.stderr.close()
                self.assertEqual(p.returncode, -sig)
                self.assertEqual(sorted(os.listdir(self.dir)), ["p"])  # o.npz's temporary is gone

    def test_pipe_nobody_reads(self):
        # `mhaviz trace --npz /dev/stdout | (sleep 60)`: the pipe fills and write blocks.
        r, w = os.pipe()
        try:
            p = self.stop_while_blocked(["trace", "-q", "--npz", "/dev/stdout", "--json", self.path("o.json")],
                                        signal.SIGINT, stdout=w)
            p.stderr.close()
        finally:
            os.close(r)
            os.close(w)
        self.assertEqual(p.returncode, -signal.SIGINT)
        self.assertEqual(os.listdir(self.dir), [])


class Stdout(bad.Case):
    def test_full_or_closed_stdout_fails(self):
        # Was: exit 0 with the table lost.
        args = ["trace", "--d-model", "8", "--heads", "2"]
        with open("/dev/full", "wb") as full:
            p = subprocess.run([bad.MHAVIZ] + args, stdout=full, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 1, p)
        self.assertIn("cannot write to standard output (No space left on device)", p.stderr.decode())
        p = subprocess.run([bad.MHAVIZ] + args, stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1))
        self.assertEqual(p.returncode, 1, p)
        self.assertIn("cannot write to standard output (Bad file descriptor)", p.stderr.decode())
        for cmd in (["--help"], ["export", "--help"], ["bench", "--help"]):
            with open("/dev/full", "wb") as full:
                self.assertEqual(subprocess.run([bad.MHAVIZ] + cmd, stdout=full, stderr=subprocess.DEVNULL).returncode, 1)


class SameOutput(bad.Case):
    def test_one_file_spelled_two_ways(self):
        # Was: exit 0, and one output lost.
        os.symlink("o.npz", self.path("l.json"))
        for a, b in [("o.npz", "./o.npz"), ("o.npz", "l.json")]:
            with self.subTest(a=a, b=b):
                self.fails(["trace", "--npz", a, "--json", b], 2, "name the same file", cwd=self.dir)
        if b"mhaviz gui" in subprocess.run([bad.MHAVIZ, "--help"], stdout=subprocess.PIPE).stdout:
            self.fails(["gui", "--frames", "1", "--screenshot", "s.png", "--dump-state", "./s.png"], 2,
                       "--screenshot 's.png' and --dump-state './s.png' name the same file", cwd=self.dir)

    def test_dangling_symlink_output_creates_its_target(self):
        os.symlink("made.json", self.path("link.json"))
        self.works(["trace", "-q", "--d-model", "8", "--heads", "2", "--json", self.path("link.json")])
        self.assertTrue(os.path.islink(self.path("link.json")))
        self.assertTrue(os.path.isfile(self.path("made.json")))


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_outputs_archives.py PATH/TO/mhaviz [unittest args]")
    bad.MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
