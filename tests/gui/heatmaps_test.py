#!/usr/bin/env python3
"""GUI tests of the Heatmaps view's "what each key adds": the maps' value-weighted norms,
each query row as shares, against `mhaviz trace --json`'s attn_norms.

    heatmaps_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, no xdotool or no numpy).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as g  # noqa: E402
from harness import dump_run  # noqa: E402

check = g.check
SENTENCE = "the cat sat on the mat because it was tired"


def cli_norms(mhaviz, d, name, *args):
    """attn_norms [head][query][key] from `mhaviz trace --json`."""
    path = os.path.join(d, name)
    subprocess.run([mhaviz, "trace", "--quiet", "--json", path, *args], check=True, cwd=d)
    return g.np.asarray(g.read_json(path)["attn_norms"], dtype=g.np.float64)


def check_shares(view, ref, what):
    """The view's per-head rows equal the CLI's norms divided by their row sums, to a
    tolerance relative to the largest share; and its raw norms the CLI's, relative to theirs."""
    np = g.np
    check(view.get("show") == "norms", f"{what}: the view shows {view.get('show')}, not norms ({view.get('error')})")
    shares = np.asarray(view["shares"], dtype=np.float64)
    want = ref / ref.sum(axis=2, keepdims=True)
    check(shares.shape == want.shape, f"{what}: shares {shares.shape}, attn_norms {want.shape}")
    err = float(np.max(np.abs(shares - want)))
    check(err <= 1e-4 * float(np.max(want)), f"{what}: shares differ from attn_norms / row sum by {err:g}")
    raw = np.asarray(view["norms"], dtype=np.float64)
    rel = float(np.max(np.abs(raw - ref))) / float(np.max(np.abs(ref)))
    check(rel <= 1e-4, f"{what}: raw norms differ from attn_norms by {rel:g} of their largest")
    mean = np.asarray(view["mean_shares"], dtype=np.float64)
    check(float(np.max(np.abs(mean - want.mean(axis=0)))) <= 1e-4, f"{what}: the mean map is not the heads' mean share")
    return shares


def test_norms_model(mhaviz, d):
    """mhaviz-small, layers 0 and 1: each head's rows are attn_norms normalised per row."""
    for layer in (0, 1):
        args = ["--model", "mhaviz-small", "--sentence", SENTENCE, "--layer", str(layer)]
        dump = dump_run(mhaviz, d, *args, "--view", "heatmaps", "--heatmap-show", "norms", name=f"l{layer}.json")
        shares = check_shares(dump["views"]["heatmaps_view"], cli_norms(mhaviz, d, f"l{layer}_cli.json", *args),
                              f"mhaviz-small layer {layer}")
        weights = g.np.asarray(dump["trace"]["attention"], dtype=g.np.float64)
        check(float(g.np.max(g.np.abs(shares - weights))) > 1e-2, f"layer {layer}: the shares equal the weights")


def test_norms_seeded(mhaviz, d):
    """The seeded layer (no model), with the causal mask, and cross-attention."""
    base = ["--sentence", SENTENCE, "--heads", "4", "--d-model", "32"]
    for what, extra in (("seeded", []), ("causal", ["--mask", "causal"]),
                        ("cross", ["--memory", "le chat est assis sur le tapis"])):
        dump = dump_run(mhaviz, d, *base, *extra, "--view", "heatmaps", "--heatmap-show", "norms",
                        name=f"{what}.json")
        check_shares(dump["views"]["heatmaps_view"], cli_norms(mhaviz, d, f"{what}_cli.json", *base, *extra), what)
    # Past the cap on cells (all maps together, as the weights' textures) the view says so,
    # and computes nothing.
    words = " ".join(f"w{i % 50}" for i in range(1100))
    dump = dump_run(mhaviz, d, "--sentence", words, "--heads", "16", "--d-model", "64", "--view", "heatmaps",
                    "--heatmap-show", "norms", name="big.json")
    view = dump["views"]["heatmaps_view"]
    check(view.get("show") == "norms" and "million cells" in view.get("error", "") and "shares" not in view,
          f"17 maps of 1024 x 1024 cells: {str(view)[:300]}")
    # Off, the view dumps no norms (the weights are the trace's).
    dump = dump_run(mhaviz, d, *base, "--view", "heatmaps", name="off.json")
    check(dump["views"]["heatmaps_view"].get("show") == "weights" and "shares" not in dump["views"]["heatmaps_view"],
          "the norms are dumped with the switch off")


def test_norms_worker(mhaviz, d):
    """Every trace on the recompute's worker (MHAVIZ_WORKER_CELLS=0): switched on by a click,
    the norms of the trace shown are computed by one job on the worker, without a
    recompute (the window never computes them for a big trace), then shown, and equal the
    CLI's; no further job follows."""
    args = ["--model", "mhaviz-small", "--sentence", SENTENCE, "--layer", "1"]
    env = dict(os.environ, MHAVIZ_WORKER_CELLS="0", XDG_CONFIG_HOME=os.path.join(d, "config"))
    app = g.App(mhaviz, d, [*args, "--view", "heatmaps"], size=(1600, 1000), env=env)
    try:
        p = app.wait_for(lambda p: "heatmap_show norms" in p["widgets"] and p["worker"]["phase"] == "idle",
                         "the switch, the first trace in")
        check(p["heatmaps"]["show"] == "weights", f"the view starts with {p['heatmaps']}")
        generation, jobs = p["generation"], p["worker"]["jobs"]
        # The click switches the view over (a repeated click would switch it back), then
        # the norms come from the worker.
        g.click_until(app, "heatmap_show norms", lambda p: p["heatmaps"]["show"] == "norms", "the switch")
        p = app.wait_for(lambda p: p["heatmaps"].get("norms_ready"), "the norms from the worker", timeout=60)
        # Computed for the trace shown, not by a recompute (which a configuration that
        # cannot run, showing its last valid trace, would never finish).
        check(p["generation"] == generation, f"switching the norms on recomputed: generation {generation} -> "
              f"{p['generation']}")
        app.wait_for(lambda p: "heatmap_norms_explanation" in p["widgets"], "the explanation over the maps")
        # One job, and none after it (the view does not ask again for norms it has).
        p = app.settle(10)
        check(p["worker"]["jobs"] == jobs + 1 and p["worker"]["phase"] == "idle",
              f"worker jobs {jobs} before the switch, {p['worker']['jobs']} after ({p['worker']['phase']})")
        final = app.quit()
    finally:
        app.kill()
    check_shares(final["views"]["heatmaps_view"], cli_norms(mhaviz, d, "cli.json", *args), "worker, layer 1")


TESTS = {
    "norms_worker": test_norms_worker,
    "norms_model": test_norms_model,
    "norms_seeded": test_norms_seeded,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "heatmaps", needs_numpy=True))
