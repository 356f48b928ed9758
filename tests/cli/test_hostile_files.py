#!/usr/bin/python3
"""Files a user can be sent, and runs a typo or a stop must not lose: hostile
checkpoints (deep JSON, flipped bits, a bad bos, huge ids), a batch with nothing to
learn, weights training must not write, outputs checked before step 1, and messages
built from what the user typed. Each case ends with exit 1 or 2, a short teaching
message, and no output file.

    test_hostile_files.py PATH/TO/mhaviz [unittest args]
"""
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile

import numpy as np
import proc_state

MHAVIZ = None  # set in main
SANITIZED = bool(os.environ.get("MHAVIZ_SANITIZED"))  # set by scripts/sanitize.sh
SMALL = ["--d-model", "8", "--heads", "2", "--steps", "3", "--batch", "4", "--threads", "1"]


def run(args, timeout=120, **kw):
    return subprocess.run([MHAVIZ] + args, capture_output=True, text=True, timeout=timeout, **kw)


def config_of(path):
    return json.loads(bytes(np.load(path)["config"]).decode())


def with_config(src, dst, cfg_text):
    """A copy of checkpoint `src` whose config is `cfg_text` (str or bytes)."""
    z = dict(np.load(src))
    raw = cfg_text.encode() if isinstance(cfg_text, str) else cfg_text
    z["config"] = np.frombuffer(raw, dtype=np.uint8)
    np.savez(dst, **z)
    return dst


class Base(unittest.TestCase):
    _model = None

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = self.path("out.npz")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def refused(self, args, code, *words, max_stderr=2000, out=None):
        r = run(args)
        self.assertEqual(r.returncode, code, f"{args}: rc {r.returncode}\nstdout {r.stdout[-500:]}\n"
                                             f"stderr {r.stderr[-2000:]}")
        for w in words:
            self.assertIn(w, r.stderr, f"{args}: stderr lacks {w!r}: {r.stderr[-2000:]}")
        self.assertLess(len(r.stderr), max_stderr, f"{args}: a message of {len(r.stderr)} bytes")
        self.assertNotIn("terminate called", r.stderr)
        self.assertFalse(os.path.exists(out or self.out), f"{args} left an output file")
        leftovers = [f for f in os.listdir(self.dir) if f.startswith(".mhaviz-")]
        self.assertEqual(leftovers, [], f"{args} left temporary files")
        return r

    # A small trained checkpoint (vocab "0".."4", 2 targets) and a batch that fits it.
    def model(self):
        m = self.path("m.npz")
        r = run(["train", "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5", "--out", m] + SMALL)
        self.assertEqual(r.returncode, 0, r.stderr)
        return m

    def batch(self, targets=None, name="t.npz"):
        p = self.path(name)
        tokens = np.array([[0, 1, 2, 3, 4, 0]], dtype=np.int64)
        if targets is None:
            targets = np.stack([np.roll(tokens, 1), np.roll(tokens, 2)], axis=-1)
        np.savez(p, tokens=tokens, targets=targets)
        return p

    def loaders(self, ckpt):
        """Every command that loads a checkpoint, each writing self.out if it got through."""
        return [
            ["trace", "--model", ckpt, "--tokens", "0 1 2", "--npz", self.out],
            ["export", "--model", ckpt, "--tokens", "0 1 2", "--png", self.out],
            ["grad", "--model", ckpt, "--data", self.batch(), "--out", self.out],
            ["train", "--init", ckpt, "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5",
             "--steps", "1", "--batch", "2", "--threads", "1", "--out", self.out],
        ]


