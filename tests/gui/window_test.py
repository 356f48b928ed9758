#!/usr/bin/env python3
"""GUI tests of the window as a whole: drive the real mhaviz window under Xvfb with
xdotool and check, through the app's own outputs (--probe, --dump-state, --stats,
screenshots, exports), that the computation followed what was typed and dragged:
typing, dragging, keys, layout, settings, exports, text, presentation mode. (The views'
own tests are in VIEW_test.py, one per view; the harness is harness.py.)

    window_test.py TEST MHAVIZ

Run under a display (ctest wraps each test in xvfb-run). Exit 0 pass, 1 fail,
77 skip (no display or no xdotool).
"""
import math
import os
import shutil
import subprocess
import sys
import time

from harness import (App, Fail, HOLD, RUN_TIMEOUT, check, click_until, close, check_layout_reach, check_trace_matches, drag, head_stops,
                     png_rgb, png_size, read_json, reference_trace, run_main, set_xft_dpi, slider_x, view_registry,
                     visit_views_last_valid, xdo)


def test_type_and_drag(mhaviz, d):
    """Type a new sentence (keys held 60 ms), drag num_heads; the trace must follow."""
    app = App(mhaviz, d, ["--sentence", "The cat sat on the mat.", "--d-model", "480"])
    try:
        r = app.widget("sentence")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        typed = "dogs chase a red ball"
        app.type_held(typed)
        p = app.wait_for(lambda p: p["sentence"] == typed and p["tokens"] == typed.split(),
                         "the typed sentence and its tokens")
        check(p["ok"], f"computation failed: {p['error']}")

        # Drag the num_heads slider from 8 to 12. It stops only at the divisors of
        # d_model = 480 (up to 32), so 12 is the 9th of 15 stops.
        stops = head_stops(480)
        s = app.widget("num_heads")
        y = s[1] + s[3] / 2
        x0, x1 = slider_x(s, stops.index(8), 0, len(stops) - 1), slider_x(s, stops.index(12), 0, len(stops) - 1)
        xdo("mousemove", "--window", app.wid, int(x0), int(y), "sleep", HOLD, "mousedown", 1, "sleep", HOLD)
        for k in range(1, 11):
            xdo("mousemove", "--window", app.wid, int(x0 + (x1 - x0) * k / 10), int(y), "sleep", 0.03)
        xdo("sleep", HOLD, "mouseup", 1)
        p = app.wait_for(lambda p: p["num_heads"] != 8, "num_heads to change")
        check(abs(p["num_heads"] - 12) <= 1, f"dragging to 12 gave num_heads = {p['num_heads']}")
        if p["ok"]:
            # Clicking a head enlarges it; Escape goes back to all heads.
            m = app.widget("map 2")
            app.click(m[0] + m[2] / 2, m[1] + m[3] / 2)
            app.wait_for(lambda p: p["enlarged"] == 2, "head 2 to be enlarged")
            app.key("Escape")
            app.wait_for(lambda p: p["enlarged"] == -1, "Escape to return to all heads")
        final = app.quit()
    finally:
        app.kill()
    check(final["sentence"] == typed, f"final sentence {final['sentence']!r}")
    heads = final["settings"]["config"]["num_heads"]
    check(480 % heads == 0, f"the slider landed on num_heads = {heads}, which does not divide 480")
    if True:
        check(final["ok"], f"valid config failed: {final['error']}")
        check(final["trace"]["config"]["num_heads"] == heads, "trace was not recomputed for the new num_heads")
        # The last change was the head count: Q, K, V were kept and re-split, not recomputed
        # (and the trace still equals mhaviz trace's, checked next).
        check(final["reuse"] == f"Q, K, V kept and re-split into {heads} heads",
              f"after dragging num_heads the status says {final['reuse']!r}")
        check_trace_matches(final, reference_trace(mhaviz, d, typed, final["trace"]["config"]))


def test_fast_clicks(mhaviz, d):
    """Clicks whose move, press and release fall within one frame (no hold, as a quick
    click on a slow frame) are not lost: each tab opens. Dear ImGui 1.86 ignores a press
    on a tab the pointer was not on the frame before; the input queue holds the press a
    frame."""
    app = App(mhaviz, d, ["--sentence", "the cat sat on the mat"], size=(1600, 1000))
    try:
        views = [v["name"] for v in view_registry(mhaviz, d)]
        p = app.settle()
        for name in views[1:6] + views[:1]:
            r = p["widgets"][f"tab {name}"]
            start = p["frame"]
            xdo("mousemove", "--window", app.wid, int(r[0] + r[2] / 2), int(r[1] + r[3] / 2), "mousedown", 1,
                "mouseup", 1)
            # The press is handed over a frame late and the tab opens a frame after it:
            # 20 frames are plenty, however long each takes.
            p = app.wait_for(lambda p: p["view"] == name or p["frame"] >= start + 20, f"the {name} tab")
            check(p["view"] == name, f"a quick click on tab {name} was lost: the view is still {p['view']}")
        app.quit()
    finally:
        app.kill()


def test_fast_keys(mhaviz, d):
    """Keys pressed and released within one frame (no hold) are not lost: the input queue."""
    app = App(mhaviz, d, ["--sentence", "x"])
    try:
        r = app.widget("sentence")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held("abcxy")
        app.wait_for(lambda p: p["sentence"] == "abcxy", "abcxy")
        # Two BackSpaces, each pressed and released at once (within one frame). 30 ms
        # apart: GLFW reads a release followed by a press of the same key within
        # 20 ms as X11 auto-repeat, as no typist can tap that fast.
        xdo("key", "--delay", 30, "BackSpace", "BackSpace")
        app.type_held("d")
        p = app.wait_for(lambda p: p["sentence"] in ("abcd", "abcxd", "abcxyd"), "the edit after fast BackSpaces")
        check(p["sentence"] == "abcd", f"fast BackSpaces were lost: sentence is {p['sentence']!r}, expected 'abcd'")
        # Escape leaves the field without reverting what was typed (ImGui's default).
        app.key("Escape")
        app.key("z")  # not in the field any more: no effect
        p = app.settle(6)  # the keys are handed out one a frame: all of them seen
        check(p["sentence"] == "abcd", f"after Escape the sentence is {p['sentence']!r}, expected 'abcd'")
        # A quick Enter (pressed and released at once) leaves the field, text intact.
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        xdo("key", "--delay", 0, "Return")
        app.key("y")
        p = app.settle(6)
        check(p["sentence"] == "abcd", f"after Enter the sentence is {p['sentence']!r}, expected 'abcd'")
        final = app.quit()
    finally:
        app.kill()
    check(final["trace"]["tokens"] == ["abcd"], f"tokens {final['trace']['tokens']}")


