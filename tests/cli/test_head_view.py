"""`mhaviz export --view head`: the head view (a line from each query to each key,
opacity = weight, a colour per head) as SVG and PNG, for every model source:

- seeded random weights: the SVG's lines are exactly the (head, query, key) whose weight
  in `mhaviz trace --json` (same flags) is >= 0.01, and each line's stroke-opacity and
  data-weight are that weight; --head K keeps head K's lines only;
- the four positional heads (--preset heads): on every query, head 0's strongest line goes
  to the previous token, head 1's to itself, head 2's to the first, head 3's to the next
  (what the heads were built to do, checked without mhaviz's numbers);
- the shipped language model on a Korean sentence (--model --sentence --layer 1): the
  opacities equal the attention weights of a float64 PyTorch rebuild of the checkpoint
  (torch_model.py) within checks.float32_tol (two layers of d_model-long sums), when
  torch is installed;
- the PNG has the SVG's size, and its pixels are the head's colour in the middle of a
  strong line and white where no line runs;
- bad input: an unknown --view, heatmap-only flags with --view head, --grid with it, a
  preset with a configuration or a model, a head out of range, too many tokens: exit 2,
  a message, and no file written.

usage: test_head_view.py PATH/TO/mhaviz
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
CKPT = os.path.join(ROOT, "assets", "models", "mhaviz-small.npz")
SVGNS = "{http://www.w3.org/2000/svg}"
MIN_WEIGHT = 0.01
# The head colours (Tableau 10 and two more), as the app draws them.
COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189), (140, 86, 75),
           (227, 119, 194), (127, 127, 127), (188, 189, 34), (23, 190, 207), (0, 0, 128), (128, 128, 0)]
import checks  # noqa: E402
from checks import check  # noqa: E402


def run(mhaviz, args):
    return subprocess.run([mhaviz] + args, capture_output=True, text=True, timeout=300, cwd=ROOT)


def svg_lines(path):
    """(head, query, key) -> (opacity, data-weight, x0, y0, x1, y1) of every attention line."""
    root = ET.parse(path).getroot()
    lines = {}
    for el in root.iter(SVGNS + "polyline"):
        if el.get("class") != "attn":
            continue
        key = (int(el.get("data-head")), int(el.get("data-query")), int(el.get("data-key")))
        pts = [tuple(map(float, p.split(","))) for p in el.get("points").split()]
        lines[key] = (float(el.get("stroke-opacity", "1")), float(el.get("data-weight")), pts[0], pts[-1])
    return root, lines


def expected_lines(attn, heads=None):
    H, S, K = attn.shape
    return {(h, i, j) for h in range(H) if heads is None or h in heads for i in range(S) for j in range(K)
            if attn[h, i, j] >= MIN_WEIGHT}


def check_against(lines, attn, what, tol=1e-6, heads=None):
    want = expected_lines(attn, heads)
    check(set(lines) == want, f"{what}: a line for exactly the {len(want)} weights >= {MIN_WEIGHT} "
                              f"(got {len(lines)})")
    worst = max((abs(op - min(1.0, attn[k])) + abs(w - attn[k]) for k, (op, w, _, _) in lines.items()), default=0)
    check(worst <= tol, f"{what}: opacity and data-weight = the attention weight (largest difference {worst:.2e})")
    # Queries on the left at one x, keys on the right at another; rows go down in order.
    xs0 = {round(a[0], 2) for _, _, a, _ in lines.values()}
    xs1 = {round(b[0], 2) for _, _, _, b in lines.values()}
    check(len(xs0) == 1 and len(xs1) == 1 and min(xs1) > max(xs0), f"{what}: lines run from one column to the other")
    ys = {}
    for (h, i, j), (_, _, a, b) in lines.items():
        ys.setdefault(("q", i), set()).add(round(a[1], 2))
        ys.setdefault(("k", j), set()).add(round(b[1], 2))
    one_y = all(len(v) == 1 for v in ys.values())
    q_rows = sorted((i, next(iter(v))) for (side, i), v in ys.items() if side == "q")
    check(one_y and all(y0 < y1 for (_, y0), (_, y1) in zip(q_rows, q_rows[1:])),
          f"{what}: every token has one row, in order")


def seeded(mhaviz, tmp):
    flags = ["--sentence", "The cat sat on the mat .", "--heads", "4", "--d-model", "64", "--mask", "causal"]
    r = run(mhaviz, ["trace"] + flags + ["--json", f"{tmp}/t.json", "-q"])
    check(r.returncode == 0, "trace --json runs")
    attn = np.asarray(json.load(open(f"{tmp}/t.json", encoding="utf-8"))["attention"], dtype=np.float64)
    r = run(mhaviz, ["export", "--view", "head"] + flags + ["--svg", f"{tmp}/s.svg", "--png", f"{tmp}/s.png"])
    check(r.returncode == 0 and "head view of 7 query x 7 key tokens, 4 heads" in r.stdout,
          f"seeded: export --view head runs ({r.stderr.strip()[:200]})")
    root, lines = svg_lines(f"{tmp}/s.svg")
    check_against(lines, attn, "seeded")
    legend = [el for el in root.iter(SVGNS + "rect") if el.get("class") == "legend"]
    check([int(el.get("data-head")) for el in legend] == [0, 1, 2, 3], "seeded: a legend swatch per head")
    check(all(el.get("fill") == "#%02x%02x%02x" % COLOURS[int(el.get("data-head"))] for el in legend),
          "seeded: the legend's colours are the heads'")
    check_size(f"{tmp}/s.png", root, "seeded")
    # One head, where lines of several heads cannot coincide: the PNG's pixels.
    r = run(mhaviz, ["export", "--view", "head", "--head", "2"] + flags + ["--svg", f"{tmp}/h2.svg", "--png",
                                                                          f"{tmp}/h2.png"])
    check(r.returncode == 0, "seeded --head 2 runs")
    root2, lines2 = svg_lines(f"{tmp}/h2.svg")
    check_against(lines2, attn, "seeded --head 2", heads={2})
    check_png(f"{tmp}/h2.png", root2, lines2, attn, "seeded --head 2")


def check_size(png, root, what):
    from PIL import Image
    w, h = Image.open(png).size
    check(w == int(root.get("width")) and h == int(root.get("height")), f"{what}: the PNG is {w} x {h}, the SVG's size")


def check_png(png, root, lines, attn, what):
    """A picture of one head: its strong lines in its colour, white where none runs."""
    from PIL import Image
    check_size(png, root, what)
    img = np.asarray(Image.open(png).convert("RGB")).astype(int)
    # Strong lines: the pixel at the middle of the line is close to the head's colour
    # (a fainter line of the same head may cross there: most of them, not all).
    strong = [(k, v) for k, v in lines.items() if attn[k] >= 0.9]
    near = 0
    for (h, i, j), (_, _, a, b) in strong:
        x, y = int((a[0] + b[0]) / 2), int((a[1] + b[1]) / 2)
        patch = img[y - 1:y + 2, x - 1:x + 2].reshape(-1, 3)
        near += np.min(np.abs(patch - np.array(COLOURS[h])).sum(1)) < 90
    check(strong and near >= 0.7 * len(strong), f"{what}: {near} of {len(strong)} strong lines are drawn in their "
                                                   "head's colour")
    # Between the columns, above the first row: no line runs there, white.
    xs = sorted({a[0] for _, _, a, _ in lines.values()} | {b[0] for _, _, _, b in lines.values()})
    y_top = min(a[1] for _, _, a, _ in lines.values())
    blank = img[int(y_top) - 12, int(xs[0]) + 5:int(xs[-1]) - 5]
    check(bool(np.all(blank == 255)), f"{what}: white where no line runs")


def preset(mhaviz, tmp):
    words = "one two three four five six seven"
    r = run(mhaviz, ["export", "--view", "head", "--preset", "heads", "--sentence", words, "--svg", f"{tmp}/p.svg",
                     "--png", f"{tmp}/p.png"])
    check(r.returncode == 0 and "4 heads" in r.stdout, f"preset heads: export runs ({r.stderr.strip()[:200]})")
    _, lines = svg_lines(f"{tmp}/p.svg")
    n = len(words.split())
    targets = {0: lambda i: i - 1, 1: lambda i: i, 2: lambda i: 0, 3: lambda i: i + 1}
    for h, target in targets.items():
        ok = True
        for i in range(n):
            t = target(i)
            if not 0 <= t < n:
                continue
            row = {j: w for (hh, ii, j), (_, w, _, _) in lines.items() if hh == h and ii == i}
            ok &= bool(row) and max(row, key=row.get) == t
        check(ok, f"preset heads: head {h}'s strongest line from every query goes where the head was built to look")


def language_model(mhaviz, tmp):
    sentence = "고양이가 쥐를 잡았다. 고양이가 쥐를"
    r = run(mhaviz, ["export", "--view", "head", "--model", CKPT, "--sentence", sentence, "--layer", "1",
                     "--svg", f"{tmp}/lm.svg", "--png", f"{tmp}/lm.png"])
    check(r.returncode == 0, f"language model: export --view head runs ({r.stderr.strip()[:200]})")
    r = run(mhaviz, ["trace", "--model", CKPT, "--sentence", sentence, "--layer", "1", "--json", f"{tmp}/lm.json",
                     "-q"])
    doc = json.load(open(f"{tmp}/lm.json", encoding="utf-8"))
    attn = np.asarray(doc["attention"], dtype=np.float64)
    root, lines = svg_lines(f"{tmp}/lm.svg")
    check_against(lines, attn, "language model vs trace --json")
    texts = [el.text for el in root.iter(SVGNS + "text")]
    check(all(p in texts for p in doc["pieces"]), "language model: the columns are the tokenizer's pieces")
    check_size(f"{tmp}/lm.png", root, "language model")
    r = run(mhaviz, ["export", "--view", "head", "--model", CKPT, "--sentence", sentence, "--layer", "0", "--head",
                     "1", "--svg", f"{tmp}/lm0.svg", "--png", f"{tmp}/lm0.png"])
    r0 = run(mhaviz, ["trace", "--model", CKPT, "--sentence", sentence, "--layer", "0", "--json", f"{tmp}/lm0.json",
                      "-q"])
    check(r.returncode == 0 and r0.returncode == 0, "language model: layer 0, head 1 alone")
    attn0 = np.asarray(json.load(open(f"{tmp}/lm0.json", encoding="utf-8"))["attention"], dtype=np.float64)
    root0, lines0 = svg_lines(f"{tmp}/lm0.svg")
    check_against(lines0, attn0, "language model layer 0 head 1", heads={1})
    check_png(f"{tmp}/lm0.png", root0, lines0, attn0, "language model layer 0 head 1")
    try:
        import torch
    except ImportError:
        print("skip  the torch rebuild (python3-torch is not installed)")
        return
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import torch_model as tm
    cfg, params = tm.load_checkpoint(CKPT)
    P = {k: torch.tensor(v, dtype=torch.float64) for k, v in params.items()}
    ref = torch_attention(tm, cfg, P, torch.tensor([doc["ids"]]), 1)
    # float32 against float64: relative to the weights' scale; the two layers' projections
    # are the longest sums on the way.
    check_against(lines, ref, "language model vs a float64 torch rebuild",
                  tol=checks.float32_tol(ref, 2 * cfg["d_model"]))


def torch_attention(tm, cfg, P, tokens, layer):
    """Layer `layer`'s attention weights (heads, seq, seq) of the rebuilt model."""
    import torch
    B, S = tokens.shape
    x = P["tok_embed"][tokens]
    if cfg["positional"] == "learned":
        x = x + P["pos_embed"][:S]
    for l in range(layer + 1):
        pre = f"layers.{l}."
        h = tm.layer_norm(x, P[pre + "ln_gamma"], P[pre + "ln_beta"], cfg["ln_eps"]) if cfg["norm"] == "pre" else x
        H = cfg["num_heads"]
        hd = cfg["d_model"] // H
        q = (h @ P[pre + "W_q"] + P[pre + "b_q"]).reshape(B, S, H, hd).transpose(1, 2)
        k = (h @ P[pre + "W_k"] + P[pre + "b_k"]).reshape(B, S, H, hd).transpose(1, 2)
        scores = (q @ k.transpose(-1, -2)) / hd ** 0.5
        scores = scores.masked_fill(torch.triu(torch.ones(S, S, dtype=torch.bool), 1), float("-inf"))
        if l == layer:
            return torch.softmax(scores, -1)[0].numpy()
        x = tm.sublayer(cfg, x, lambda t: tm.mha(cfg, P, pre, t), P[pre + "ln_gamma"], P[pre + "ln_beta"])
        x = tm.sublayer(cfg, x, lambda t: tm.ffn(cfg, P, pre, t), P[pre + "ln2_gamma"], P[pre + "ln2_beta"])
    raise AssertionError("unreachable")