class NestedJson(Base):
    def test_deeply_nested_task_is_refused_by_every_loader(self):
        m = self.model()
        cfg = json.dumps(config_of(m))
        deep = cfg.replace('"task": {', '"task": ' + "[" * 100000 + "]" * 100000 + ', "x": {')
        self.assertIn("[[[", deep)
        bad = with_config(m, self.path("deep.npz"), deep)
        for args in self.loaders(bad):
            self.refused(args, 1, "levels deep")

    def test_wrong_type_message_is_short(self):
        m = self.model()
        cfg = config_of(m)
        cfg["format"] = [[[[["x" * 20000]]]]]
        self.refused(["grad", "--model", with_config(m, self.path("f.npz"), json.dumps(cfg)), "--data", self.batch(),
                      "--out", self.out], 1, "format", max_stderr=600)
        cfg = config_of(m)
        cfg["d_model"] = "8" * 20000
        self.refused(["grad", "--model", with_config(m, self.path("d.npz"), json.dumps(cfg)), "--data", self.batch(),
                      "--out", self.out], 1, "d_model", "wrong type", max_stderr=600)
        cfg = config_of(m)
        cfg["norm"] = "p" * 20000
        self.refused(["grad", "--model", with_config(m, self.path("n.npz"), json.dumps(cfg)), "--data", self.batch(),
                      "--out", self.out], 1, "norm", max_stderr=600)
        # A syntax error deep in a long config: the message quotes a little of it.
        self.refused(["grad", "--model", with_config(m, self.path("s.npz"), "[" * 30 + '"' + "y" * 20000),
                      "--data", self.batch(), "--out", self.out], 1, "not JSON", max_stderr=600)


class DamagedArchives(Base):
    @staticmethod
    def flip(path, member, offset_from_end=1, bit=0x80):
        """Flips one bit inside `member`'s stored data, keeping sizes and headers."""
        with zipfile.ZipFile(path) as z:
            info = z.getinfo(member)
        with open(path, "r+b") as f:
            f.seek(info.header_offset + 26)
            n, m = np.frombuffer(f.read(4), dtype="<u2")
            at = info.header_offset + 30 + int(n) + int(m) + info.compress_size - offset_from_end
            f.seek(at)
            b = f.read(1)[0]
            f.seek(at)
            f.write(bytes([b ^ bit]))

    def test_flipped_bit_in_a_checkpoint(self):
        m = self.model()
        for end in (1, 17):  # the last byte of W_q's data (where the read stops), and one inside
            bad = self.path(f"bad{end}.npz")
            with open(m, "rb") as f, open(bad, "wb") as g:
                g.write(f.read())
            self.flip(bad, "layers.0.W_q.npy", end)
            with self.assertRaises(Exception):  # numpy refuses it too: "Bad CRC-32"
                np.load(bad)["layers.0.W_q"]
            for args in self.loaders(bad):
                self.refused(args, 1, "layers.0.W_q", "CRC")

    def test_flipped_bit_in_weights_input_and_data(self):
        w = self.path("w.npz")
        rng = np.random.default_rng(0)
        np.savez(w, **{k: rng.standard_normal((8, 8)).astype(np.float32) for k in ("W_q", "W_k", "W_v", "W_o")})
        self.flip(w, "W_k.npy")
        self.refused(["trace", "--d-model", "8", "--heads", "2", "--weights", w, "--npz", self.out], 1, "W_k", "CRC")
        x = self.path("x.npz")
        np.savez(x, x=rng.standard_normal((3, 8)).astype(np.float32))
        self.flip(x, "x.npy", 2)
        self.refused(["trace", "--input", x, "--heads", "2", "--npz", self.out], 1, "'x'", "CRC")
        m = self.model()
        t = self.batch()
        self.flip(t, "targets.npy", 3, 0x01)
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, "targets", "CRC")


class CheckpointFields(Base):
    def text_checkpoint(self, bos):
        m = self.model()
        cfg = config_of(m)
        cfg["task"] = {"name": "text", "tokenizer": "mhaviz-small.model", "bos": bos}
        return with_config(m, self.path(f"text{bos}.npz"), json.dumps(cfg))

    def test_bos_outside_the_vocabulary_is_refused_at_load(self):
        for bos in (99999, -3, 5):
            bad = self.text_checkpoint(bos)
            self.refused(["trace", "--model", bad, "--tokens", "0 1", "--npz", self.out], 1, f"bos = {bos}",
                         "vocabulary of 5")

    def test_negative_d_ff_is_reported_as_given(self):
        m = self.model()
        cfg = config_of(m)
        cfg.update(block="encoder", d_ff=-5)
        r = self.refused(["grad", "--model", with_config(m, self.path("ff.npz"), json.dumps(cfg)), "--data",
                          self.batch(), "--out", self.out], 1, "d_ff = -5")
        self.assertNotIn("d_ff = 32", r.stderr)

    def test_huge_uint64_ids_are_printed_exactly(self):
        m = self.model()
        t = self.path("big.npz")
        tokens = np.array([[0, 1, 2**63 + 5]], dtype=np.uint64)
        np.savez(t, tokens=tokens, targets=np.zeros((1, 3, 2), np.int64))
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, str(2**63 + 5))
        np.savez(t, tokens=np.array([[0, -(2**62) - 7]], dtype=np.int64), targets=np.zeros((1, 2, 2), np.int64))
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, str(-(2**62) - 7))