def test_export_shortcut(mhaviz, d):
    """Ctrl+S exports the heatmaps where the path field says; typing an .svg path and
    clicking Export writes SVG. The files equal what `mhaviz export` writes."""
    args = ["--sentence", "the cat sat", "--heads", "4", "--d-model", "64"]
    app = App(mhaviz, d, args, size=(1280, 1000))  # tall enough to show the Export section
    try:
        app.wait_for(lambda p: p["ok"], "a valid trace")
        app.key("ctrl", "s")
        p = app.wait_for(lambda p: p["export_message"], "the export message")
        check(p["export_message"].startswith("Saved"), f"export failed: {p['export_message']}")
        r = app.widget("export_path")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held("heads.svg")
        # The Export button sits at the foot of the left column, below the fold when the
        # column holds the model, sentence, configuration and export options.
        xdo("mousemove", "--window", app.wid, int(r[0] + r[2] / 2), int(r[1]), "click", "--repeat", "10",
            "--delay", "30", "5")
        b = app.widget("export")
        app.click(b[0] + b[2] / 2, b[1] + b[3] / 2)
        try:
            p = app.wait_for(lambda p: "SVG" in p["export_message"], "the SVG export message")
        except Fail:
            app.key("ctrl", "q")
            time.sleep(3)
            raise
        final = app.quit()
    finally:
        app.kill()
    check(final["ok"], "trace lost after export")
    png, svg = os.path.join(d, "mhaviz-heatmaps.png"), os.path.join(d, "heads.svg")
    w, h = png_size(png)
    check(w > 300 and h > 300, f"exported PNG is {w}x{h}")
    with open(svg, encoding="utf-8") as f:
        cells = f.read().count('class="cell"')
    check(cells == 4 * 3 * 3, f"SVG has {cells} cells, expected heads x seq x seq = 36")
    # The GUI hands the renderer the same trace the CLI computes: same bytes.
    ref_png, ref_svg = os.path.join(d, "ref.png"), os.path.join(d, "ref.svg")
    subprocess.run([mhaviz, "export", *args, "--png", ref_png, "--svg", ref_svg], check=True, capture_output=True)
    for mine, ref in ((png, ref_png), (svg, ref_svg)):
        with open(mine, "rb") as f1, open(ref, "rb") as f2:
            check(f1.read() == f2.read(), f"{os.path.basename(mine)} differs from mhaviz export's {os.path.basename(ref)}")


def test_automation(mhaviz, d):
    """--frames/--screenshot/--stats/--export: the documented automation path."""
    shot, stats = os.path.join(d, "shot.png"), os.path.join(d, "stats.json")
    dump = os.path.join(d, "dump.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--sentence", "고양이가 쥐를 잡았다", "--heads", "4", "--d-model", "64",
                    "--screenshot", shot, "--frames", "4", "--stats", stats, "--churn", "--width", "1024",
                    "--height", "700", "--dump-state", dump], check=True, env=env, cwd=d)
    check(png_size(shot) == (1024, 700), f"screenshot is {png_size(shot)}, expected 1024x700")
    st = read_json(stats)
    check(st["frames"] == 4, f"stats frames {st['frames']}")
    check(st["median_frame_ms"] > 0 and st["median_recompute_ms"] > 0, f"stats {st}")
    check(st["recomputes"] >= 4, f"--churn should recompute every frame, got {st['recomputes']}")
    final = read_json(dump)
    check(final["trace"]["tokens"] == ["고양이가", "쥐를", "잡았다"], f"tokens {final['trace']['tokens']}")
    check(not os.path.exists(os.path.join(d, "config", "mhaviz")), "automation mode wrote the user's settings")
    # Fonts: an unusable MHAVIZ_FONT falls back to ImGui's font with a visible notice.
    # Sentences: the field's cap cuts longer text, with a notice.
    long_sentence = " ".join(["word"] * 2000)  # 9,999 bytes
    subprocess.run([mhaviz, "gui", "--frames", "2", "--dump-state", dump, "--sentence", long_sentence],
                   check=True, env=dict(env, MHAVIZ_FONT=os.path.join(d, "no-such-font.ttf")))
    final = read_json(dump)
    check("no-such-font.ttf" in final["font_notice"], f"font notice {final['font_notice']!r}")
    check(len(final["sentence"].encode()) <= 8192, f"sentence of {len(final['sentence'])} bytes was not capped")
    check(any("at most 8192 bytes" in n for n in final["notices"]), f"no cap notice in {final['notices']}")
    # ... and the core keeps the first 1024 tokens of what is left (Limits::kMaxTokens).
    check(final["ok"] and len(final["trace"]["tokens"]) == min(1024, len(final["sentence"].split())),
          "capped sentence not computed")
    # Many tokens: every map (cells under a pixel) still fits in the heatmaps panel.
    probe = os.path.join(d, "probe.json")
    many = " ".join(f"w{i % 50}" for i in range(300))
    subprocess.run([mhaviz, "gui", "--frames", "3", "--probe", probe, "--sentence", many, "--heads", "16",
                    "--d-model", "64", "--width", "1280", "--height", "800"], check=True, env=env, cwd=d)
    w = read_json(probe)["widgets"]
    area = w["heatmaps"]
    maps = [w[f"map {k}"] for k in range(17)]
    for k, m in enumerate(maps):
        check(m[0] >= area[0] - 0.5 and m[1] >= area[1] - 0.5 and m[0] + m[2] <= area[0] + area[2] + 0.5 and
              m[1] + m[3] <= area[1] + area[3] + 0.5, f"map {k} {m} does not fit in the heatmaps area {area}")
        check(m[2] > 20 and m[3] > 20, f"map {k} is only {m[2]}x{m[3]} px")
    # No OpenGL 3.3 (Mesa told to offer only 3.0): a clear message and exit 1.
    r = subprocess.run([mhaviz, "gui", "--frames", "1"], capture_output=True, text=True,
                       env=dict(env, MESA_GL_VERSION_OVERRIDE="3.0"), timeout=RUN_TIMEOUT)
    check(r.returncode == 1 and "OpenGL 3.3" in r.stderr, f"without GL 3.3: status {r.returncode}, {r.stderr!r}")
    # A screenshot to an unwritable place is a clear error, exit 1.
    r = subprocess.run([mhaviz, "gui", "--frames", "1", "--screenshot", "/nonexistent-dir/x.png"],
                       capture_output=True, text=True, env=env)
    check(r.returncode == 1 and "nonexistent-dir" in r.stderr, f"status {r.returncode}, stderr {r.stderr!r}")


