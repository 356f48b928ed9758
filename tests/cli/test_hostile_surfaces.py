#!/usr/bin/python3
"""The newer surfaces attacked as a hostile user would: a damaged Korean catalogue,
Flash's tile and the cost/flash pictures at every accepted length, the ablation
reference pass's memory, models whose context is one piece, one output spelled two
ways, and the GUI's automation outputs stopped by a signal. Every case ends with exit
0 and what was asked, or exit 1 or 2 and a short teaching message, or 128 + signal;
never a crash or a hang, peak RSS under 1.5 GiB, no partial or temporary file.

    test_hostile_surfaces.py PATH/TO/mhaviz [unittest args]

Uses test_bad_input.py's runner (exit status, stderr, the run's own peak RSS). The
same attacks on the window are test_hostile_gui.py.
"""
import json
import os
import shutil
import struct
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_bad_input as tb  # noqa: E402

BUDGET_MIB = 1536 * tb.RSS_SCALE
SENTENCE = "고양이가 쥐를 잡았다"


# ---- .mo catalogues (the GNU gettext manual, "The Format of GNU MO Files") -------------
def read_mo(path):
    with open(path, "rb") as f:
        b = f.read()
    _, _, n, o, t = struct.unpack("<5I", b[:20])
    out = []
    for k in range(n):
        ol, oo = struct.unpack("<2I", b[o + 8 * k:o + 8 * k + 8])
        tl, to = struct.unpack("<2I", b[t + 8 * k:t + 8 * k + 8])
        out.append((b[oo:oo + ol], b[to:to + tl]))
    return out


def hashpjw(s):
    """gettext's hash of a msgid (its singular, up to the first NUL)."""
    h = 0
    for c in s.split(b"\0")[0]:
        h = ((h << 4) + c) & 0xFFFFFFFF
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
            h ^= g
    return h


def next_prime(n):
    n = max(n, 3)
    while any(n % k == 0 for k in range(2, int(n ** 0.5) + 1)):
        n += 1
    return n


def write_mo(entries, hashed=True, endian="<"):
    """A catalogue as msgfmt writes one: sorted msgids, both tables, a hash table."""
    entries = sorted(entries)
    n = len(entries)
    size = next_prime(n * 4 // 3) if hashed else 0
    orig, trans, slots = 28, 28 + 8 * n, 28 + 16 * n
    data = bytearray()
    start = slots + 4 * size
    o_tab, t_tab = [], []
    for msgid, msgstr in entries:
        o_tab.append((len(msgid), start + len(data)))
        data += msgid + b"\0"
    for msgid, msgstr in entries:
        t_tab.append((len(msgstr), start + len(data)))
        data += msgstr + b"\0"
    table = [0] * size
    for k, (msgid, _) in enumerate(entries):
        if not size:
            break
        h = hashpjw(msgid)
        idx, incr = h % size, 1 + h % (size - 2)
        while table[idx]:
            idx = idx - (size - incr) if idx >= size - incr else idx + incr
        table[idx] = k + 1
    w = lambda *v: struct.pack(endian + "%dI" % len(v), *v)  # noqa: E731
    head = w(0x950412DE, 0, n, orig, trans, size, slots)
    body = b"".join(w(*e) for e in o_tab) + b"".join(w(*e) for e in t_tab) + w(*table)
    return head + body + bytes(data)


def patched(b, offset, value):
    return b[:offset] + struct.pack("<I", value) + b[offset + 4:]


def replace_translation(entries, msgid, msgstr):
    out = [(i, msgstr if i == msgid else s) for i, s in entries]
    assert out != entries, msgid
    return out


# ---- checkpoints derived from the shipped language model ------------------------------
def small_model_path():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "models")


