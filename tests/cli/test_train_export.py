#!/usr/bin/python3
"""`mhaviz train`'s pictures: --png/--svg (the layers x heads grid), --gif (the grid over
training), --curves and --curves-csv. The grid's cells are checked against the weights
`mhaviz trace --model ... --npz` gives for the same checkpoint and example, the GIF
in PIL, the curves CSV against --log; bad output paths stop the run before training
and leave nothing behind.

    test_train_export.py PATH/TO/mhaviz [unittest args]
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import proc_state

try:
    from PIL import Image, ImageSequence
except ImportError:  # python3-pil (scripts/setup.sh installs it)
    print("python3-pil is not installed; skipping")
    sys.exit(77)

MHAVIZ = None
SMALL = ["--task", "offsets", "--layers", "2", "--seq", "8", "--vocab", "7", "--steps", "40", "--batch", "16",
         "--threads", "1"]

# Viridis at every 8th entry of matplotlib's 256-entry table (and the last), linearly
# interpolated between; the renderer's colours agree to within 1/255.
VIRIDIS = np.array([
    [0.267004, 0.004874, 0.329415], [0.277018, 0.050344, 0.375715], [0.282327, 0.094955, 0.417331],
    [0.282884, 0.135920, 0.453427], [0.278826, 0.175490, 0.483397], [0.270595, 0.214069, 0.507052],
    [0.258965, 0.251537, 0.524736], [0.244972, 0.287675, 0.537260], [0.229739, 0.322361, 0.545706],
    [0.214298, 0.355619, 0.551184], [0.199430, 0.387607, 0.554642], [0.185556, 0.418570, 0.556753],
    [0.172719, 0.448791, 0.557885], [0.160665, 0.478540, 0.558115], [0.149039, 0.508051, 0.557250],
    [0.137770, 0.537492, 0.554906], [0.127568, 0.566949, 0.550556], [0.120565, 0.596422, 0.543611],
    [0.120638, 0.625828, 0.533488], [0.132268, 0.655014, 0.519661], [0.157851, 0.683765, 0.501686],
    [0.196571, 0.711827, 0.479221], [0.246070, 0.738910, 0.452024], [0.304148, 0.764704, 0.419943],
    [0.369214, 0.788888, 0.382914], [0.440137, 0.811138, 0.340967], [0.515992, 0.831158, 0.294279],
    [0.595839, 0.848717, 0.243329], [0.678489, 0.863742, 0.189503], [0.762373, 0.876424, 0.137064],
    [0.845561, 0.887322, 0.099702], [0.926106, 0.897330, 0.104071], [0.993248, 0.906157, 0.143936]])
KNOTS = np.array([i * 8 / 255 for i in range(32)] + [1.0])
MASKED = (222, 222, 222)


def viridis(w):
    return tuple(np.interp(min(max(w, 0.0), 1.0), KNOTS, VIRIDIS[:, k]) * 255 for k in range(3))


def run(args, timeout=300):
    return subprocess.run([MHAVIZ] + args, capture_output=True, text=True, timeout=timeout)


class TrainExport(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.p = {k: os.path.join(d, v) for k, v in
                 dict(out="m.npz", png="grid.png", svg="grid.svg", gif="heads.gif", curves="curves.png",
                      csv="curves.csv", log="log.csv").items()}
        p = cls.p
        cls.r = run(["train"] + SMALL + ["--out", p["out"], "--png", p["png"], "--svg", p["svg"], "--gif", p["gif"],
                                         "--curves", p["curves"], "--curves-csv", p["csv"], "--log", p["log"]])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.assertEqual(self.r.returncode, 0, self.r.stderr)

    def test_gif_frames(self):
        with Image.open(self.p["gif"]) as im:
            self.check_gif(im)
        self.assertLess(os.path.getsize(self.p["gif"]), 2 << 20)

    def check_gif(self, im):
        self.assertEqual(im.format, "GIF")
        self.assertEqual(im.n_frames, 41)  # a snapshot every 2% of 40 steps: steps 0, 1, ..., 40
        w, h = im.size
        self.assertGreater(w, 400)
        self.assertGreater(h, 300)
        durations = []
        for frame in ImageSequence.Iterator(im):
            self.assertEqual(frame.convert("RGB").size, (w, h))
            durations.append(frame.info["duration"])
        self.assertGreater(durations[-1], durations[1])  # the trained heads are held longer
        self.assertEqual(im.info.get("loop"), 0)  # loops forever

    def check_cells(self, png_path, svg_path, example=0):
        """Every cell of the grid (found through the SVG, whose coordinates are the PNG's
        pixels) against the weights trace --model writes for the same example."""
        with Image.open(png_path) as im:
            png = np.asarray(im.convert("RGB")).astype(int)
        with open(svg_path, encoding="utf-8") as f:
            svg = f.read()
        cells = re.findall(r'<rect class="cell" data-layer="(\d+)" data-head="(\d+)" data-row="(\d+)" '
                           r'data-col="(\d+)" x="(\d+)" y="(\d+)" width="\d+" height="\d+" fill="#(\w{6})"', svg)
        self.assertEqual(len(cells), 2 * 2 * 8 * 8)  # layers x heads x seq x seq
        attn = {}
        for layer in range(2):
            out = os.path.join(self.tmp.name, f"t{layer}.npz")
            r = run(["trace", "--model", self.p["out"], "--example", str(example), "--layer", str(layer), "--npz",
                     out, "-q"])
            self.assertEqual(r.returncode, 0, r.stderr)
            attn[layer] = np.load(out)["attn"][0]
        for layer, head, row, col, x, y, fill in cells:
            layer, head, row, col, x, y = map(int, (layer, head, row, col, x, y))
            w = attn[layer][head, row, col]
            want = MASKED if col > row else viridis(w)  # offsets is causal
            got = png[y, x]
            self.assertTrue(np.all(np.abs(got - np.array(want)) <= 1.01),
                            f"layer {layer} head {head} ({row},{col}): weight {w}, png {got}, want {want}")
            self.assertEqual(tuple(int(fill[i:i + 2], 16) for i in (0, 2, 4)), tuple(got))

    def test_grid_cells_match_trace(self):
        self.check_cells(self.p["png"], self.p["svg"])

    def test_export_grid_of_checkpoint(self):
        png, svg = os.path.join(self.tmp.name, "e.png"), os.path.join(self.tmp.name, "e.svg")
        r = run(["export", "--model", self.p["out"], "--grid", "--example", "5", "--png", png, "--svg", svg, "-q"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.check_cells(png, svg, example=5)
        for args, words in [(["--grid", "--png", png], "--model"),
                            (["--model", self.p["out"], "--grid", "--head", "1", "--png", png], "--head"),
                            (["--model", self.p["out"], "--grid", "--layer", "1", "--png", png], "--layer")]:
            r = run(["export"] + args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn(words, r.stderr)

    def test_grid_caption_and_labels(self):
        j = json.loads(self.r.stdout.strip().splitlines()[-1])
        with open(self.p["svg"], encoding="utf-8") as f:
            svg = f.read()
        self.assertIn("step 40 of 40", svg)
        self.assertIn(" / ".join(f"{a:.2f}" for a in j["accuracy"]), svg)  # the held-out accuracy
        for h in j["heads"]:
            self.assertIn(h["label"], svg)

    def test_curves_csv_is_the_log(self):
        with open(self.p["csv"]) as f, open(self.p["log"]) as g:
            csv, log = f.read(), g.read()
        self.assertEqual(csv, log)
        rows = csv.strip().splitlines()
        self.assertEqual(rows[0], "step,lr,loss,accuracy_0,accuracy_1,grad_norm")
        self.assertEqual(len(rows), 41)
        j = json.loads(self.r.stdout.strip().splitlines()[-1])
        self.assertAlmostEqual(float(rows[-1].split(",")[2]), j["loss"], places=6)
        with Image.open(self.p["curves"]) as im:
            self.assertEqual(im.format, "PNG")
            self.assertGreater(im.size[0], 600)


class TrainExportBadPaths(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.out = os.path.join(self.dir, "m.npz")

    def tearDown(self):
        self.tmp.cleanup()

    def refused(self, extra, code, *words, there=()):
        r = run(["train"] + SMALL + ["--steps", "1000000", "--out", self.out] + extra, timeout=60)
        self.assertEqual(r.returncode, code, r.stderr)
        for w in words:
            self.assertIn(w, r.stderr)
        self.assertNotIn("Model:", r.stderr)  # refused before training
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(there), "left files behind")

    def test_missing_directory(self):
        self.refused(["--gif", os.path.join(self.dir, "nope", "h.gif")], 1, "does not exist", "Nothing was trained")

    def test_directory_as_file(self):
        os.mkdir(os.path.join(self.dir, "sub"))
        self.refused(["--png", os.path.join(self.dir, "sub")], 2, "--png", ".png", there=["sub"])
        os.mkdir(os.path.join(self.dir, "sub.png"))
        self.refused(["--png", os.path.join(self.dir, "sub.png")], 1, "is a directory", there=["sub", "sub.png"])

    def test_wrong_extension(self):
        self.refused(["--gif", os.path.join(self.dir, "h.png")], 2, "--gif", ".gif")
        self.refused(["--curves", os.path.join(self.dir, "c.gif")], 2, "--curves", ".png or .svg")
        self.refused(["--curves-csv", os.path.join(self.dir, "c.txt")], 2, ".csv")

    def test_svg_too_big(self):
        self.refused(["--svg", os.path.join(self.dir, "g.svg"), "--layers", "3", "--heads", "8", "--d-model", "64",
                      "--seq", "128", "--vocab", "50"], 2, "--svg", "cells", "--png")

    def test_same_path_twice(self):
        p = os.path.join(self.dir, "a.png")
        self.refused(["--png", p, "--curves", p], 2, "same file", "--curves")

    def test_interrupt_writes_pictures_with_checkpoint(self):
        gif, png = os.path.join(self.dir, "h.gif"), os.path.join(self.dir, "g.png")
        p = subprocess.Popen([MHAVIZ, "train"] + SMALL + ["--steps", "1000000", "--out", self.out, "--gif", gif,
                                                          "--png", png],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = ""
        while not line.startswith("Model:"):
            line = p.stderr.readline()
            self.assertNotEqual(line, "", "mhaviz train ended before training")
        # A few steps: a third of a second more of the run's CPU time (not the clock's).
        proc_state.wait_cpu(p, proc_state.cpu_seconds(p.pid) + 0.3, "a few training steps")
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 130, err)
        j = json.loads(out.strip().splitlines()[-1])
        self.assertEqual(j["status"], "interrupted")
        self.assertEqual(sorted(os.listdir(self.dir)), ["g.png", "h.gif", "m.npz"])
        # The untrained heads, and (if a step ran) the heads where it stopped.
        with Image.open(gif) as im:
            self.assertEqual(im.n_frames, 2 if j["steps"] > 0 else 1)


def main():
    global MHAVIZ
    MHAVIZ = sys.argv[1]
    unittest.main(argv=[sys.argv[0]] + sys.argv[2:])


if __name__ == "__main__":
    main()