def test_settings(mhaviz, d):
    """The sentence and config persist atomically; a corrupt file falls back with a notice."""
    cfgdir = os.path.join(d, "config")
    env = dict(os.environ, XDG_CONFIG_HOME=cfgdir)
    settings = os.path.join(cfgdir, "mhaviz", "settings.json")
    dump = os.path.join(d, "dump.json")

    def run(*extra):
        subprocess.run([mhaviz, "gui", "--settings", "--frames", "3", "--dump-state", dump, *extra],
                       check=True, env=env, cwd=d)
        return read_json(dump)

    run("--sentence", "hello there world", "--heads", "4", "--mask", "causal")
    s = read_json(settings)
    check(s["sentence"] == "hello there world", f"saved sentence {s['sentence']!r}")
    check(s["config"]["num_heads"] == 4 and s["config"]["mask"] == "causal", f"saved config {s['config']}")
    check(os.path.exists(os.path.join(cfgdir, "mhaviz", "imgui.ini")), "imgui.ini not saved")
    leftovers = [f for f in os.listdir(os.path.join(cfgdir, "mhaviz")) if f not in ("settings.json", "imgui.ini")]
    check(not leftovers, f"temporary files left behind: {leftovers}")

    restored = run()
    check(restored["sentence"] == "hello there world", f"restored sentence {restored['sentence']!r}")
    check(restored["trace"]["config"]["num_heads"] == 4, "num_heads not restored")
    check(restored["trace"]["config"]["mask"] == "causal", "mask not restored")
    check(not restored["notices"], f"unexpected notices {restored['notices']}")

    # The layout persists through imgui.ini: drag the splitter between the inputs and
    # the results 120 px to the right in a real window, close it, and reopen.
    app = App(mhaviz, d, [], size=(1280, 800), settings=True, env=env)
    try:
        sp = app.widget("split_v")
        x, y = sp[0] + sp[2] / 2, sp[1] + sp[3] / 2
        xdo("mousemove", "--window", app.wid, int(x), int(y), "sleep", HOLD, "mousedown", 1, "sleep", HOLD)
        for k in range(1, 7):
            xdo("mousemove", "--window", app.wid, int(x + 20 * k), int(y), "sleep", 0.03)
        xdo("sleep", HOLD, "mouseup", 1)
        moved = app.wait_for(lambda p: p["widgets"]["split_v"][0] > sp[0] + 100, "the splitter to move")
        app.quit()
    finally:
        app.kill()
    with open(os.path.join(cfgdir, "mhaviz", "imgui.ini")) as f:
        check("LeftWidth=0" not in f.read(), "the new splitter position was not saved in imgui.ini")
    app = App(mhaviz, d, [], size=(1280, 800), settings=True, env=env)
    try:
        again = app.widget("split_v")
        app.quit()
    finally:
        app.kill()
    check(abs(again[0] - moved["widgets"]["split_v"][0]) <= 1, f"splitter at {again[0]} after reopening, was "
          f"{moved['widgets']['split_v'][0]}")

    damaged = '{"version": 1, "sentence": '  # cut off mid-write, or hand-edited
    with open(settings, "w") as f:
        f.write(damaged)
    fallback = run()
    check(fallback["notices"] and "could not be read" in fallback["notices"][0],
          f"no notice for a corrupt settings file: {fallback['notices']}")
    check(fallback["sentence"] == "The cat sat on the mat.", f"not the default sentence: {fallback['sentence']!r}")
    check(fallback["ok"], "defaults did not compute")
    # Nothing was changed, yet the session saves its settings at exit: the damaged file
    # must survive that, beside the new one.
    with open(settings + ".bak") as f:
        check(f.read() == damaged, "the damaged settings file was not kept as settings.json.bak")
    check(".bak" in fallback["notices"][0], f"the notice does not say where the file went: {fallback['notices']}")
    check(read_json(settings)["version"] == 1, "no valid settings were saved after the damaged file")


def test_hidpi(mhaviz, d):
    """A 2x content scale (Xft.dpi 192) doubles fonts and widgets, not the window."""
    dump, shot = os.path.join(d, "dump.json"), os.path.join(d, "shot.png")

    def run():
        subprocess.run([mhaviz, "gui", "--frames", "2", "--width", "1200", "--height", "800", "--dump-state", dump,
                        "--screenshot", shot], check=True, cwd=d)
        return read_json(dump)

    base = run()
    set_xft_dpi(192)
    hi = run()
    check(base["content_scale"] == 1.0, f"content scale at 96 dpi: {base['content_scale']}")
    check(hi["content_scale"] == 2.0, f"content scale at 192 dpi: {hi['content_scale']}")
    check(hi["font_px"] == 2 * base["font_px"], f"font {hi['font_px']} px at 2x, {base['font_px']} px at 1x")
    check(png_size(shot) == (1200, 800), f"window is {png_size(shot)} pixels, asked for 1200x800")


def test_bad_input(mhaviz, d):
    """Bad flags and files: the window shows the error (ok false in --dump-state), or
    mhaviz stops with a clear message and exit 1 if there is nothing to show."""
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    dump = os.path.join(d, "dump.json")

    def gui(*args):
        if os.path.exists(dump):
            os.unlink(dump)
        return subprocess.run([mhaviz, "gui", "--frames", "2", "--dump-state", dump, *args],
                              capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)

    # --sentence-file was parsed but ignored by the GUI.
    sfile = os.path.join(d, "s.txt")
    with open(sfile, "w", encoding="utf-8") as f:
        f.write("고양이가 쥐를 잡았다")
    r = gui("--sentence-file", sfile, "--d-model", "16", "--heads", "2")
    check(r.returncode == 0, f"status {r.returncode}, {r.stderr!r}")
    final = read_json(dump)
    check(final["ok"] and final["trace"]["tokens"] == ["고양이가", "쥐를", "잡았다"], f"tokens {final.get('trace')}")
    # Megabytes from a file: the field's cap applies, with its notice.
    with open(sfile, "w") as f:
        f.write("word " * 600000)
    r = gui("--sentence-file", sfile)
    final = read_json(dump)
    check(r.returncode == 0 and len(final["sentence"].encode()) <= 8192, f"sentence of {len(final['sentence'])} bytes")
    check(any("at most 8192 bytes" in n for n in final["notices"]), f"no cap notice in {final['notices']}")
    # Sizes and values the core refuses: the error is in the window, not a crash.
    for args, phrase in [(["--d-model", "2000000"], "over the cap of 4096"),
                         (["--d-model", "10", "--heads", "3"], "not divisible"),
                         (["--temperature", "1e-40"], "below the minimum")]:
        r = gui(*args)
        final = read_json(dump)
        check(r.returncode == 0 and not final["ok"] and phrase in final["error"],
              f"{args}: status {r.returncode}, ok {final['ok']}, error {final['error']!r}")
    # Files that cannot be used at all: a message and exit 1 before any window.
    for args, phrase in [(["--sentence-file", "/dev/zero"], "NUL bytes"),
                         (["--input", "/dev/zero"], "not a valid .npz"),
                         (["--weights", os.path.join(d, "missing.npz")], "Cannot read")]:
        r = gui(*args)
        check(r.returncode == 1 and phrase in r.stderr, f"{args}: status {r.returncode}, {r.stderr!r}")
        check(not os.path.exists(dump), f"{args}: a state dump was written")
    # Flags that make no sense: usage error, exit 2.
    r = gui("--heads", "abc")
    check(r.returncode == 2 and "expects a whole number" in r.stderr, f"status {r.returncode}, {r.stderr!r}")