def language_model_with_context(dirname, context, name):
    """mhaviz-small with a context of `context` pieces: its learned positions cut, or
    repeated to reach the length (the numbers need not be good, only accepted)."""
    src = small_model_path()
    z = dict(np.load(os.path.join(src, "mhaviz-small.npz")))
    cfg = json.loads(bytes(z["config"]).decode())
    cfg["max_seq"] = context
    pos = z["pos_embed"]
    z["pos_embed"] = np.resize(pos, (context, pos.shape[1])).astype(np.float32)
    z["config"] = np.frombuffer(json.dumps(cfg).encode(), dtype=np.uint8)
    shutil.copy(os.path.join(src, "mhaviz-small.model"), os.path.join(dirname, "mhaviz-small.model"))
    path = os.path.join(dirname, name)
    np.savez(path, **z)
    return path


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", path
    return struct.unpack(">II", head[16:24])


class Surface(tb.Case):
    def assertWithinBudget(self, r):
        self.assertLess(r.rss_mib, BUDGET_MIB, r)

    def succeeds(self, args, **kw):
        r = self.works(args, **kw)
        self.assertWithinBudget(r)
        return r


# ---- a damaged Korean catalogue --------------------------------------------------------
class Catalogue(Surface):
    """A .mo cut short or crafted: gettext would read past its end, loop in its hash
    table, divide by zero or hand printf the wrong kind of argument. Each is refused
    before it is bound: the picture is drawn in English, with the reason on stderr."""

    @classmethod
    def setUpClass(cls):
        built = os.path.join(os.path.dirname(tb.MHAVIZ), "..", "assets", "locale", "ko", "LC_MESSAGES", "mhaviz.mo")
        cls.entries = read_mo(built)
        cls.good = write_mo(cls.entries)

    def setUp(self):
        super().setUp()
        self.assets = tempfile.mkdtemp(prefix="mhaviz-mo-")
        self.mo_dir = os.path.join(self.assets, "locale", "ko", "LC_MESSAGES")
        os.makedirs(self.mo_dir)
        self.env = dict(os.environ, MHAVIZ_ASSETS=self.assets)

    def tearDown(self):
        shutil.rmtree(self.assets, ignore_errors=True)
        super().tearDown()

    def install(self, data):
        path = os.path.join(self.mo_dir, "mhaviz.mo")
        with open(path, "wb") as f:
            f.write(data)

    def export(self):
        out = self.path("flash.png")
        r = tb.run(["export", "--view", "flash", "--lang", "ko", "--heads", "2", "--d-model", "8", "--head", "1",
                    "--scale", "1", "-q", "--sentence", SENTENCE, "--png", out], env=self.env)
        self.check_clean(r)
        return r, out

    def damaged(self):
        good, e = self.good, self.entries
        n, orig, trans, size, slots = struct.unpack("<5I", good[8:28])
        full = bytearray(good)
        full[slots:slots + 4 * size] = struct.pack("<%dI" % size, *([1] * size))
        header = dict(e)[b""]
        flash = "Flash attention, tile by tile · head %d".encode()
        title = "Flash attention, tile by tile".encode()
        return [
            ("empty", b""),
            ("cut inside the header", good[:27]),
            ("cut to an eighth", good[:len(good) // 8]),
            ("cut to a half", good[:len(good) // 2]),
            ("the last byte cut", good[:-1]),
            ("wrong magic number", b"\0\0\0\0" + good[4:]),
            ("unknown revision", patched(good, 4, 2 << 16)),
            ("string table past the end", patched(good, 12, len(good))),
            ("a count of 2^28 strings", patched(good, 8, 1 << 28)),
            ("a msgid past the end", patched(good, orig + 4, len(good) + 100)),
            ("a translation longer than the file", patched(good, trans, 1 << 30)),
            ("a misaligned table", patched(good, 16, trans + 1)),
            ("hash table past the end", patched(good, 24, len(good) - 8)),
            ("hash size not a prime", patched(good, 20, size + 1)),
            ("hash table with no empty slot", bytes(full)),
            ("hash slot naming a string it lacks", patched(good, slots, n + 7)),
            ("plural rule dividing by zero",
             write_mo(replace_translation(e, b"", header.replace(b"plural=0;", b"plural=n/0;")))),
            ("plural rule dividing by n - n",
             write_mo(replace_translation(e, b"", header.replace(b"plural=0;", b"plural=(n%(n-n));")))),
            ("charset UTF-7", write_mo(replace_translation(e, b"", header.replace(b"UTF-8", b"UTF-7")))),
            ("%s where the English passes %d", write_mo(replace_translation(e, flash, b"%s %s %s"))),
            ("%n", write_mo(replace_translation(e, flash, b"%d%n"))),
            ("a directive where the English has none", write_mo(replace_translation(e, title, b"%s"))),
            ("argument 3 of 1", write_mo(replace_translation(e, flash, b"%3$d"))),
            ("an empty translation", write_mo(replace_translation(e, title, b""))),
            ("over 16 MiB", good + bytes(17 << 20)),
        ]

    def test_damaged_catalogues_fall_back_to_english(self):
        for what, data in self.damaged():
            with self.subTest(what):
                self.install(data)
                r, out = self.export()
                self.assertEqual(r.rc, 0, r)
                self.assertIn("Korean translation", r.err, r)
                self.assertIn("is damaged", r.err, r)
                self.assertIn("stays in English", r.err, r)
                self.assertLess(len(r.err), 1000, r)
                self.assertTrue(os.path.getsize(out) > 0, r)
                self.assertLess(r.rss_mib, 200 * tb.RSS_SCALE, r)
                os.remove(out)

    def test_sound_catalogues_are_used(self):
        # The build's own, msgfmt's layout rewritten here, without its hash table, and
        # big-endian (glibc reads both byte orders): no notice, Korean captions.
        built = os.path.join(os.path.dirname(tb.MHAVIZ), "..", "assets", "locale", "ko", "LC_MESSAGES", "mhaviz.mo")
        with open(built, "rb") as f:
            as_built = f.read()
        for what, data in [("built", as_built), ("rewritten", self.good),
                           ("no hash table", write_mo(self.entries, hashed=False)),
                           ("big-endian", write_mo(self.entries, endian=">"))]:
            with self.subTest(what):
                self.install(data)
                r, out = self.export()
                self.assertEqual(r.rc, 0, r)
                self.assertEqual(r.err, "", r)
                os.remove(out)

    def test_a_directory_or_fifo_in_its_place_is_no_catalogue(self):
        # Not a regular file: never opened (a FIFO would block the open), so --lang ko
        # says the translation is missing.
        path = os.path.join(self.mo_dir, "mhaviz.mo")
        for what in ("directory", "fifo"):
            with self.subTest(what):
                os.mkdir(path) if what == "directory" else os.mkfifo(path)
                r = tb.run(["export", "--lang", "ko", "--heads", "2", "--d-model", "8", "-q", "--png",
                            self.path(what + ".png")], env=self.env)
                self.check_clean(r)
                # Other installs (the build tree's) may still be found after this one.
                self.assertIn(r.rc, (0, 1), r)
                if r.rc == 1:
                    self.assertIn("was not found", r.err, r)
                os.rmdir(path) if what == "directory" else os.remove(path)


# ---- Flash's tile, and the cost and flash pictures at every accepted length -------------
class FlashTile(Surface):
    def test_bad_tiles_are_refused_as_typed(self):
        # Was: sscanf's %d wrapped 4294967297 to 1, and an empty value was ignored.
        base = ["export", "--view", "flash", "--heads", "2", "--d-model", "8", "--png", self.path("o.png")]
        for v in ["4294967297x1", "1x4294967297", "18446744073709551617x4", "", "x", "4x", "x4", "4x4x4", " 4x4",
                  "4x4 ", "+4x4", "4X4", "0x4", "4x0", "-1x4", "4x-1", "4097x1", "0x10x4", "4.0x4", "\u0664x\u0664",
                  "4\x004"[:1] + "x\n4"]:
            with self.subTest(tile=repr(v)):
                self.fails(base + ["--tile", v], 2, "--tile expects Br x Bc")

    def test_tiles_that_fit(self):
        for v in ["3x5", "1x1", "4096x4096"]:
            with self.subTest(tile=v):
                self.succeeds(["export", "--view", "flash", "--heads", "2", "--d-model", "8", "--tile", v, "-q",
                               "--png", self.path("o.png")])

    def test_fit_takes_plain_decimals(self):
        base = ["export", "--heads", "2", "--d-model", "8", "--png", self.path("o.png")]
        for v in ["inf:1", "nan:1", " 16:9", "+16:9", "0x10:9", "1e1:9", "16:", ":9", "16:9:1", "16..9:9", "4.1:1"]:
            with self.subTest(fit=v):
                self.fails(base + ["--fit", v], 2, "--fit expects")
        self.succeeds(base + ["--fit", "1.85:1", "-q"])


class LongPictures(Surface):
    def sentence_file(self, words):
        with open(self.path("s.txt"), "w") as f:
            f.write(" ".join("word%d" % i for i in range(words)))
        return self.path("s.txt")

    def test_cost_and_flash_at_1024_tokens(self):
        # Was: the header's sentence line made the picture ~49 px wider per token, and
        # about 340 tokens were refused, after the trace, with suggestions that did not apply.
        s = self.sentence_file(1024)
        for view in ("cost", "flash"):
            with self.subTest(view=view):
                out = self.path(view + ".png")
                r = self.succeeds(["export", "--view", view, "--heads", "2", "--d-model", "16", "--sentence-file", s,
                                   "-q", "--png", out])
                w, h = png_size(out)
                self.assertLessEqual(w * h, 16 << 20, r)
                self.assertLess(w, 4000, r)  # the sentence wraps instead of widening the picture
                os.remove(out)

    def test_large_scale_is_lowered_to_fit(self):
        s = self.sentence_file(1024)
        out = self.path("flash.png")
        r = self.succeeds(["export", "--view", "flash", "--heads", "2", "--d-model", "16", "--sentence-file", s,
                           "--scale", "8", "--png", out])
        self.assertIn("drawn at scale", r.err, r)
        w, h = png_size(out)
        self.assertLessEqual(w * h, 16 << 20, r)

    def test_one_long_word_keeps_the_grid_on_the_page(self):
        out = self.path("flash.png")
        self.succeeds(["export", "--view", "flash", "--heads", "2", "--d-model", "8", "--sentence",
                       "x" * 20000 + " 고양이가", "-q", "--png", out])
        self.assertLess(png_size(out)[0], 4000)

    def test_flash_svg_over_its_cells_is_refused_before_the_trace(self):
        s = self.sentence_file(1024)
        r = self.fails(["export", "--view", "flash", "--heads", "64", "--d-model", "64", "--sentence-file", s,
                        "--svg", self.path("o.svg")], 2, "--svg limit", "write only a --png")
        self.assertLess(r.rss_mib, 80 * tb.RSS_SCALE, r)

    def test_pictures_to_a_full_disk_or_a_directory(self):
        for view in ("cost", "flash"):
            with self.subTest(view=view):
                self.fails(["export", "--view", view, "--heads", "2", "--d-model", "8", "--png", "/dev/full"], 1,
                           "/dev/full")
                self.fails(["export", "--view", view, "--heads", "2", "--d-model", "8", "--png", self.dir], 1,
                           "is a directory")


class Grids(Surface):
    """export --grid of a model with many heads: one row of maps was wider than any
    picture may be, and every cell was a scene rectangle of its own."""

    @classmethod
    def setUpClass(cls):
        cls.models = tempfile.mkdtemp(prefix="mhaviz-grid-")
        cls.wide, cls.deep = os.path.join(cls.models, "wide.npz"), os.path.join(cls.models, "deep.npz")
        for path, heads, layers in [(cls.wide, "64", "1"), (cls.deep, "32", "6")]:
            r = tb.run(["train", "--task", "offsets", "--offsets", "1", "--seq", "256", "--vocab", "8", "--heads", heads,
                        "--d-model", "64", "--layers", layers, "--batch", "1", "--steps", "0", "--out", path])
            assert r.rc == 0, r

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.models, ignore_errors=True)

    def test_64_heads_wrap_onto_rows(self):
        # Was exit 1 after the work: "The picture would be 17961 x 411 pixels".
        out = self.path("grid.png")
        self.succeeds(["export", "--grid", "--model", self.wide, "--example", "0", "-q", "--png", out])
        w, h = png_size(out)
        self.assertLessEqual(max(w, h), 16384)
        self.assertLessEqual(w * h, 16 << 20)

    def test_six_layers_of_32_heads_in_bounded_memory(self):
        # Was 2,074 MiB: 12.6 million cells of 116 bytes each before a pixel was drawn.
        out = self.path("grid.png")
        self.succeeds(["export", "--grid", "--model", self.deep, "--example", "0", "-q", "--png", out])
        self.assertLessEqual(max(png_size(out)), 16384)


# ---- one output spelled two ways -------------------------------------------------------
class OneFileTwice(Surface):
    def test_every_spelling_is_a_usage_error(self):
        # Was: the literal same name gave exit 2, ./a.png or a symlink exit 1.
        a = self.path("a.png")
        open(a, "wb").close()
        os.symlink(a, self.path("link.svg"))
        os.link(a, self.path("hard.svg"))
        os.mkdir(self.path("sub"))
        base = ["export", "--heads", "2", "--d-model", "8", "--png", a, "--svg"]
        for other in [a, os.path.join(self.dir, ".", "a.png"), self.path("sub/../a.png"), self.path("link.svg"),
                      self.path("hard.svg"), self.dir + "//a.png"]:
            with self.subTest(other=other):
                self.fails(base + [other], 2, "name the same file")
        for view in ("cost", "flash", "head"):
            with self.subTest(view=view):
                self.fails(["export", "--view", view, "--heads", "2", "--d-model", "8", "--png", a, "--svg",
                            self.path("link.svg")], 2, "name the same file")

    def test_trace_train_and_gui_outputs(self):
        o = self.path("o.json")
        self.fails(["trace", "--heads", "2", "--d-model", "8", "--json", o, "--npz", self.path("./o.json")], 2,
                   "same file")
        self.fails(["train", "--task", "offsets", "--steps", "1", "--out", self.path("m.npz"), "--log",
                    os.path.join(self.dir, ".", "m.npz")], 2, "same file")
        self.fails(["train", "--task", "offsets", "--steps", "1", "--out", self.path("m.npz"), "--curves-csv",
                    self.path("m.csv"), "--png", self.path("x/../m.npz")], 2)
        if not tb.has_gui():  # the sanitizer builds have no window
            return
        env = dict(os.environ, DISPLAY="")
        for flags in (["--screenshot", self.path("s.png"), "--export", self.path("./s.png")],
                      ["--dump-state", o, "--stats", self.path("sub/../o.json")],
                      ["--probe", o, "--dump-state", self.path("./o.json")]):
            with self.subTest(flags=flags[0] + " " + flags[2]):
                os.makedirs(self.path("sub"), exist_ok=True)
                self.fails(["gui", "--frames", "2"] + flags, 2, "same file", env=env)


# ---- models whose context is one piece (or two) ----------------------------------------
class ShortContext(Surface):
    def setUp(self):
        super().setUp()
        self.models = tempfile.mkdtemp(prefix="mhaviz-ctx-")
        self.one = language_model_with_context(self.models, 1, "one.npz")
        self.two = language_model_with_context(self.models, 2, "two.npz")

    def tearDown(self):
        shutil.rmtree(self.models, ignore_errors=True)
        super().tearDown()

    def test_ablate_measures_a_one_piece_model(self):
        # Was: "the sentence is empty: type a few words", with no sentence given.
        r = self.succeeds(["ablate", "--model", self.one, "--windows", "4", "--threads", "1"])
        self.assertNotIn("sentence", r.err)
        self.assertIn(b"L0H0", r.out)
        r = self.succeeds(["ablate", "--model", self.one, "--windows", "4", "--heads", "0.1", "--mode", "mean",
                           "--json"])
        self.assertIn("increase", json.loads(r.out))

    def test_icl_names_the_context_it_needs(self):
        for m, ctx in [(self.one, "1"), (self.two, "2")]:
            with self.subTest(context=ctx):
                r = self.fails(["ablate", "--model", m, "--icl"], 1, "needs a context of 5",
                               "context (max_seq) is " + ctx)
                self.assertNotIn("sentence", r.err)
                self.assertLess(r.rss_mib, 300 * tb.RSS_SCALE, r)
        self.fails(["ablate", "--model", language_model_with_context(self.models, 8, "eight.npz"), "--icl", "--span",
                    "4"], 2, "--span 4 does not fit", "at most 3")

    def test_generate_needs_room_for_a_piece(self):
        # Was: "only its first 0 are kept, leaving room for one new piece".
        r = self.fails(["generate", "--model", self.one, "--prompt", "고양이가"], 1, "<s> alone fills it",
                       "at least 2 pieces")
        self.assertNotIn("first 0", r.err)
        r = self.succeeds(["generate", "--model", self.two, "--prompt", "고양이가 쥐를", "--tokens", "3"])
        self.assertIn("only <s> is kept", r.err)
        self.assertIn("stopped at the model's context", r.err)

    def test_trace_and_export_cut_to_the_context(self):
        self.succeeds(["trace", "--model", self.one, "--sentence", SENTENCE, "--json", self.path("o.json")])
        self.succeeds(["export", "--model", self.one, "--sentence", SENTENCE, "--view", "flash", "-q",
                       "--png", self.path("o.png")])


# ---- the ablation reference pass's memory ----------------------------------------------
class ReferencePass(Surface):
    """The reference examples (validation windows, held-out examples) are evaluated in
    batches the one memory estimate sizes: a model with many heads or a long context
    once took 2.3 to 4.3 GB here."""

    @classmethod
    def setUpClass(cls):
        cls.models = tempfile.mkdtemp(prefix="mhaviz-ref-")
        # 64 heads over 256 tokens: 34 MB of attention per held-out example, little arithmetic.
        cls.wide = os.path.join(cls.models, "wide.npz")
        r = tb.run(["train", "--task", "offsets", "--offsets", "1", "--seq", "256", "--vocab", "8", "--heads", "64",
                    "--d-model", "64", "--layers", "1", "--batch", "2", "--steps", "0", "--out", cls.wide])
        assert r.rc == 0, r

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.models, ignore_errors=True)

    def test_ablate_examples_in_bounded_batches(self):
        r = self.succeeds(["ablate", "--model", self.wide, "--heads", "0.5", "--mode", "mean", "--examples", "96",
                           "--json"])
        self.assertGreater(json.loads(r.out)["increase"], -1)

    def test_trace_mean_ablation_in_bounded_batches(self):
        tokens = " ".join(str(i % 8) for i in range(256))
        self.succeeds(["trace", "--model", self.wide, "--tokens", tokens, "--ablate", "0.5", "--ablate-mode", "mean",
                       "-q", "--npz", self.path("o.npz")])

    def test_long_context_language_model(self):
        lm = language_model_with_context(self.models, 1024, "long.npz")
        r = self.succeeds(["ablate", "--model", lm, "--heads", "0.0", "--windows", "20", "--threads", "2", "--json"])
        self.assertIn("20 validation windows of 1024 pieces", json.loads(r.out)["reference"])


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_hostile_surfaces.py PATH/TO/mhaviz [unittest args]")
    tb.MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