def bad_input(mhaviz, tmp):
    out = f"{tmp}/bad.png"
    long_sentence = " ".join(["word"] * 300)
    cases = [
        (["--view", "heads"], "--view expects heatmaps"),
        (["--view", "head", "--columns", "3"], "--columns shapes the heatmaps"),
        (["--view", "head", "--fit", "16:9"], "--fit shapes the heatmaps"),
        (["--view", "head", "--model", CKPT, "--grid"], "--grid draws heatmaps"),
        (["--view", "head", "--preset", "heads", "--heads", "2"], "brings its own configuration"),
        (["--view", "head", "--preset", "heads", "--model", CKPT], "--preset cannot be used with --model"),
        (["--view", "head", "--preset", "lesson", "--sentence", "a b"], "three made-up words"),
        (["--view", "head", "--preset", "sideways"], "--preset must be"),
        (["--view", "head", "--heads", "4", "--d-model", "64", "--head", "4"], "--head 4 is out of range"),
        (["--view", "head", "--sentence", long_sentence], "at most 256 tokens"),
    ]
    for args, words in cases:
        r = run(mhaviz, ["export"] + args + ["--png", out])
        check(r.returncode == 2 and words in r.stderr and not os.path.exists(out),
              f"export {' '.join(a if len(a) < 40 else a[:20] + '...' for a in args)}: exit 2, says '{words}', "
              f"no file (exit {r.returncode}: {r.stderr.strip()[:160]})")
    # A sentence that is not UTF-8 for the language model's tokenizer: a runtime error.
    argv = [a.encode() for a in [mhaviz, "export", "--view", "head", "--model", CKPT, "--sentence"]]
    r = subprocess.run(argv + [b"cat \xff", b"--png", out.encode()], capture_output=True, timeout=300, cwd=ROOT)
    err = r.stderr.decode("utf-8", "replace")
    check(r.returncode == 1 and "not valid UTF-8" in err and not os.path.exists(out),
          f"export --model --sentence with a byte that is not UTF-8: exit 1, says so ({err.strip()[:160]})")


if __name__ == "__main__":
    checks.main([seeded, preset, language_model, bad_input])