def test_no_display(mhaviz, d):
    """Without a display: a clear message and exit status 1, no crash."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    r = subprocess.run([mhaviz, "gui", "--frames", "1"], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)
    check(r.returncode == 1, f"status {r.returncode}")
    check("display" in r.stderr.lower(), f"stderr {r.stderr!r}")
    r = subprocess.run([mhaviz, "gui", "--frames", "zero"], capture_output=True, text=True, env=env, timeout=RUN_TIMEOUT)
    check(r.returncode == 2 and "--frames" in r.stderr, f"usage error: status {r.returncode}, {r.stderr!r}")


def test_layout(mhaviz, d):
    """The main screen reads on a 1280 x 800 projector and is no worse at 1600 x 1000 and
    1920 x 1080: the shape-flow table fits its panel (every column, no sideways scroll),
    and the heatmap grid names each row's token (and each column's, by token or by its
    number) in text tall enough for the rows, keeping every map in view when it can.
    Checked through --dump-state's "layout" and the maps' rectangles."""
    ko = "고양이가 쥐를 잡았다 and the cat sat on the mat"
    en = "The quick brown fox jumps over the lazy dog while the cat sleeps"
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))

    def run(name, size, *args):
        dump = os.path.join(d, f"{name}.json")
        probe = os.path.join(d, f"{name}.probe.json")
        subprocess.run([mhaviz, "gui", "--frames", "6", "--width", str(size[0]), "--height", str(size[1]),
                        "--dump-state", dump, "--probe", probe, "--screenshot", os.path.join(d, f"{name}.png"),
                        *args], check=True, env=env, cwd=d, timeout=RUN_TIMEOUT)
        final = read_json(dump)
        check(final["ok"], f"{name}: {final['error']}")
        return final, final["layout"], read_json(probe)["widgets"]

    def inside(r, area):
        return (r[0] >= area[0] - 0.5 and r[1] >= area[1] - 0.5 and r[0] + r[2] <= area[0] + area[2] + 0.5 and
                r[1] + r[3] <= area[1] + area[3] + 0.5)

    def check_table(name, lay, full_font):
        f = lay["flow"]
        check(not f["scroll_x"] and f["columns_w"] <= f["table_w"] + 0.5,
              f"{name}: the shape-flow table needs {f['columns_w']} px but has {f['table_w']}: {f}")
        check(f["shortened"] == 0, f"{name}: {f['shortened']} shape-flow cells shortened: {f}")
        if full_font:
            check(not f["params_small_font"], f"{name}: the parameters column went to the small font: {f}")

    def check_labels(name, final, lay):
        # Never below the UI font: a label the class cannot read is no label.
        h = lay["heatmaps"]
        check(h["row_labels"] and h["key_labels"] != "none", f"{name}: token labels hidden: {h}")
        check(h["label_px"] >= final["font_px"] and h["cell_h"] >= 0.85 * h["label_px"] - 0.01,
              f"{name}: {h['label_px']} px labels on {h['cell_h']} px rows (UI font {final['font_px']}): {h}")
        return h

    # 1280 x 800, the Korean and the English sentence with 8 heads: labelled at the UI
    # font; the grid may scroll to keep them, but shows at least a whole row of maps.
    for name, sentence in (("ko_1280", ko), ("en_1280", en)):
        final, lay, w = run(name, (1280, 800), "--sentence", sentence, "--heads", "8")
        check_table(name, lay, False)
        h = check_labels(name, final, lay)
        in_view = [k for k in range(9) if inside(w[f"map {k}"], w["heatmaps_view"])]
        check(len(in_view) >= h["grid_cols"] and in_view[0] == 0, f"{name}: maps in view {in_view}, layout {h}")
        # ... and the weights shown are the core's (the mean map is the mean of the heads).
        check(final["trace"]["tokens"] == sentence.split(), f"tokens {final['trace']['tokens']}")

    # Larger screens: the table at full size; the labels at full size where they were.
    # Larger screens: the table at full size; labels at the UI font; the 13 English
    # tokens may still scroll at 1600 x 1000 (a whole row of maps in view), nothing of
    # theirs scrolls at 1920 x 1080 (Korean keys, kept horizontal, may). Cells no smaller
    # than the rows the labels need.
    for name, size, sentence in (("ko_1600", (1600, 1000), ko), ("ko_1920", (1920, 1080), ko),
                                 ("en_1600", (1600, 1000), en), ("en_1920", (1920, 1080), en)):
        final, lay, w = run(name, size, "--sentence", sentence, "--heads", "8")
        check_table(name, lay, True)
        h = check_labels(name, final, lay)
        in_view = [k for k in range(9) if inside(w[f"map {k}"], w["heatmaps_view"])]
        check(len(in_view) >= h["grid_cols"] and in_view[0] == 0, f"{name}: maps in view {in_view}, layout {h}")
        if name == "en_1920":
            check(not h["scroll"], f"{name}: the grid scrolls: {h}")
        if name.startswith("ko"):
            # Korean keys stay horizontal (never turned 90 degrees): on two staggered lines, the
            # grid scrolling a little if need be.
            check(h["key_labels"] in ("staggered", "upright") and h["label_px"] == final["font_px"],
                  f"{name}: key tokens not written out horizontally at full size: {h}")

    # 2 heads x 3 tokens: big cells with the weights in them, tokens upright.
    final, lay, w = run("small", (1280, 800), "--sentence", "the cat sat", "--heads", "2", "--d-model", "64")
    h = check_labels("small", final, lay)
    check(h["key_labels"] == "upright" and h["values"] and h["label_px"] == final["font_px"], f"small: {h}")

    # 512 tokens: no labels (and no second label font loaded), every map in the panel.
    long_text = os.path.join(d, "long.txt")
    with open(long_text, "w") as f:
        f.write(" ".join(f"w{i % 50}" for i in range(512)))
    final, lay, w = run("long", (1280, 800), "--sentence-file", long_text, "--heads", "8", "--d-model", "64")
    h = lay["heatmaps"]
    check(h["key_labels"] == "none" and not h["row_labels"] and not h["scroll"], f"long: {h}")
    check(not h["label_font_loaded"], f"long: the label font was loaded for a grid without labels: {h}")
    for k in range(9):
        check(inside(w[f"map {k}"], w["heatmaps_view"]), f"long: map {k} is not in the panel")


def test_layout_resize(mhaviz, d):
    """The table's column widths follow the window: shrinking it from 1600 to 1280 px
    wide keeps every column in the panel (ImGui keeps a fixed column's first width
    unless the table re-sizes it each frame)."""
    app = App(mhaviz, d, ["--sentence", "고양이가 쥐를 잡았다 and the cat sat on the mat"], size=(1600, 1000))
    try:
        p = app.wait_for(lambda p: p["layout"]["flow"]["table_w"] > 0, "the shape-flow table")
        check(not p["layout"]["flow"]["params_small_font"], f"1600 px: {p['layout']['flow']}")
        xdo("windowsize", app.wid, 1280, 800)
        p = app.wait_for(lambda p: p["window"] == [1280, 800], "the window to shrink")
        p = app.settle()
        f = p["layout"]["flow"]
        check(not f["scroll_x"] and f["columns_w"] <= f["table_w"] + 0.5 and f["shortened"] == 0,
              f"after shrinking to 1280 px: {f}")
        final = app.quit()
    finally:
        app.kill()
    check(final["layout"]["heatmaps"]["row_labels"], f"labels lost after the resize: {final['layout']['heatmaps']}")


def test_text(mhaviz, d):
    """Text as typed: decomposed Hangul (NFD) computes and shows exactly like the same
    sentence typed precomposed (NFC), with a note; emoji, symbols and full-width
    punctuation are drawn with a glyph or the replacement box, never as '?'."""
    import unicodedata
    nfc = "고양이가 쥐를 잡았다"
    nfd = unicodedata.normalize("NFD", nfc)
    check(nfd != nfc, "the NFD test sentence is not decomposed")
    dumps = {}
    for name, sentence in (("nfc", nfc), ("nfd", nfd)):
        dump = os.path.join(d, name + ".json")
        subprocess.run([mhaviz, "gui", "--no-settings", "--sentence", sentence, "--heads", "4", "--d-model", "64",
                        "--frames", "3", "--dump-state", dump], check=True, cwd=d)
        dumps[name] = read_json(dump)
    a, b = dumps["nfc"], dumps["nfd"]
    check(b["sentence"] == nfc, f"the NFD sentence was not composed: {b['sentence']!r}")
    check(a["trace"]["tokens"] == b["trace"]["tokens"] == ["고양이가", "쥐를", "잡았다"],
          f"tokens {a['trace']['tokens']} vs {b['trace']['tokens']}")
    check(a["trace"]["attention"] == b["trace"]["attention"], "NFD input gives other attention weights than NFC")
    check("NFC" in b["trace"].get("notice", "") and "NFC" not in a["trace"].get("notice", ""),
          f"notes: NFC {a['trace'].get('notice')!r}, NFD {b['trace'].get('notice')!r}")
    # Glyphs: what the default font draws for each token (0xFFFD = the replacement box).
    shots = {}
    for name, sentence in (("mixed", "😀 ❤ ， ！ （ ） ? 가 🚀 𐌀"), ("emoji", "😀"), ("question", "?")):
        dump, shot = os.path.join(d, name + ".json"), os.path.join(d, name + ".png")
        subprocess.run([mhaviz, "gui", "--no-settings", "--sentence", sentence, "--heads", "2", "--d-model", "8",
                        "--frames", "3", "--dump-state", dump, "--screenshot", shot], check=True, cwd=d)
        shots[name] = shot
        dumps[name] = read_json(dump)
    drawn = dict(zip(dumps["mixed"]["trace"]["tokens"], dumps["mixed"]["drawn"]))
    notes = dict(zip(dumps["mixed"]["trace"]["tokens"], dumps["mixed"]["box_notes"]))
    # Beyond U+FFFF: the emoji with Symbola's glyphs (fonts-symbola), as the export draws
    # them; Old Italic, which no font here has, as the box with a note.
    if os.path.exists("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"):
        for tok in ("😀", "🚀"):
            check(drawn[tok] == [ord(tok)] and notes[tok] == "", f"{tok!r} is drawn as {drawn[tok]}, not its glyph")
    else:
        check(drawn["😀"] == [0xFFFD], f"the emoji is drawn as {drawn['😀']} (expected the box, U+FFFD)")
    check(drawn["𐌀"] == [0xFFFD] and "U+10300" in notes["𐌀"], f"U+10300: drawn {drawn['𐌀']}, note {notes['𐌀']!r}")
    check(drawn["?"] == [ord("?")], f"'?' is drawn as {drawn['?']}")
    check(notes["가"] == "", f"box notes {notes}")
    for tok in ("，", "！", "（", "）", "가"):
        check(drawn[tok] == [ord(tok)], f"{tok!r} is drawn as {drawn[tok]}, not its own glyph")
    if os.path.exists("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):  # fonts-dejavu-core
        check(drawn["❤"] == [0x2764], f"the heart is drawn as {drawn['❤']}, not from a fallback font")
    for tok, cps in drawn.items():
        check(ord("?") not in cps or tok == "?", f"{tok!r} is drawn with a '?'")
    # The sentence field holds 16-bit characters: focused, it must not turn the emoji
    # into U+FFFD (was: the GUI then embedded another token than the CLI); an edit
    # elsewhere keeps it too.
    app = App(mhaviz, os.path.join(d), ["--sentence", "cat 😀", "--heads", "2", "--d-model", "8"])
    try:
        app.settle(5)
        r = app.widget("sentence")  # the field is not focused at start (a stray key must not edit it)
        app.click(r[0] + r[2] - 4, r[1] + r[3] / 2)
        app.key("End")
        app.type_held(" dog")
        app.wait_for(lambda p: p.get("sentence", "").endswith("dog"), "the typed word")
        final = app.quit()
    except BaseException:
        app.kill()
        raise
    check(final["trace"]["tokens"] == ["cat", "😀", "dog"], f"tokens after editing {final['trace']['tokens']}")
    if os.path.exists("/usr/share/fonts/truetype/ancient-scripts/Symbola_hint.ttf"):
        # The field itself shows the emoji's glyph, not the box (it holds a stand-in).
        check(final["sentence_field_drawn"] == [ord(c) for c in "cat 😀 dog"],
              f"the sentence field draws {final['sentence_field_drawn']}")
    # Decomposed text typed into the field (as a paste from a macOS file name gives it) is
    # composed; the field still holds it decomposed and writes that back every frame,
    # which is not an edit (was: a recompute every frame while the field was active).
    app = App(mhaviz, os.path.join(d), ["--sentence", "x", "--heads", "2", "--d-model", "8"])
    try:
        app.settle(3)
        r = app.widget("sentence")
        app.click(r[0] + r[2] - 4, r[1] + r[3] / 2)
        app.key("End")
        # One key per code point. xdotool types a keysym the keyboard map lacks by binding
        # it to a spare keycode for the moment of the press and unbinding it after; the
        # app's X library learns of each change from an event of its own, and a press it
        # reads before that event decodes with the old map, to nothing (on a loaded
        # machine, jamo after jamo). So the jamo get keycodes of their own first
        # (xmodmap), the app draws frames (reading the map's change), and then each press
        # finds its keysym bound and xdotool changes no map. The next key waits for the
        # field (the probe's sentence) to show the last one. The server's 60 s auto-repeat
        # delay (CMakeLists.txt) keeps a held key one jamo.
        jamo = sorted(set(unicodedata.normalize("NFD", "고양")))
        for i, ch in enumerate(jamo):
            subprocess.run(["xmodmap", "-e", f"keycode {200 + i} = U{ord(ch):04X} U{ord(ch):04X}"], check=True)
        app.settle(5)
        for ch in unicodedata.normalize("NFD", " 고양"):
            name = "space" if ch == " " else f"U{ord(ch):04X}"
            before = app.settle(1)["sentence"]
            xdo("keydown", name, "sleep", HOLD, "keyup", name, "sleep", HOLD)
            app.wait_for(lambda p: p["sentence"] != before, f"{name} in the field", timeout=30)
        first = app.settle(10)
        later = app.settle(20)
        app.quit()
    except BaseException:
        app.kill()
        raise
    check(first["sentence"] == "x 고양" and first["tokens"] == ["x", "고양"], f"typed NFD: {first['sentence']!r}")
    check(later["generation"] == first["generation"],
          f"idle with NFD text in the field, the app recomputed {later['generation'] - first['generation']} times")
    # A cut-off font (was: a segfault in stbtt_InitFont) falls back with a notice.
    nanum = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets", "fonts", "NanumGothic.ttf")
    cut = os.path.join(d, "cut.ttf")
    with open(nanum, "rb") as f, open(cut, "wb") as g:
        g.write(f.read(100000))
    dump = os.path.join(d, "cut.json")
    r = subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "2", "--dump-state", dump],
                       env=dict(os.environ, MHAVIZ_FONT=cut), cwd=d, capture_output=True, text=True)
    check(r.returncode == 0, f"a cut-off MHAVIZ_FONT: exit {r.returncode}, {r.stderr[-500:]!r}")
    check("cannot be used" in read_json(dump)["font_notice"], f"font notice {read_json(dump)['font_notice']!r}")
    # A FIFO (was: a hang) and /dev/zero (was: memory without bound) are refused unread.
    fifo = os.path.join(d, "fifo.ttf")
    os.mkfifo(fifo)
    for bad in (fifo, "/dev/zero"):
        r = subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "2", "--dump-state", dump],
                           env=dict(os.environ, MHAVIZ_FONT=bad), cwd=d, capture_output=True, text=True, timeout=RUN_TIMEOUT)
        check(r.returncode == 0 and "not a regular file" in read_json(dump)["font_notice"],
              f"MHAVIZ_FONT={bad}: exit {r.returncode}, notice {read_json(dump)['font_notice']!r}")
    # ... and the box is not a '?' on screen either: the two windows differ.
    with open(shots["emoji"], "rb") as f1, open(shots["question"], "rb") as f2:
        check(f1.read() != f2.read(), "the emoji and '?' sentences give the same screenshot")

def test_slider_stops(mhaviz, d):
    """Dragging num_heads across its whole range, and d_model across part of its,
    lands only on valid configurations: no frame shows an error or loses the maps.
    A value typed with Ctrl+click may be invalid: the last valid maps stay (dimmed),
    the failing shape-flow row says why, and the side panel does not move."""
    app = App(mhaviz, d, ["--sentence", "the cat sat on the mat", "--heads", "4", "--d-model", "64"])
    try:
        app.wait_for(lambda p: p["ok"], "a valid trace")
        seen = set()

        def valid(p):
            check(p["ok"] and not p["error"], f"num_heads = {p['num_heads']}, d_model = {p['d_model']}: {p['error']}")
            check(p["d_model"] % p["num_heads"] == 0, f"landed on {p['num_heads']} heads for d_model {p['d_model']}")
            check("error" not in p["widgets"] and "map 0" in p["widgets"], f"an error box or no maps: {p['widgets'].keys()}")
            seen.add(p["num_heads"])

        s = app.widget("num_heads")
        stops = head_stops(64)
        x_lo, x_hi = slider_x(s, 0, 0, len(stops) - 1), slider_x(s, len(stops) - 1, 0, len(stops) - 1)
        drag(app, s, slider_x(s, stops.index(4), 0, len(stops) - 1), x_hi, 8, valid)
        drag(app, s, x_hi, x_lo, 16, valid)
        check(seen == set(stops), f"the drag visited {sorted(seen)}, expected every divisor {stops}")
        p = app.settle()
        check(p["num_heads"] == 1 and p["reuse"] == "Q, K, V kept and re-split into 1 head",
              f"after the drag: {p['num_heads']} heads, status {p['reuse']!r}")
        # d_model: multiples of num_heads (now 1) -- set 8 heads first with the slider.
        drag(app, s, x_lo, slider_x(s, stops.index(8), 0, len(stops) - 1), 4, valid)
        dm = app.widget("d_model")
        drag(app, dm, dm[0] + dm[2] * 0.05, dm[0] + dm[2] * 0.4, 10, valid)
        p = app.settle()
        check(p["d_model"] % 8 == 0 and p["d_model"] != 64, f"d_model drag gave {p['d_model']}")

        # Ctrl+click types 12 heads: invalid for this d_model.
        before = app.widget("seed")
        s = app.widget("num_heads")
        xdo("mousemove", "--window", app.wid, int(s[0] + s[2] / 2), int(s[1] + s[3] / 2), "sleep", HOLD,
            "keydown", "ctrl", "sleep", HOLD, "mousedown", 1, "sleep", HOLD, "mouseup", 1, "sleep", HOLD,
            "keyup", "ctrl", "sleep", HOLD)
        app.settle()
        app.key("ctrl", "a")
        app.type_held("12")
        app.key("Return")
        p = app.wait_for(lambda p: p["num_heads"] == 12, "the typed num_heads")
        p = app.settle()
        check(not p["ok"] and "not divisible" in p["error"], f"typed 12 heads: ok {p['ok']}, error {p['error']!r}")
        w = p["widgets"]
        check("map 0" in w and "flow_error" in w and "error" in w,
              f"an invalid value should keep the maps and mark the flow row: {sorted(w)}")
        check(w["seed"] == before, f"the side panel moved: seed at {w['seed']}, was {before}")
        fixes = [k for k in w if k.startswith("fix num_heads")]
        check(fixes, f"no num_heads fix offered: {sorted(w)}")
        visit_views_last_valid(app)
        final = app.quit()
    finally:
        app.kill()
    check(not final["ok"], "the typed configuration should not run")
    v = final["views"]
    check(v["last_valid"], "the views should say they show the last valid results")
    for key in ("query_view", "softmax_view", "metrics_view", "gqa_view", "inspect_view", "cross_view"):
        check("error" not in v[key], f"{key} shows an error instead of the last valid results: {v[key]}")


def test_present(mhaviz, d):
    """F11: the heatmaps fill the window; the arrow keys move between maps, + / -
    step num_heads through valid values; text size 150% and 200% keep the labels at
    or above the UI font. Screenshots at 1280x800 and 1920x1080."""
    for size in ((1280, 800), (1920, 1080)):
        app = App(mhaviz, d, ["--sentence", "고양이가 쥐를 잡았다 and the cat sat on the mat", "--heads", "8",
                              "--d-model", "64"], size=size)
        try:
            app.wait_for(lambda p: p["ok"], "a valid trace")
            check_layout_reach(app.settle(), 100)
            app.key("F11")
            p = app.wait_for(lambda p: p["present"]["on"], "presentation mode")
            p = app.settle()
            v, win = p["widgets"]["present"], p["window"]  # (a window bigger than the screen is cut to it)
            check(v[2] >= 0.95 * win[0] and v[3] >= 0.85 * win[1], f"{win}: the presentation area is {v}")
            check("sentence" not in p["widgets"] and "num_heads" not in p["widgets"], "the side panel is still drawn")
            hm = p["widgets"]["heatmaps_view"]
            check(hm[2] >= 0.8 * win[0], f"{win}: the maps take {hm[2]} of {win[0]} px")
            for layout, maps in ((0, 1), (1, 4), (2, 9)):
                r = app.widget(f"present {layout}")
                app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
                p = app.wait_for(lambda p: p["present"]["layout"] == layout and p["layout"]["heatmaps"]["maps"] == maps,
                                 f"layout {layout}")
                h = p["layout"]["heatmaps"]
                check(h["row_labels"] and h["label_px"] >= p["font_px"], f"{size} layout {layout}: {h}")
                if layout == 1:  # 2 x 2: the maps stretch to the window's width (the sentence has 10 tokens)
                    check(h["grid_cols"] * 10 * h["cell_w"] >= 0.7 * win[0], f"{size} 2 x 2 is narrow: {h}")
                # One map's big cells write their weights bigger than the text (digits of their own size).
                check((h["values_px"] > 1.5 * p["font_px"]) == (layout == 0) and
                      (not h["values"] or h["values_px"] >= p["font_px"]),
                      f"{size} layout {layout}: weights at {h['values_px']} px: {h}")
                app.shot(f"present_{size[0]}_{layout}.png")
            r = app.widget("present 0")
            app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
            app.key("Right")
            app.key("Right")
            p = app.wait_for(lambda p: p["present"]["head"] == 2, "the arrow keys to move to head 2")
            app.key("equal")
            p = app.wait_for(lambda p: p["num_heads"] == 16, "+ to step to 16 heads")
            app.key("minus")
            app.key("minus")
            p = app.wait_for(lambda p: p["num_heads"] == 4 and p["ok"], "- twice to step to 4 heads")
            app.key("Escape")
            app.wait_for(lambda p: not p["present"]["on"] and "sentence" in p["widgets"], "Esc to leave")
            # Text size 150% and 200% (Ctrl+= twice, then twice more).
            for pct in (150, 200):
                app.key("ctrl", "equal")
                app.key("ctrl", "equal")
                p = app.wait_for(lambda p: p["text_size"] == pct, f"text size {pct}%")
                p = app.settle(4)
                h = p["layout"]["heatmaps"]
                check(h["row_labels"] and h["key_labels"] != "none", f"{size} {pct}%: labels dropped: {h}")
                check(h["label_px"] >= p["font_px"] and h["cell_h"] >= 0.85 * p["font_px"],
                      f"{size} {pct}%: {h['label_px']} px labels, {h['cell_h']} px rows, UI font {p['font_px']}")
                check_layout_reach(p, pct)
                app.shot(f"text{pct}_{size[0]}.png")
            app.quit()
        finally:
            app.kill()
    keep = os.environ.get("MHAVIZ_SHOTS")
    if keep:
        os.makedirs(keep, exist_ok=True)
        for f in os.listdir(d):
            if f.endswith(".png"):
                shutil.copy(os.path.join(d, f), keep)


def test_masked_grey(mhaviz, d):
    """Cells the causal mask hides are the masked grey in the teaching views too (the
    tensor inspector's attn): never the colour of weight 0."""
    shot, probe = os.path.join(d, "shot.png"), os.path.join(d, "probe.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--frames", "4", "--width", "1280", "--height", "800", "--sentence",
                    "the cat sat on the mat", "--mask", "causal", "--inspect", "attn", "--screenshot", shot,
                    "--probe", probe], check=True, env=env, cwd=d, timeout=RUN_TIMEOUT)
    r = read_json(probe)["widgets"]["inspect_map"]
    w, h, px = png_rgb(shot)
    x = int(r[0] + r[2]) - 6  # inside the last column: keys after every query but the last
    column = [tuple(px[(y * w + x) * 3:(y * w + x) * 3 + 3]) for y in range(int(r[1]), min(h, int(r[1] + r[3])))]
    grey = sum(1 for c in column if c == (222, 222, 222))
    dark = sum(1 for c in column if abs(c[0] - 68) + abs(c[1] - 1) + abs(c[2] - 84) <= 6)
    check(grey >= 40 and dark == 0, f"last column of attn: {grey} grey pixels, {dark} of weight 0's colour")