class NothingToLearn(Base):
    def test_grad_with_every_target_minus_one(self):
        m = self.model()
        t = self.batch(targets=np.full((1, 6, 2), -1, np.int64))
        self.refused(["grad", "--model", m, "--data", t, "--out", self.out], 1, "no target to learn from")
        self.refused(["train", "--init", m, "--data", t, "--steps", "1", "--out", self.out], 1,
                     "no target to learn from")
        # One target is enough.
        y = np.full((1, 6, 2), -1, np.int64)
        y[0, 3, 1] = 2
        r = run(["grad", "--model", m, "--data", self.batch(targets=y, name="one.npz"), "--out", self.out])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertGreater(float(np.load(self.out)["loss"]), 0)


class WritesWhatLoads(Base):
    def test_exploding_run_writes_no_checkpoint(self):
        # Pre-LN, no positions, an absurd lr and no clipping: the unembedding's bias
        # leaves the range a checkpoint may hold while the layers' checks still pass.
        r = self.refused(["train", "--task", "offsets", "--norm", "pre", "--pos", "none", "--lr", "8000", "--clip", "0",
                          "--weight-decay", "0", "--steps", "30", "--threads", "1", "--out", self.out], 1,
                         "diverged", "No checkpoint was written", max_stderr=6000)
        self.assertNotIn('"done"', r.stdout)


class OutputsBeforeStepOne(Base):
    def train(self, *outputs, steps="100000"):
        return ["train", "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5", "--d-model", "8",
                "--heads", "2", "--batch", "4", "--threads", "1", "--steps", steps] + list(outputs)

    def refused_at_once(self, args, code, *words):
        # 100,000 steps would take minutes: a refusal within the timeout came before step 1.
        r = run(args, timeout=30)
        self.assertEqual(r.returncode, code, f"{args}: rc {r.returncode}, {r.stderr[-1500:]}")
        for w in words:
            self.assertIn(w, r.stderr)
        self.assertNotIn("step ", r.stderr.replace("step 1.", ""))
        return r

    def test_bad_out_paths(self):
        self.refused_at_once(self.train("--out", self.path("missing/m.npz")), 1, "missing", "does not exist")
        self.refused_at_once(self.train("--out", "."), 1, "--out", "directory")
        self.refused_at_once(self.train("--out", ""), 2, "--out")
        ro = self.path("ro")
        os.mkdir(ro)
        os.chmod(ro, 0o555)
        try:
            if os.geteuid() != 0:
                self.refused_at_once(self.train("--out", os.path.join(ro, "m.npz")), 1, "ro")
        finally:
            os.chmod(ro, 0o755)
        self.refused_at_once(self.train("--out", "/proc/m.npz"), 1, "/proc")

    def test_collisions_after_resolving_paths(self):
        m = self.path("m.npz")
        self.refused_at_once(self.train("--out", m, "--log", m), 2, "--log", "same file")
        cwd = self.dir
        r = subprocess.run([MHAVIZ] + self.train("--out", "m.npz", "--png", "x.png", "--curves", "./x.png"),
                           capture_output=True, text=True, timeout=30, cwd=cwd)
        self.assertEqual(r.returncode, 2, r.stderr[-1500:])
        self.assertIn("same file", r.stderr)
        os.symlink(self.path("real.csv"), self.path("link.csv"))
        self.refused_at_once(self.train("--out", m, "--log", self.path("real.csv"), "--curves-csv",
                                        self.path("link.csv")), 2, "same file")
        self.assertFalse(os.path.exists(m))

    def test_grad_trace_export_check_outputs_first(self):
        m = Base.model(self)
        missing = self.path("missing/o.npz")
        self.refused(["grad", "--model", m, "--data", self.batch(), "--out", missing], 1, "does not exist", out=missing)
        self.refused(["grad", "--model", m, "--data", self.batch(), "--out", ""], 2, "--out", out=missing)
        self.refused(["trace", "--model", m, "--tokens", "0 1", "--json", self.path("missing/t.json")], 1,
                     "does not exist", out=missing)
        self.refused(["export", "--model", m, "--tokens", "0 1", "--png", self.path("missing/t.png")], 1,
                     "does not exist", out=missing)


