"""`mhaviz export --view cost|flash`: the Cost and Flash views as PNG and SVG.

- cost: the numbers the SVG's text states are `mhaviz trace --json`'s shape-flow FLOPs
  (scores + softmax + weights x V; the four projections; the FFN with the encoder block),
  the table's O() numbers at this n and d_model, and the bytes n^2 x heads x 4;
- flash: the grid has seq x seq_kv cells, the masked ones grey, each cell's weight (its
  tooltip) the attention weight of `mhaviz trace --npz` (same flags), the tile count and
  the skipped tiles those of Br x Bc tiles over a causal mask, and the stated largest
  difference from the standard context within float32's bound for two float32 results
  (checks.float32_tol; the same on stdout); the trace's context equals a float64 numpy
  online softmax over the same tiles (within checks.float32_tol);
- both: the PNG decodes at the SVG's size, the files are written atomically (nothing
  left beside them; a run whose second output cannot be written leaves neither);
- bad input: --head with --view cost, a bad --tile, --tile without --view flash, a
  heatmap-only flag: exit 2, a message, no file.

usage: test_export_views.py PATH/TO/mhaviz
"""
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
from checks import check  # noqa: E402

SVGNS = "{http://www.w3.org/2000/svg}"
SENTENCE = "the quick brown fox jumps over the lazy dog"


def run(mhaviz, args, cwd):
    return subprocess.run([mhaviz] + args, capture_output=True, text=True, timeout=300, cwd=cwd)


def svg_texts(path):
    root = ET.parse(path).getroot()
    return root, ["".join(t.itertext()) for t in root.iter(SVGNS + "text")]


def number_after(texts, prefix):
    """The number that follows `prefix` in the SVG's text lines (thousands separators dropped)."""
    for t in texts:
        if t.startswith(prefix):
            m = re.match(r"([-0-9.,e+]+)", t[len(prefix):].strip())
            if m:
                return float(m.group(1).replace(",", ""))
    return None


def png_size(path):
    from PIL import Image
    with Image.open(path) as im:
        im.load()  # decodes every pixel
        return im.size


def only_files(d, names):
    left = sorted(os.listdir(d))
    check(left == sorted(names), f"the directory holds exactly {sorted(names)} (no temporary files): {left}")


def check_cost(mhaviz, tmp):
    for extra in (["--heads", "4", "--d-model", "32"], ["--heads", "2", "--d-model", "16", "--block", "encoder"]):
        d = os.path.join(tmp, "cost" + str(len(extra)) + extra[-1])
        os.makedirs(d)
        args = ["--sentence", SENTENCE, *extra]
        r = run(mhaviz, ["export", "--view", "cost", "--png", "c.png", "--svg", "c.svg", *args], d)
        check(r.returncode == 0, f"export --view cost {extra} exits 0 ({r.stderr.strip()[:200]})")
        if r.returncode:
            continue
        only_files(d, ["c.png", "c.svg"])
        r = run(mhaviz, ["trace", "--json", "t.json", "-q", *args], tmp)
        flow = json.load(open(os.path.join(tmp, "t.json")))["shape_flow"]
        core = sum(f["flops"] for f in flow if f["tensor"] in ("scores", "attn", "context"))
        proj = sum(f["flops"] for f in flow if f["tensor"] in ("q", "k", "v", "attn_out"))
        ffn = sum(f["flops"] for f in flow if f["step"].startswith("FFN") or f["tensor"] in ("ffn_hidden", "ffn_out"))
        root, texts = svg_texts(os.path.join(d, "c.svg"))
        check(number_after(texts, "attention core:") == core, f"SVG's core FLOPs {number_after(texts, 'attention core:')} = shape flow's {core}")
        check(number_after(texts, "projections:") == proj, f"SVG's projection FLOPs {number_after(texts, 'projections:')} = shape flow's {proj}")
        if "--block" in extra:
            check(ffn > 0 and number_after(texts, "feed-forward:") == ffn,
                  f"SVG's feed-forward FLOPs {number_after(texts, 'feed-forward:')} = shape flow's {ffn}")
        n = len(SENTENCE.split())
        dm = int(extra[3])
        h = int(extra[1])
        for row, want in (("RNN", n * dm * dm), ("CNN (k = 3)", 3 * n * dm * dm), ("self-attention", n * n * dm)):
            check(any(t == f"{want:,}" for t in texts), f"the table states {row} = {want:,}")
        check(number_after(texts, "weights n\u00b2 x heads x 4 bytes:") == n * n * h * 4,
              f"weights bytes = n^2 x heads x 4 = {n * n * h * 4}")
        w, hgt = png_size(os.path.join(d, "c.png"))
        check((w, hgt) == (int(root.get("width")), int(root.get("height"))), f"PNG {w} x {hgt} = the SVG's size")