def test_live_views(mhaviz, d):
    """Every tab opens by a click; a view's controls (num_kv_heads in the GQA view, a row
    of the head-count table, the temperature slider) recompute at once."""
    app = App(mhaviz, d, ["--sentence", "a b c d e", "--heads", "4", "--d-model", "32"], size=(1600, 1000))
    try:
        for name in ("query", "softmax", "metrics", "counts", "gqa", "cross", "examples", "inspect", "heatmaps"):
            click_until(app, "tab " + name, lambda p, n=name: p["view"] == n, f"the {name} tab")
        click_until(app, "tab gqa", lambda p: p["view"] == "gqa", "the GQA tab")
        gen = app.probe()["generation"]
        click_until(app, "kv 1", lambda p: p["ok"] and p["generation"] > gen, "a recompute for num_kv_heads = 1")
        click_until(app, "tab counts", lambda p: p["view"] == "counts", "the Counts tab")
        click_until(app, "head_count 8", lambda p: p["num_heads"] == 8, "num_heads = 8 from the head-count table")
        # The volume knob: a click on the temperature slider sets T, and the trace follows.
        click_until(app, "tab softmax", lambda p: p["view"] == "softmax", "the Softmax tab")
        gen = app.probe()["generation"]
        # The middle of the logarithmic 0.05 .. 20 slider is T = 1 (no change): click at 3/4.
        r = app.widget("temperature")
        click_until(app, [r[0] + 0.75 * r[2], r[1], 0, r[3]], lambda p: p["generation"] > gen,
                    "a recompute for the new temperature")
        final = app.quit()
    finally:
        app.kill()
    cfg = final["settings"]["config"]
    check(cfg["num_heads"] == 8 and cfg["num_kv_heads"] == 1, f"config after the clicks: {cfg}")
    gv = final["views"]["gqa_view"]
    check(gv["kind"] == "multi-query" and gv["kv_head_of"] == [0] * 8, f"GQA view {gv.get('kind')} {gv.get('kv_head_of')}")
    T = cfg["temperature"]
    sv = final["views"]["softmax_view"]["with_scaling"]
    check(T != 1.0 and 0.05 <= T <= 20, f"temperature after the click: {T}")
    check(abs(sv["temperature"] - T) < 1e-6 and abs(sv["multiplier"] - 1 / (math.sqrt(32 / 8) * T)) < 1e-5,
          f"scaling view at T = {sv['temperature']}, multiplier {sv['multiplier']}; config T = {T}")
    close(sv["weights"], final["trace"]["attention"][0], 1e-6, "the scaling view's weights vs the trace at the new T")