class Stops(Base):
    """A stop comes within one step (and the write); a second signal ends it at once."""

    def start(self, args):
        p = subprocess.Popen([MHAVIZ] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: p.poll() is None and p.kill())
        return p

    def wait_for_line(self, p, word):
        while True:
            line = p.stderr.readline()
            self.assertNotEqual(line, "", f"mhaviz ended before printing {word!r}")
            if word in line:
                return

    def corpus(self, megabytes):
        """One text file of `megabytes` MB, words of the tokenizer's language, long paragraphs."""
        rng = np.random.default_rng(1)
        words = np.array(["the", "cat", "sat", "on", "mat", "고양이", "가", "매트", "위에", "앉았다", "and", "dog"])
        path = self.path("corpus.txt")
        with open(path, "w") as f:
            for _ in range(megabytes):
                f.write(" ".join(rng.choice(words, 200000)) + "\n")
        return path

    def text_run(self, corpus, out):
        return ["train", "--task", "text", "--corpus", corpus, "--tokenizer", "assets/models/mhaviz-small.model",
                "--seq", "16", "--d-model", "16", "--heads", "2", "--batch", "4", "--steps", "100000", "--threads", "1",
                "--out", out]

    def test_stop_during_corpus_setup_is_prompt(self):
        corpus = self.corpus(40)
        for sig in (signal.SIGTERM, signal.SIGINT):
            p = self.start(self.text_run(corpus, self.out))
            # A second of CPU into the set-up: tokenizing 40 MB takes far longer than this.
            proc_state.wait_cpu(p, 1.0, "a second of the corpus's set-up")
            self.assertIsNone(p.poll(), "the set-up ended before the signal")
            sent = time.monotonic()
            p.send_signal(sig)
            out, err = p.communicate(timeout=60)
            took = time.monotonic() - sent
            self.assertEqual(p.returncode, 130, err[-1500:])
            self.assertLess(took, 5, f"{took:.1f} s from the signal to the exit")
            self.assertIn("nothing was trained", err)
            self.assertFalse(os.path.exists(self.out))

    def test_no_validation_pass_after_a_stop(self):
        p = self.start(self.text_run("assets/corpus", self.out) + ["--valid-every", "1"])
        self.wait_for_line(p, "validation loss")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 130, err[-1500:])
        j = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(j["status"], "interrupted")
        self.assertNotIn("Validation loss", err)  # the final pass over the whole held-out text
        # At most the pass already under way when the signal came.
        self.assertLessEqual(err.count("validation loss"), 1, err[-1500:])
        self.assertIn("tok_embed", np.load(self.out).files)

    def test_second_signal_exits_at_once(self):
        # A FIFO nobody reads: after the first Ctrl-C the run stops and blocks writing the
        # checkpoint; the second ends it there, with 130 and no temporary file.
        fifo = self.path("ckpt.fifo")
        os.mkfifo(fifo)
        p = self.start(["train", "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5", "--d-model",
                        "8", "--heads", "2", "--batch", "4", "--steps", "1000000", "--threads", "1", "--out", fifo])
        self.wait_for_line(p, "Model:")
        p.send_signal(signal.SIGINT)
        # Stopped after its step, it blocks opening the FIFO for the checkpoint.
        proc_state.wait_blocked(p, "the run to block opening the FIFO for its checkpoint")
        self.assertIsNone(p.poll(), "the run ended without a reader for its checkpoint")
        sent = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 130, err[-1500:])
        self.assertLess(time.monotonic() - sent, 5)
        self.assertEqual([f for f in os.listdir(self.dir) if f.startswith(".mhaviz-")], [])

    def test_ctrl_c_while_blocked_on_a_fifo_exits_130(self):
        fifo = self.path("log.fifo")
        os.mkfifo(fifo)
        m = self.path("m.npz")
        p = self.start(["train", "--task", "offsets", "--offsets", "2", "--seq", "6", "--vocab", "5", "--d-model",
                        "8", "--heads", "2", "--batch", "4", "--steps", "3", "--threads", "1", "--out", m,
                        "--log", fifo])
        # 3 steps, then it blocks opening the FIFO for the log.
        proc_state.wait_blocked(p, "the run to block opening the FIFO for its log")
        self.assertIsNone(p.poll(), "the run ended without a reader for its log")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        self.assertEqual(p.returncode, 130, err[-1500:])
        self.assertFalse(os.path.exists(m), "a checkpoint without its log")