def check_flash(mhaviz, tmp):
    d = os.path.join(tmp, "flash")
    os.makedirs(d)
    args = ["--sentence", SENTENCE, "--heads", "2", "--d-model", "16", "--mask", "causal", "--seed", "5"]
    br, bc, head = 3, 5, 1
    r = run(mhaviz, ["export", "--view", "flash", "--tile", f"{br}x{bc}", "--head", str(head), "--png", "f.png",
                     "--svg", "f.svg", *args], d)
    check(r.returncode == 0, f"export --view flash exits 0 ({r.stderr.strip()[:200]})")
    if r.returncode:
        return
    only_files(d, ["f.png", "f.svg"])
    run(mhaviz, ["trace", "--npz", "t.npz", "-q", *args], tmp)
    z = np.load(os.path.join(tmp, "t.npz"))
    attn = z["attn"][0, head].astype(np.float64)
    S, K = attn.shape
    root, texts = svg_texts(os.path.join(d, "f.svg"))
    cells = [el for el in root.iter(SVGNS + "rect") if el.get("class") == "cell"]
    check(len(cells) == S * K, f"{len(cells)} cells = {S} x {K}")
    worst, masked_ok = 0.0, True
    for el in cells:
        i, j = int(el.get("data-row")), int(el.get("data-col"))
        title = "".join(el.find(SVGNS + "title").itertext())
        if j > i:
            masked_ok &= title.endswith("masked") and el.get("fill") == "#dedede"
        else:
            worst = max(worst, abs(float(title.rsplit(":", 1)[1]) - attn[i, j]))
    check(masked_ok, "the cells above the diagonal are grey and say masked")
    # 4 decimals printed: half a unit of the last one, plus float32's rounding.
    check(worst <= 0.5e-4 + checks.float32_tol(attn),
          f"each cell's weight is trace --npz's attention weight (worst {worst:.2g}, 4 decimals printed)")
    tiles = -(-S // br) * -(-K // bc)
    skipped = sum(1 for a in range(0, S, br) for b in range(0, K, bc) if b > min(a + br, S) - 1)
    stated = [t for t in texts if t.startswith("Tiles of Br x Bc")]
    check(stated and f"{br} x {bc}: {tiles} in all, {skipped} skipped" in stated[0], f"{tiles} tiles, {skipped} skipped: {stated}")
    diff = number_after(texts, "Largest difference from the standard path's context:")
    # Two float32 contexts (32 ulps), apart in the scores' hd and the weighted sum's seq_kv terms.
    ctx_tol = checks.float32_tol(z["context"], z["q"].shape[-1] + K, ulps=32)
    check(diff is not None and 0 <= diff <= ctx_tol, f"the stated largest difference {diff} <= {ctx_tol:.2e}")
    m = re.search(r"largest difference from the standard context ([0-9.e+-]+)", r.stdout)
    check(m and float(m.group(1)) == diff, f"stdout states the same difference: {r.stdout.strip()[:200]}")
    # The trace's context against a float64 online softmax over the same tiles.
    q, k, v = (z[name][0, head].astype(np.float64) for name in ("q", "k", "v"))
    scale = 1 / np.sqrt(q.shape[1])
    out = np.zeros_like(q)
    for r0 in range(0, S, br):
        rows = slice(r0, min(r0 + br, S))
        mrow = np.full(rows.stop - r0, -np.inf)
        lrow = np.zeros(rows.stop - r0)
        o = np.zeros((rows.stop - r0, q.shape[1]))
        for c0 in range(0, K, bc):
            s = q[rows] @ k[c0:c0 + bc].T * scale
            for a in range(s.shape[0]):
                for b in range(s.shape[1]):
                    if c0 + b > r0 + a:
                        s[a, b] = -np.inf
            m_new = np.maximum(mrow, s.max(axis=1))
            safe = np.where(np.isfinite(m_new), m_new, 0)
            p = np.exp(s - safe[:, None])
            resc = np.where(np.isfinite(mrow), np.exp(mrow - safe), 0)
            lrow = resc * lrow + p.sum(axis=1)
            o = resc[:, None] * o + p @ v[c0:c0 + bc]
            mrow = m_new
        out[rows] = o / lrow[:, None]
    checks.check_close(z["context"][0, head], out, f"the trace's context equals a numpy online softmax over {br} x {bc} "
                       "tiles", q.shape[1] + K)
    w, hgt = png_size(os.path.join(d, "f.png"))
    check((w, hgt) == (int(root.get("width")), int(root.get("height"))), f"PNG {w} x {hgt} = the SVG's size")


def check_bad_input(mhaviz, tmp):
    d = os.path.join(tmp, "bad")
    os.makedirs(d)
    for args, says in ((["--view", "cost", "--head", "1"], "--head"),
                       (["--view", "flash", "--tile", "0x3"], "--tile"),
                       (["--view", "flash", "--tile", "4by4"], "--tile"),
                       (["--view", "cost", "--tile", "4x4"], "--tile"),
                       (["--view", "flash", "--columns", "3"], "--columns"),
                       (["--view", "flash", "--head", "9"], "--head 9")):
        r = run(mhaviz, ["export", *args, "--png", "x.png", "--svg", "x.svg"], d)
        check(r.returncode == 2 and says in r.stderr and "Traceback" not in r.stderr,
              f"export {' '.join(args)}: exit 2 naming {says} (got {r.returncode}: {r.stderr.strip()[:160]})")
    # The second output cannot be written: neither file is left behind.
    r = run(mhaviz, ["export", "--view", "cost", "--png", "ok.png", "--svg", os.path.join(d, "no", "such", "x.svg")], d)
    check(r.returncode != 0, f"an unwritable --svg fails (exit {r.returncode})")
    only_files(d, [])


if __name__ == "__main__":
    checks.main([check_cost, check_flash, check_bad_input])
