#!/usr/bin/env python3
"""The window never waits: big recomputes run on a worker thread.

A recompute of a big configuration (1024 tokens and many heads: a second or more of work)
goes to a worker thread while the window keeps drawing the last result's picture under a
veil; the maps then go to the GPU a few per frame. These tests check, through --probe,
that the window's own thread keeps the frame budget (33 ms of its CPU time, which waiting
for a core on a busy machine does not inflate; judged on the median, the 95th percentile
and a one-off allowance: check_frame_budget) while num_heads is dragged at 1024 tokens, a
big export runs, the Head view and every other view show 1024 tokens x 100 heads, and
that a result computed on the worker is exactly
the one computed in the frame (MHAVIZ_WORKER_CELLS=0 sends every recompute there).

    worker_test.py --list
    worker_test.py NAME path/to/mhaviz      (under xvfb-run)
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import check  # noqa: E402

LONG_WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "away", "and", "then", "home"]


def long_sentence(path, n=1100):
    """A sentence of n words (the app keeps the first 1024 tokens)."""
    words = [LONG_WORDS[(i * 7 + i // 5) % len(LONG_WORDS)] for i in range(n)]
    with open(path, "w", encoding="utf-8") as f:
        f.write(" ".join(words))


def idle(p):
    return p["worker"]["phase"] == "idle"


# How a frame-budget test judges the frames it drove. A frame's work is the window
# thread's own CPU time (--probe's worker.work_hist, in bins of work_bin_ms). On a busy
# machine (the suite beside other builds: a load of 10 to 50 on 2 cores) one frame's CPU
# time varies two- to threefold (shared caches, the cores' clocks), so no single frame
# decides. Over the frames a test drives:
#  - the median frame takes at most half the budget;
#  - 95 % of them take at most the budget;
#  - ONE_OFF_BUDGETS: no frame takes more than four budgets (133 ms). That is the
#    allowance for a one-off, such as a view's first frame (its textures' first storage
#    in the GL driver); what these tests were written for took 150-200 ms frame after
#    frame (the Head view's search, a 1024 x 1024 colour pass, the divergence's copy) and
#    fails every bound.
ONE_OFF_BUDGETS = 4


def frame_work(p0, p1):
    """The window thread's frames between probes p0 and p1: (count, median, 95th
    percentile, longest), in ms, each the upper edge of its bin (inf for the last bin)."""
    w0, w1 = p0["worker"], p1["worker"]
    counts = [b - a for a, b in zip(w0["work_hist"], w1["work_hist"])]
    n, width = sum(counts), w1["work_bin_ms"]

    def edge(i):
        return float("inf") if i == len(counts) - 1 else (i + 1) * width

    def quantile(q):
        seen = 0
        for i, c in enumerate(counts):
            seen += c
            if c and seen >= q * n:
                return edge(i)
        return 0.0

    top = max((i for i, c in enumerate(counts) if c), default=-1)
    return n, quantile(0.5), quantile(0.95), edge(top) if top >= 0 else 0.0


def check_frame_budget(p0, p1, what):
    """check() the frames between p0 and p1 against the budget as described above."""
    budget = p1["worker"]["budget_ms"]
    n, p50, p95, longest = frame_work(p0, p1)
    over = [f for f in p1["worker"]["over_budget"] if f["frame"] > p0["frame"]]
    check(n >= 1 and p50 <= budget / 2 and p95 <= budget and longest <= ONE_OFF_BUDGETS * budget,
          f"{what}: {n} frames of the window's thread, median <= {p50:g} ms, 95th percentile <= {p95:g} ms, "
          f"longest <= {longest:g} ms (budget {budget:g} ms: median within half, 95 % within it, none over "
          f"{ONE_OFF_BUDGETS}); over the budget: {over}")
    return n, p50, p95, longest


def test_frame_budget(mhaviz, d):
    """Drag num_heads from 4 to 32 and back at 1024 tokens (d_model 960): every value
    is a recompute of 0.1-1 s here. The window thread's frames on the way back keep the
    budget (check_frame_budget; the way up draws each size of map a first time), the worker
    must have done the work, and the window must have drawn frames while it ran; the
    last value's result arrives and is the slider's."""
    path = os.path.join(d, "long.txt")
    long_sentence(path)
    app = g.App(mhaviz, d, ["--sentence-file", path, "--d-model", "960", "--heads", "4"])
    try:
        p = app.wait_for(lambda p: p["ok"] and idle(p) and p["generation"] >= 1 and len(p["tokens"]) == 1024,
                         "the first result at 1024 tokens", timeout=120)
        check(p["worker"]["jobs"] >= 1, f"the first recompute at 1024 tokens ran in the frame: {p['worker']}")
        p = app.settle(5)  # startup frames (the font atlas) are over the budget; count from here
        jobs0 = p["worker"]["jobs"]
        stops = g.head_stops(960)
        s = app.widget("num_heads")
        phases = set()
        frames_while_running = []

        def watch(q):
            phases.add(q["worker"]["phase"])
            if q["worker"]["phase"] in ("run", "upload"):
                frames_while_running.append(q["frame"])

        x0 = g.slider_x(s, stops.index(4), 0, len(stops) - 1)
        x1 = g.slider_x(s, stops.index(32), 0, len(stops) - 1)
        # Up once, so that every size of map has been drawn once (a software GL compiles
        # its code for a texture size on first use), then down again, counted.
        g.drag(app, s, x0, x1, 8, on_step=watch)
        app.wait_for(lambda p: p["num_heads"] == 32 and p["ok"] and idle(p), "the result for num_heads = 32",
                     timeout=180)
        p0 = app.settle(3)
        g.drag(app, s, x1, x0, 8, on_step=watch)
        p = app.wait_for(lambda p: p["num_heads"] == 4 and p["ok"] and idle(p), "the result for num_heads = 4",
                         timeout=180)
        w = p["worker"]
        check(w["jobs"] > jobs0, f"dragging num_heads at 1024 tokens never used the worker: {w}")
        check(len(set(frames_while_running)) >= 2,
              f"the window drew no frames while the worker ran (frames seen {sorted(set(frames_while_running))})")
        check_frame_budget(p0, p, "while num_heads was dragged at 1024 tokens")
        print(f"{w['jobs'] - jobs0} recomputes on the worker (the last {w['last_recompute_ms']:.0f} ms), "
              f"phases seen {sorted(phases)}; slowest frame of the window's thread since start "
              f"{w['slowest_frame_ms']:.1f} ms (frame {w['slowest_frame']}, startup included)")
        final = app.quit()
    finally:
        app.kill()
    check(final["ok"], f"final state not ok: {final['error']}")
    cfg = final["trace"]["config"]
    check(cfg["num_heads"] == 4 and cfg["seq"] == 1024, f"final trace {cfg}")
    check(final["reuse"] == "Q, K, V kept and re-split into 4 heads", f"reuse {final['reuse']!r}")


def test_exact(mhaviz, d):
    """Every recompute on the worker (MHAVIZ_WORKER_CELLS=0): typing and dragging give
    the same trace as `mhaviz trace`, to 1e-6, and the same reuse of Q, K, V."""
    env = dict(os.environ, MHAVIZ_WORKER_CELLS="0", XDG_CONFIG_HOME=os.path.join(d, "config"))
    app = g.App(mhaviz, d, ["--sentence", "The cat sat on the mat.", "--d-model", "480"], env=env)
    try:
        app.wait_for(lambda p: p["ok"] and idle(p), "the first result")
        r = app.widget("sentence")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        typed = "dogs chase a red ball"
        app.type_held(typed)
        p = app.wait_for(lambda p: p["sentence"] == typed and p["tokens"] == typed.split() and idle(p) and p["ok"],
                         "the typed sentence's result")
        jobs = p["worker"]["jobs"]
        check(jobs >= 2, f"the recomputes did not run on the worker: {p['worker']}")
        stops = g.head_stops(480)
        s = app.widget("num_heads")
        g.drag(app, s, g.slider_x(s, stops.index(8), 0, len(stops) - 1),
               g.slider_x(s, stops.index(12), 0, len(stops) - 1), 10)
        p = app.wait_for(lambda p: p["num_heads"] != 8 and p["ok"] and idle(p), "num_heads to change")
        check(p["worker"]["jobs"] > jobs, f"the head count's recompute did not run on the worker: {p['worker']}")
        final = app.quit()
    finally:
        app.kill()
    heads = final["settings"]["config"]["num_heads"]
    check(final["ok"] and final["trace"]["config"]["num_heads"] == heads, f"final {final['error']} / {heads}")
    check(final["reuse"] == f"Q, K, V kept and re-split into {heads} heads", f"reuse {final['reuse']!r}")
    g.check_trace_matches(final, g.reference_trace(mhaviz, d, typed, final["trace"]["config"]))


def test_trained_model(mhaviz, d):
    """A trained model's pass (4 layers of d_model 512 with FFNs, 256 ids, a head knocked
    out) runs on the worker too, and the layer shown equals `mhaviz trace --model ...
    --ablate` to 1e-6."""
    import subprocess
    model = os.path.join(d, "big.npz")
    subprocess.run([mhaviz, "train", "--task", "offsets", "--layers", "4", "--heads", "8", "--d-model", "512",
                    "--block", "encoder", "--seq", "256", "--batch", "1", "--steps", "0", "--out", model],
                   check=True, capture_output=True)
    ids = " ".join(str((i * 7) % 11) for i in range(256))
    app = g.App(mhaviz, d, ["--model", model, "--tokens", ids, "--layer", "3", "--ablate", "L3H1"])
    try:
        p = app.wait_for(lambda p: p["ok"] and idle(p) and p["generation"] >= 1, "the model's result", timeout=120)
        w = p["worker"]
        check(w["jobs"] >= 1, f"the trained model's pass ran in the frame: {w}")
        final = app.quit()
    finally:
        app.kill()
    check(final["ok"], f"final state: {final['error']}")
    check("knocked out: L3H1" in final["reuse"], f"reuse {final['reuse']!r}")
    ref = os.path.join(d, "ref.json")
    subprocess.run([mhaviz, "trace", "--model", model, "--tokens", ids, "--layer", "3", "--ablate", "L3H1",
                    "--json", ref, "--quiet"], check=True)
    a, b = final["trace"]["attention"], g.read_json(ref)["attention"]
    check(len(a) == len(b) == 8, f"heads {len(a)} / {len(b)}")
    worst = max(abs(x - y) for ha, hb in zip(a, b) for ra, rb in zip(ha, hb) for x, y in zip(ra, rb))
    check(worst <= 1e-6, f"the worker's layer 3 differs from mhaviz trace by {worst}")


def test_big_export(mhaviz, d):
    """Ctrl+S at 1024 tokens x 32 heads: the figure (seconds of drawing and PNG
    encoding) is made on the worker, the window's frames stay within the budget, and
    the file has the bytes `mhaviz export` writes."""
    import subprocess
    path = os.path.join(d, "long.txt")
    long_sentence(path)
    args = ["--sentence-file", path, "--d-model", "512", "--heads", "32"]
    app = g.App(mhaviz, d, args)
    try:
        p = app.wait_for(lambda p: p["ok"] and idle(p) and p["generation"] >= 1, "the result at 1024 tokens",
                         timeout=120)
        # A first export draws the veil's picture and the figure once (first uses of a
        # software GL's code); the second is counted.
        app.key("ctrl", "s")
        app.wait_for(lambda p: p["export_message"] and idle(p), "the first export message", timeout=180)
        os.remove(os.path.join(d, "mhaviz-heatmaps.png"))
        p0 = app.settle(5)
        jobs0 = p0["worker"]["jobs"]
        app.key("ctrl", "s")
        p = app.wait_for(lambda p: p["export_message"] and idle(p) and p["worker"]["jobs"] > jobs0 and
                         os.path.exists(os.path.join(d, "mhaviz-heatmaps.png")), "the export message", timeout=180)
        check(p["export_message"].startswith("Saved"), f"export failed: {p['export_message']}")
        w = p["worker"]
        check(w["jobs"] == jobs0 + 1, f"the export did not run on the worker: {w}")
        check_frame_budget(p0, app.settle(3), "during the export")
        app.quit()
    finally:
        app.kill()
    ref = os.path.join(d, "ref.png")
    subprocess.run([mhaviz, "export", *args, "--png", ref], check=True, capture_output=True)
    with open(os.path.join(d, "mhaviz-heatmaps.png"), "rb") as f1, open(ref, "rb") as f2:
        check(f1.read() == f2.read(), "the worker's export differs from mhaviz export's")


def test_head_view_big(mhaviz, d):
    """The Head view at 1024 tokens x 100 heads: 600,000 lines above the faint-line cut;
    it draws the strongest 20,000 and says so, and its frames after the first stay
    within the budget (each took 40 ms of the window's thread to submit every line, and
    150 ms while the lines were searched every frame)."""
    path = os.path.join(d, "long.txt")
    long_sentence(path)
    app = g.App(mhaviz, d, ["--sentence-file", path, "--d-model", "800", "--heads", "100", "--view", "head-view"])
    try:
        app.wait_for(lambda p: p["ok"] and idle(p) and "head_view_capped" in p["widgets"],
                     "the head view with its lines capped", timeout=180)
        p0 = app.settle(5)
        check_frame_budget(p0, app.settle(20), "the Head view at 1024 tokens x 100 heads")
        app.quit()
    finally:
        app.kill()


def test_views_big(mhaviz, d):
    """Every view at 1024 tokens x 100 heads, opened one after another on one result:
    no frame of the window's thread over the budget, first frames included (the Head
    view's search for lines, a 1024 x 1024 softmax matrix's colours, the Model view's
    labels and its 100 maps, the Metrics view's copy for the divergence took the window
    35-200 ms in one frame). Each view is waited for until it shows the trace and has
    no picture left to finish (--probe's worker.views_busy)."""
    path = os.path.join(d, "long.txt")
    long_sentence(path)
    views = g.view_registry(mhaviz, d)
    app = g.App(mhaviz, d, ["--sentence-file", path, "--d-model", "800", "--heads", "100"], size=(1600, 1000))
    try:
        p = app.wait_for(lambda p: p["ok"] and idle(p) and p["generation"] >= 1 and len(p["tokens"]) == 1024,
                         "the first result at 1024 tokens x 100 heads", timeout=180)
        p0 = app.settle(5)  # startup frames (the font atlas) are over the budget; count from here
        spans = []
        for v in views:
            name, content = v["name"], v["shows"]
            if not content:
                continue
            r = app.widget(f"tab {name}")
            first = app.probe()["frame"]
            app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
            p = app.wait_for(lambda p: p["view"] == name and content in p["widgets"] and p["worker"]["views_busy"] == 0
                             and idle(p), f"the {name} view at 1024 tokens x 100 heads", timeout=120)
            p = app.settle(5)
            spans.append((name, first, p["frame"]))
        late = [f for f in p["worker"]["over_budget"] if f["frame"] > p0["frame"]]
        named = [(f, [n for n, a, b in spans if a <= f["frame"] <= b]) for f in late]
        n, p50, p95, longest = check_frame_budget(
            p0, p, f"the views opened one by one at 1024 tokens x 100 heads (frames over the budget, by view: {named})")
        print(f"{len(spans)} views opened in {n} frames: median <= {p50:g} ms, 95th percentile <= {p95:g} ms, "
              f"longest <= {longest:g} ms; frames over the budget, by view: {named}")
        app.quit()
    finally:
        app.kill()


TESTS = {
    "frame_budget": test_frame_budget,
    "exact": test_exact,
    "trained_model": test_trained_model,
    "big_export": test_big_export,
    "head_view_big": test_head_view_big,
    "views_big": test_views_big,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "worker"))