class MessagesFromWhatWasTyped(Base):
    def test_steps_and_batch_have_one_limit(self):
        # Just over the run's limit, and over the flag's old wider range: one limit, one message.
        for flag, limit, overs in (("--steps", "1000000", ("1000001", "20000000")), ("--batch", "4096", ("4097", "70000"))):
            for over in overs:
                r = self.refused(["train", "--task", "offsets", flag, over, "--out", self.out], 2, flag, limit)
                for other in ("10000000", "65536"):
                    self.assertNotIn(other, r.stderr)

    def test_tokenizer_over_the_vocabulary_limit_is_named(self):
        # No --vocab was given: the tokenizer sets the vocabulary, so it is what the message names.
        import random
        import sentencepiece as spm
        rng = random.Random(0)
        words = set()
        while len(words) < 70000:
            words.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)))
        words = sorted(words)
        corpus = self.path("words.txt")
        with open(corpus, "w") as f:
            f.write("\n".join(" ".join(words[i:i + 10]) for i in range(0, len(words), 10)) + "\n")
        prefix = self.path("big")
        spm.SentencePieceTrainer.train(input=corpus, model_prefix=prefix, vocab_size=70000, hard_vocab_limit=False,
                                       model_type="word", minloglevel=2)
        r = self.refused(["train", "--task", "text", "--corpus", corpus, "--tokenizer", prefix + ".model", "--out",
                          self.out], 1, "big.model", "70000 pieces", "65536")
        self.assertNotIn("--vocab =", r.stderr)

    def test_corpus_that_is_a_device(self):
        self.refused(["train", "--task", "text", "--corpus", "/dev/zero", "--tokenizer",
                      "assets/models/mhaviz-small.model", "--out", self.out], 1, "/dev/zero", "device")


def limit_memory(gib):
    """A preexec_fn: at most `gib` GiB of address space, so a command that would overrun the
    1.5 GB budget fails fast here instead of taking the machine's memory."""
    import resource

    def apply():
        resource.setrlimit(resource.RLIMIT_AS, (int(gib * 2**30), int(gib * 2**30)))
    # A sanitizer build reserves terabytes of shadow address space at start-up, so an
    # address-space limit kills it before main(); there the refusals are still checked
    # (same exit code and message), only without the limit as a safety net.
    return None if SANITIZED else apply


