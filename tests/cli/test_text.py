#!/usr/bin/env python3
"""Text as typed, headless: a sentence in decomposed Hangul (NFD, as macOS file names
and some PDFs give it) is traced and exported exactly like the same sentence typed
precomposed (NFC), with a note; missing glyphs are drawn as a box, not as '?'.

    test_text.py MHAVIZ
"""
import json
import os
import subprocess
import sys
import tempfile
import unicodedata
import unittest

MHAVIZ = None
NFC = "고양이가 쥐를 잡았다"
NFD = unicodedata.normalize("NFD", NFC)


def mhaviz(*args):
    return subprocess.run([MHAVIZ, *args], capture_output=True, text=True, timeout=120)


class Text(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="mhaviz-text-")
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def trace(self, name, *args):
        out = self.path(name + ".json")
        r = mhaviz("trace", "--heads", "4", "--d-model", "16", "--json", out, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(out, encoding="utf-8") as f:
            return json.load(f), r

    def test_nfd_sentence_traces_like_nfc(self):
        self.assertNotEqual(NFC, NFD)
        a, ra = self.trace("nfc", "--sentence", NFC)
        b, rb = self.trace("nfd", "--sentence", NFD)
        self.assertEqual(a["tokens"], ["고양이가", "쥐를", "잡았다"])
        self.assertEqual(b["tokens"], a["tokens"])
        self.assertEqual(b["attention"], a["attention"])
        self.assertIn("NFC", rb.stderr)
        self.assertIn("NFC", b.get("notice", ""))
        self.assertNotIn("NFC", ra.stderr)
        # The tokens line and the shape-flow table (the last line names the output file).
        self.assertEqual(rb.stdout.splitlines()[:-1], ra.stdout.splitlines()[:-1])

    def test_nfd_memory_sentence(self):
        a, _ = self.trace("m_nfc", "--sentence", "cat", "--memory", NFC)
        b, rb = self.trace("m_nfd", "--sentence", "cat", "--memory", NFD)
        self.assertEqual(b["attention"], a["attention"])
        self.assertIn("memory sentence was normalised", rb.stderr)

    def test_nfd_sentence_exports_like_nfc(self):
        pngs = []
        for name, s in (("nfc", NFC), ("nfd", NFD)):
            png = self.path(name + ".png")
            r = mhaviz("export", "--heads", "2", "--d-model", "8", "--sentence", s, "--png", png)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(png, "rb") as f:
                pngs.append(f.read())
        self.assertEqual(pngs[0], pngs[1], "the NFD sentence's heatmaps differ from the NFC one's")

    def test_sentence_file_is_normalised(self):
        p = self.path("s.txt")
        with open(p, "w", encoding="utf-8") as f:
            f.write(NFD)
        a, _ = self.trace("f_nfc", "--sentence", NFC)
        b, _ = self.trace("f_nfd", "--sentence-file", p)
        self.assertEqual(b["tokens"], a["tokens"])
        self.assertEqual(b["attention"], a["attention"])

    def test_compatibility_forms_are_kept(self):
        # NFC, not NFKC: full-width punctuation stays as typed.
        a, r = self.trace("fw", "--sentence", "고양이 ，！")
        self.assertEqual(a["tokens"], ["고양이", "，", "！"])
        self.assertNotIn("NFC", r.stderr)

    def test_emoji_is_a_box_not_a_question_mark(self):
        pngs = {}
        for name, s in (("emoji", "cat 😀"), ("question", "cat ?")):
            png = self.path(name + ".png")
            r = mhaviz("export", "--heads", "1", "--d-model", "4", "--sentence", s, "--png", png)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(png, "rb") as f:
                pngs[name] = f.read()
        self.assertNotEqual(pngs["emoji"], pngs["question"])


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_text.py MHAVIZ")
    MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
