#!/usr/bin/env python3
"""Bad fonts through MHAVIZ_FONT: cut off, crafted, endless, a FIFO, a directory, too
big. Each is refused with a message and exit 1, in bounded memory, before
stb_truetype reads it. Uses test_bad_input.py's runner (exit status and peak RSS).

    test_bad_font.py PATH/TO/mhaviz [unittest args]
"""
import os
import sys
import unittest

import test_bad_input as bad


class Fonts(bad.Case):
    """MHAVIZ_FONT: a font that is cut off, crafted, endless, a FIFO or a directory is
    refused with a message (exit 1), before stb_truetype sees it, in bounded memory."""
    NANUM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "fonts",
                         "NanumGothic.ttf")
    ARGS = ["export", "--d-model", "8", "--heads", "2", "-q"]

    def export_with(self, font):
        os.environ["MHAVIZ_FONT"] = font
        try:
            return bad.run(self.ARGS + ["--png", self.path("o.png")])
        finally:
            del os.environ["MHAVIZ_FONT"]

    def refused(self, font, *phrases, rss=80):
        os.environ["MHAVIZ_FONT"] = font
        try:
            r = self.fails(self.ARGS + ["--png", self.path("o.png")], 1, "MHAVIZ_FONT", *phrases)
        finally:
            del os.environ["MHAVIZ_FONT"]
        self.assertNotIn("basic_filebuf", r.err, r)
        self.assertLess(r.rss_mib, rss * bad.RSS_SCALE, r)
        return r

    def cut(self, name, n=None, patch=None):
        data = bytearray(open(self.NANUM, "rb").read())
        if n is not None:
            data = data[:n]
        if patch:
            patch(data)
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def test_a_good_font_still_works(self):
        r = self.export_with(self.NANUM)
        self.check_clean(r)
        self.assertEqual(r.rc, 0, r)
        self.assertTrue(os.path.exists(self.path("o.png")))

    def test_truncated_fonts(self):
        # Was: a segfault in stbtt_InitFont at 100 kB; at 1 MB exit 0 after reading past
        # the end of the buffer.
        for n in (100000, 1000000, 2000, 13):
            self.refused(self.cut("t%d.ttf" % n, n), "cannot be used")

    def test_crafted_fonts(self):
        import struct
        num_tables = struct.unpack_from(">H", open(self.NANUM, "rb").read(), 4)[0]

        def table(data, tag):
            for i in range(num_tables):
                if data[12 + 16 * i:16 + 16 * i] == tag:
                    return 12 + 16 * i
            raise AssertionError(tag)

        def many_tables(d):  # a table directory longer than the (cut) file
            struct.pack_into(">H", d, 4, 0xFFFF)
            del d[500000:]

        def glyf_past_end(d):
            struct.pack_into(">I", d, table(d, b"glyf") + 12, 0x7FFFFFFF)

        def more_glyphs(d):  # maxp says more glyphs than loca and hmtx describe
            struct.pack_into(">H", d, struct.unpack_from(">I", d, table(d, b"maxp") + 8)[0] + 4, 0xFFFF)

        def cmap_elsewhere(d):  # the cmap's subtable offsets point outside the file
            cmap = struct.unpack_from(">I", d, table(d, b"cmap") + 8)[0]
            for i in range(struct.unpack_from(">H", d, cmap + 2)[0]):
                struct.pack_into(">I", d, cmap + 4 + 8 * i + 4, 0x7FFFFFF0)

        for name, patch in (("many", many_tables), ("glyf", glyf_past_end), ("maxp", more_glyphs),
                            ("cmap", cmap_elsewhere)):
            self.refused(self.cut(name + ".ttf", patch=patch), "cannot be used")

    def test_endless_devices_fifo_and_directory(self):
        # Was: /dev/zero read to 4 GB and growing, a FIFO hung, a directory gave
        # "basic_filebuf::underflow".
        self.refused("/dev/zero", "not a regular file", rss=60)
        self.refused("/dev/null", "not a regular file", rss=60)
        fifo = self.path("fifo.ttf")
        os.mkfifo(fifo)
        self.refused(fifo, "not a regular file", rss=60)
        os.mkdir(self.path("dir.ttf"))
        self.refused(self.path("dir.ttf"), "is a directory", rss=60)

    def test_font_over_the_cap(self):
        big = self.path("big.ttf")
        with open(big, "wb") as f:  # sparse: 65 MiB on paper, nothing on disk
            f.truncate(65 << 20)
        self.refused(big, "MiB", rss=60)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_bad_font.py PATH/TO/mhaviz [unittest args]")
    bad.MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