class MemoryBudget(Base):
    """One estimate (activations, logits, parameters, the tokenizer's working memory)
    checked before anything is allocated, by every command."""

    def vocab_model(self, targets, name):
        """A checkpoint of a 65,536-token vocabulary with `targets` unembeddings, max_seq 1024."""
        rng = np.random.default_rng(0)
        b = self.path(name + ".batch.npz")
        np.savez(b, tokens=rng.integers(0, 65536, (1, 4)), targets=rng.integers(0, 65536, (1, 4, targets)))
        m = self.path(name + ".npz")
        r = run(["train", "--data", b, "--vocab", "65536", "--pos", "sinusoidal", "--d-model", "8", "--heads", "2",
                 "--steps", "0", "--threads", "1", "--out", m])
        self.assertEqual(r.returncode, 0, r.stderr)
        z = dict(np.load(m))
        cfg = json.loads(bytes(z["config"]).decode())
        cfg["max_seq"] = 1024
        z["config"] = np.frombuffer(json.dumps(cfg).encode(), dtype=np.uint8)
        np.savez(m, **z)
        return m

    def refused_small(self, args, code, *words):
        r = run(args, preexec_fn=limit_memory(1.5))
        self.assertEqual(r.returncode, code, f"{args}: rc {r.returncode}, {r.stderr[-1500:]}")
        for w in words:
            self.assertIn(w, r.stderr)
        self.assertFalse(os.path.exists(self.out))
        return r

    def test_training_logits_are_counted(self):
        # 128 x 256 positions x 8 targets x 1000 logits: 1 GiB, and as much again held out.
        r = self.refused_small(["train", "--task", "offsets", "--offsets", "8", "--vocab", "1000", "--seq", "256",
                                "--batch", "128", "--heads", "1", "--threads", "1", "--out", self.out], 2, "logits",
                               "--batch")
        self.assertNotIn("activations for the backward pass are what", r.stderr)

    def test_trace_model_logits_are_counted(self):
        m = self.vocab_model(16, "v16")
        self.refused_small(["trace", "--model", m, "--tokens", " ".join(["7"] * 1024), "--npz", self.out], 1,
                           "logits", "fewer tokens")

    def test_grad_logits_are_counted(self):
        m = self.vocab_model(1, "v1")
        rng = np.random.default_rng(1)
        t = self.path("big.npz")
        np.savez(t, tokens=rng.integers(0, 65536, (8, 1024)), targets=rng.integers(0, 65536, (8, 1024)))
        self.refused_small(["grad", "--model", m, "--data", t, "--out", self.out], 1, "logits")

    def test_one_long_paragraph_is_tokenized_in_bounded_memory(self):
        # SentencePiece takes ~230 bytes per byte it encodes at once: 6 MB in one piece
        # peaked at 610 MB. Set-up only (--steps 0), under a 0.5 GiB address-space limit.
        words = ["the", "cat", "sat", "on", "mat", "고양이가", "매트", "위에", "앉았다"]
        corpus = self.path("one.txt")
        with open(corpus, "w") as f:
            f.write(" ".join(words[i % 9] for i in range(1_000_000)) + "\n")
            # Every 20th line is held out: 4 lines of 8 pieces each (<s> ▁the ▁cat ▁sat ▁on
            # ▁the ▁m at) make more than one window of seq + 1 = 17.
            f.write("the cat sat on the mat\n" * 80)
        self.assertGreater(os.path.getsize(corpus), 6_000_000)
        r = run(["train", "--task", "text", "--corpus", corpus, "--tokenizer", "assets/models/mhaviz-small.model",
                 "--seq", "16", "--d-model", "16", "--heads", "2", "--batch", "4", "--steps", "0", "--threads", "1",
                 "--out", self.out], preexec_fn=limit_memory(0.5))
        self.assertEqual(r.returncode, 0, r.stderr[-1500:])
        self.assertIn("tok_embed", np.load(self.out).files)


class GuiFlags(Base):
    def setUp(self):
        super().setUp()
        if "has no GUI" in run(["gui", "--help"]).stderr:  # the sanitizer builds have no window
            self.skipTest("this build has no GUI")

    def test_export_that_writes_no_heatmaps_is_refused(self):
        # Refused while the flags are read, before any window opens (no display needed).
        for name in ("out.gif", "out", "out.PNG.txt"):
            r = run(["gui", "--frames", "3", "--export", self.path(name)], env=dict(os.environ, DISPLAY=""))
            self.assertEqual(r.returncode, 2, f"{name}: rc {r.returncode}, {r.stderr[-800:]}")
            self.assertIn(".png or .svg", r.stderr)
            self.assertFalse(os.path.exists(self.path(name)))


def main():
    global MHAVIZ
    MHAVIZ = os.path.abspath(sys.argv[1])
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])


if __name__ == "__main__":
    main()