def same_notebook(mine, ref, what):
    """Two notebooks (and the .npz each reads) are the same: every cell's source and
    type, and every array, bit for bit."""
    import numpy as np
    a, b = read_json(mine), read_json(ref)
    check(a["nbformat"] == 4 and len(a["cells"]) == len(b["cells"]),
          f"{what}: {len(a['cells'])} cells, mhaviz export --notebook wrote {len(b['cells'])}")
    for i, (x, y) in enumerate(zip(a["cells"], b["cells"])):
        check(x["cell_type"] == y["cell_type"] and x["source"] == y["source"],
              f"{what}: cell {i} differs from mhaviz export --notebook's:\n{''.join(x['source'])[:400]}\n---\n"
              f"{''.join(y['source'])[:400]}")
    za, zb = np.load(mine[:-6] + ".npz"), np.load(ref[:-6] + ".npz")
    check(sorted(za.files) == sorted(zb.files), f"{what}: .npz keys {sorted(za.files)} != {sorted(zb.files)}")
    for k in za.files:
        check(za[k].dtype == zb[k].dtype and za[k].shape == zb[k].shape and np.array_equal(za[k], zb[k]),
              f"{what}: .npz array {k} differs from mhaviz export --notebook's")


def test_export_notebook(mhaviz, d):
    """The Export section's "Jupyter notebook" choice: the path typed, Export clicked, the
    notebook and its .npz written on the worker, the message naming where. Both equal
    what `mhaviz export --notebook` writes for the same flags; so does the language
    model's, through --export NAME.ipynb."""
    args = ["--sentence", "the cat sat on the mat", "--heads", "4", "--d-model", "64", "--mask", "causal"]
    app = App(mhaviz, d, args, size=(1280, 1000))
    try:
        app.wait_for(lambda p: p["ok"], "a valid trace")
        click_until(app, "export_view_notebook", lambda p: p["export_notebook"],
                    "the notebook choice")
        r = app.widget("export_path")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        app.key("ctrl", "a")
        app.type_held("cat")  # no extension: the notebook's is added
        b = app.widget("export")
        app.click(b[0] + b[2] / 2, b[1] + b[3] / 2)
        p = app.wait_for(lambda p: ".ipynb" in p["export_message"], "the notebook's export message")
        check(p["export_message"].startswith("Saved the notebook to " + os.path.join(d, "cat.ipynb")),
              f"export message: {p['export_message']}")
        final = app.quit()
    finally:
        app.kill()
    check(final["ok"], "trace lost after the notebook's export")
    ref = os.path.join(d, "cli")
    os.makedirs(ref)
    subprocess.run([mhaviz, "export", *args, "--notebook", "cat.ipynb", "--quiet"], check=True, cwd=ref)
    same_notebook(os.path.join(d, "cat.ipynb"), os.path.join(ref, "cat.ipynb"), "the layer's notebook")
    # The language model, one head knocked out: the automation path (--export).
    model = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "assets",
                                          "models", "mhaviz-small.npz"))
    lm = ["--model", model, "--sentence", "할머니께서 방에서 주무신다", "--layer", "1", "--ablate", "L1H0"]
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--frames", "3", *lm, "--export", "lm.ipynb"], check=True, cwd=d, env=env)
    subprocess.run([mhaviz, "export", *lm, "--notebook", "lm.ipynb", "--quiet"], check=True, cwd=ref)
    same_notebook(os.path.join(d, "lm.ipynb"), os.path.join(ref, "lm.ipynb"), "the language model's notebook")


def test_copy_pytorch(mhaviz, d):
    """"Copy as PyTorch" on the One query, Heatmaps and Inspector views: clicked, it says
    Copied; the snippet it copies (--dump-state's views.VIEW_view.pytorch, from the same
    function) runs on `mhaviz trace --npz trace.npz` of the same flags and its checks
    pass, and fail on a trace.npz with one weight changed."""
    args = ["--sentence", "고양이가 쥐를 잡았다", "--heads", "4", "--d-model", "64", "--mask", "causal",
            "--view-head", "2", "--view-query", "1"]
    app = App(mhaviz, d, [*args, "--view", "query"])
    try:
        click_until(app, "copy_pytorch", lambda p: "copy_pytorch copied" in p["widgets"], "the Copied note")
        final = app.quit()
    finally:
        app.kill()
    snippets = {"query": final["views"]["query_view"]["pytorch"]}
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    for view in ("heatmaps", "inspect"):
        dump = os.path.join(d, view + ".json")
        subprocess.run([mhaviz, "gui", "--frames", "3", *args, "--view", view, "--dump-state", dump], check=True,
                       env=env, cwd=d)
        snippets[view] = read_json(dump)["views"][view + "_view"]["pytorch"]
    flags = args[:8]  # the layer's flags, without the views' selection
    subprocess.run([mhaviz, "trace", "--quiet", *flags, "--npz", "trace.npz"], check=True, cwd=d)
    import numpy as np
    z = dict(np.load(os.path.join(d, "trace.npz")))
    wrong = os.path.join(d, "wrong")
    os.makedirs(wrong)
    z["attn"] = z["attn"].copy()
    z["attn"][0, 2, 1, 0] += 0.01
    for k in ("context", "out", "concat"):
        if k in z:
            z[k] = z[k].copy()
            z[k].flat[z[k].size // 2] += 0.01
    np.savez(os.path.join(wrong, "trace.npz"), **z)
    for view, code in snippets.items():
        check(code.strip(), f"{view}: no snippet")
        for where, ok in ((d, True), (wrong, False)):
            path = os.path.join(where, view + "_snippet.py")
            with open(path, "w", encoding="utf-8") as f:
                f.write(code)
            r = subprocess.run([sys.executable, path], cwd=where, capture_output=True, text=True,
                               env=dict(os.environ, MPLBACKEND="Agg"))
            check((r.returncode == 0) == ok, f"{view}'s snippet on {'the' if ok else 'an altered'} trace.npz: "
                                             f"status {r.returncode}: {r.stderr[-600:]}")


TESTS = {
    "live_views": (test_live_views, True),
    "masked_grey": (test_masked_grey, True),
    "slider_stops": (test_slider_stops, True),
    "present": (test_present, True),
    "type_and_drag": (test_type_and_drag, True),
    "fast_keys": (test_fast_keys, True),
    "fast_clicks": (test_fast_clicks, True),
    "export_shortcut": (test_export_shortcut, True),
    "export_notebook": (test_export_notebook, True),
    "copy_pytorch": (test_copy_pytorch, True),
    "automation": (test_automation, True),
    "settings": (test_settings, True),
    "hidpi": (test_hidpi, True),
    "bad_input": (test_bad_input, True),
    "no_display": (test_no_display, False),
    "layout": (test_layout, True),
    "layout_resize": (test_layout_resize, True),
    "text": (test_text, True),
}


if __name__ == "__main__":
    sys.exit(run_main(TESTS, __doc__, "gui"))

