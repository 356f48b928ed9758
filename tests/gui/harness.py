#!/usr/bin/env python3
"""The GUI tests' harness: run the real mhaviz window under Xvfb, drive it with xdotool,
and read what it reports (--probe, --dump-state, --stats, screenshots, exports). Each test
script (one per view, `VIEW_test.py`, and a few for the window as a whole) imports it:

    import harness as g
    app = g.App(mhaviz, d, ["--view", "query"])
    p = app.wait_for(lambda p: p["ok"] and "query_token" in p["widgets"], "the Query view")

Waits count the app's frames, never wall-clock time; `run_main` is every script's command
line (`--list`, or `NAME MHAVIZ`).
"""
import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # the tests that need it skip (run_main's needs_numpy)
    np = None

SKIP = 77
HOLD = 0.06  # seconds a key or button is held: ImGui must see it across frames
# Waits count the app's frames: idle, it still draws 4 frames a second (it wakes every
# 0.25 s), so `timeout` seconds of waiting are at least this many frames a second.
FRAMES_PER_SECOND = 4
STALL = 60  # seconds without a new frame: the window has hung
# A run of the app or the CLI that has not ended in this many seconds has hung. Only a
# hang detector: on a 2-core machine at load 29 a `gui --frames 2` of a megabyte
# sentence file took over 120 s, which is no failure of the app.
RUN_TIMEOUT = 600


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def xdo(*args):
    subprocess.run(["xdotool", *[str(a) for a in args]], check=True)


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


class App:
    """One running mhaviz window, with its probe file."""

    def __init__(self, mhaviz, workdir, extra, size=(1280, 800), settings=False, env=None):
        self.mhaviz = mhaviz
        self.dir = workdir
        self.probe_path = os.path.join(workdir, "probe.json")
        self.final_path = os.path.join(workdir, "final.json")
        for p in (self.probe_path, self.final_path):
            if os.path.exists(p):
                os.remove(p)
        env = env or dict(os.environ, XDG_CONFIG_HOME=os.path.join(workdir, "config"))
        self.proc = subprocess.Popen(
            [mhaviz, "gui", "--settings" if settings else "--no-settings", "--width", str(size[0]), "--height", str(size[1]), "--screenshot", os.path.join(workdir, "last.png"),
             "--probe", self.probe_path, "--dump-state", self.final_path, *extra],
            cwd=workdir, env=env)
        self.wait_for(lambda p: True, "the window to come up", timeout=RUN_TIMEOUT)
        out = subprocess.run(["xdotool", "search", "--sync", "--name", "^mhaviz"], check=True,
                             capture_output=True, text=True).stdout.split()
        check(out, "no mhaviz window found")
        self.wid = out[0]
        xdo("windowfocus", "--sync", self.wid)

    def probe(self):
        try:
            return read_json(self.probe_path)
        except (OSError, ValueError):
            return None

    def wait_for(self, pred, what, timeout=20):
        """The probe once it satisfies `pred`. The budget is counted in the app's own
        frames (the probe's frame counter), not in seconds: it fails only once the app
        has drawn FRAMES_PER_SECOND x `timeout` frames since the wait began (what
        `timeout` seconds hold when idle) and `timeout` seconds have passed, so a busy
        machine that draws slowly is waited for, not failed. A window that draws no new
        frame for STALL seconds has hung, which fails too (ctest's timeout is the last
        bound)."""
        start = time.time()
        last, first_frame, last_frame, last_change = None, None, None, start
        while True:
            check(self.proc.poll() is None, f"mhaviz exited (status {self.proc.returncode}) while waiting for {what}")
            last = self.probe()
            now = time.time()
            if last is not None:
                if pred(last):
                    return last
                frame = last.get("frame", 0)
                first_frame = frame if first_frame is None else first_frame
                if frame != last_frame:
                    last_frame, last_change = frame, now
                drawn = frame - first_frame
                if now - start >= timeout and drawn >= FRAMES_PER_SECOND * timeout:
                    raise Fail(f"timed out waiting for {what} ({drawn} frames, {now - start:.0f} s); "
                               f"last probe: {json.dumps(last)[:600]}")
            if now - last_change > max(STALL, timeout):
                raise Fail(f"timed out waiting for {what}: no new frame for {now - last_change:.0f} s; "
                           f"last probe: {json.dumps(last)[:600]}")
            time.sleep(0.05)

    def settle(self, frames=3):
        """The probe after `frames` more frames: what an action changed is laid out."""
        start = self.wait_for(lambda p: True, "a frame")["frame"]
        return self.wait_for(lambda p: p["frame"] >= start + frames, f"{frames} more frames")

    def widget(self, name):
        """Where a widget is now, once the layout has stopped moving."""
        self.settle()
        p = self.wait_for(lambda p: name in p["widgets"], f"widget {name}")
        while True:
            rect = p["widgets"][name]
            p = self.settle()
            check(name in p["widgets"], f"widget {name} disappeared")
            if p["widgets"][name] == rect:
                return rect

    def click(self, x, y):
        xdo("mousemove", "--window", self.wid, int(x), int(y), "sleep", HOLD, "mousedown", 1, "sleep", HOLD,
            "mouseup", 1, "sleep", HOLD)

    def key(self, *keys):
        """Press keys together (e.g. ctrl a), holding them, then release in reverse."""
        args = []
        for k in keys:
            args += ["keydown", k, "sleep", HOLD]
        for k in reversed(keys):
            args += ["keyup", k, "sleep", HOLD]
        xdo(*args)

    def type_held(self, text):
        names = {" ": "space", ".": "period", ",": "comma", "'": "apostrophe", "-": "minus"}
        for ch in text:
            self.key(names.get(ch, ch))

    def shot(self, name):
        """A picture of the window now (ImageMagick's import), kept with the test's files
        for a person to look at; nothing is asserted on it."""
        if shutil.which("import"):
            subprocess.run(["import", "-window", self.wid, os.path.join(self.dir, name)], check=False)

    def quit(self):
        self.key("ctrl", "q")
        try:
            rc = self.proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.proc.send_signal(signal.SIGTERM)
            rc = self.proc.wait(timeout=120)
            raise Fail("Ctrl+Q did not close the window")
        check(rc == 0, f"mhaviz exited with status {rc}")
        return read_json(self.final_path)

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def reference_trace(mhaviz, workdir, sentence, cfg):
    """The same computation through `mhaviz trace --json`, the headless path."""
    out = os.path.join(workdir, "reference.json")
    cmd = [mhaviz, "trace", "--quiet", "--json", out, "--sentence", sentence, "--heads", str(cfg["num_heads"]),
           "--d-model", str(cfg["d_model"]), "--seed", str(cfg["seed"]), "--mask", cfg["mask"], "--norm", cfg["norm"]]
    if cfg["num_kv_heads"] != cfg["num_heads"]:
        cmd += ["--kv-heads", str(cfg["num_kv_heads"])]
    if not cfg["scale"]:
        cmd.append("--no-scale")
    if not cfg["positional_encoding"]:
        cmd.append("--no-pe")
    subprocess.run(cmd, check=True)
    return read_json(out)


def check_trace_matches(final, ref):
    t = final["trace"]
    check(t["tokens"] == ref["tokens"], f"GUI tokens {t['tokens']} != trace tokens {ref['tokens']}")
    check(t["config"] == ref["config"], f"GUI config {t['config']} != trace config {ref['config']}")
    a, b = t["attention"], ref["attention"]
    check(len(a) == len(b), "head count differs")
    for h, (ha, hb) in enumerate(zip(a, b)):
        for i, (ra, rb) in enumerate(zip(ha, hb)):
            for j, (x, y) in enumerate(zip(ra, rb)):
                check(math.isclose(x, y, rel_tol=0, abs_tol=1e-6),
                      f"attention[{h}][{i}][{j}]: GUI {x} != trace {y}")


def slider_x(rect, value, lo, hi, grab_min=12.0):
    """Screen x of `value` on an ImGui 1.86 integer slider (imgui_widgets.cpp SliderBehaviorT)."""
    pad = 2.0
    size = rect[2] - 2 * pad
    grab = max(grab_min, size / (hi - lo + 1))
    usable = size - grab
    return rect[0] + pad + grab / 2 + usable * (value - lo) / (hi - lo)


def head_stops(d_model, most=32):
    """The values the num_heads slider stops at: the divisors of d_model up to 32."""
    return [h for h in range(1, min(d_model, most) + 1) if d_model % h == 0]


def drag(app, rect, x0, x1, steps, on_step=None):
    """Press on the slider at x0, move to x1 in `steps` moves, release; on_step(probe)
    sees the probe after each move."""
    y = rect[1] + rect[3] / 2
    xdo("mousemove", "--window", app.wid, int(x0), int(y), "sleep", HOLD, "mousedown", 1, "sleep", HOLD)
    try:
        for k in range(1, steps + 1):
            xdo("mousemove", "--window", app.wid, int(x0 + (x1 - x0) * k / steps), int(y), "sleep", 0.03)
            if on_step:
                on_step(app.settle(2))
    finally:
        xdo("sleep", HOLD, "mouseup", 1)


# --- tests ------------------------------------------------------------------

def set_xft_dpi(dpi):
    """Sets Xft.dpi in the X server's resource database (what xrdb -merge does), which
    GLFW reads as the content scale. Needs Xvfb -noreset: the server forgets root
    properties when its last client leaves."""
    import ctypes
    import ctypes.util
    x = ctypes.cdll.LoadLibrary(ctypes.util.find_library("X11"))
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XDefaultRootWindow.restype = ctypes.c_ulong
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XInternAtom.restype = ctypes.c_ulong
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XChangeProperty.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_int,
                                  ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
    x.XCloseDisplay.argtypes = [ctypes.c_void_p]
    dpy = x.XOpenDisplay(None)
    check(dpy, "cannot open the X display")
    data = f"Xft.dpi:\t{dpi}\n".encode()
    xa_string, prop_mode_replace = 31, 0
    x.XChangeProperty(dpy, x.XDefaultRootWindow(dpy), x.XInternAtom(dpy, b"RESOURCE_MANAGER", 0), xa_string, 8,
                      prop_mode_replace, data, len(data))
    x.XCloseDisplay(dpy)


def view_registry(mhaviz, d):
    """The views in tab order, from the app's own registry (--dump-state's
    views.registry): each one's name, tab label, and the probe it draws once it shows
    the current trace ("shows"; null for Train, which brings its own model, and Next,
    a language model's only). A view added to the registry is visited without being
    listed here."""
    path = os.path.join(d, "registry.json")
    subprocess.run([mhaviz, "gui", "--no-settings", "--frames", "1", "--dump-state", path], check=True, cwd=d,
                   env=dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config")), timeout=RUN_TIMEOUT)
    views = read_json(path)["views"]["registry"]
    check(len(views) >= 13 and views[0]["name"] == "heatmaps", f"the registry lists {views}")
    return views


def visit_views_last_valid(app):
    """With a typed configuration that cannot run, every tab (each reachable in the
    window, without scrolling the tab bar) still shows the last valid results, dimmed,
    under the error: none is blank."""
    views = view_registry(app.mhaviz, app.dir)
    p = app.settle()
    win = p["window"]
    for name in (v["name"] for v in views if not v["shows"]):
        r = p["widgets"][f"tab {name}"]
        check(r[0] >= 0 and r[0] + r[2] <= win[0] and r[2] >= 20, f"tab {name} is not all in view: {r}, window {win}")
    for name, content in ((v["name"], v["shows"]) for v in views if v["shows"]):
        r = app.widget(f"tab {name}")
        check(r[0] >= 0 and r[0] + r[2] <= win[0] and r[2] >= 20, f"tab {name} is not all in view: {r}, window {win}")
        app.click(r[0] + r[2] / 2, r[1] + r[3] / 2)
        p = app.wait_for(lambda p: p["view"] == name, f"the {name} tab")
        p = app.settle(3)
        w = p["widgets"]
        check(not p["ok"] and "error" in w, f"{name}: the error should stay above the views")
        check(content in w, f"{name} shows nothing with an invalid num_heads (no {content!r}): {sorted(w)}")
        check("last_valid_veil" in w, f"{name}: the last valid results are not dimmed")
        app.shot(f"last_valid_{name}.png")


def presented(mhaviz, d, view, size, pct, *args, frames=5, lang="ko"):
    """`view` presented (--present) in Korean (or `lang`) at `size` with `pct`% text on the
    class's sentence: the app's --dump-state and its last --probe."""
    name = f"present_{view}_{size[0]}_{pct}_{lang}"
    dump, probe = os.path.join(d, name + ".json"), os.path.join(d, name + ".probe.json")
    subprocess.run([mhaviz, "gui", "--no-settings", "--frames", str(frames), "--width", str(size[0]), "--height",
                    str(size[1]), "--dump-state", dump, "--probe", probe, "--sentence", "고양이가 쥐를 잡았다",
                    "--view", view, "--present", "--lang", lang, "--text-size", str(pct), *args], check=True, cwd=d,
                   env=dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config")), timeout=RUN_TIMEOUT)
    return read_json(dump), read_json(probe)


def lesson_step_probe(mhaviz, d, lesson, step, lang, size=(1280, 800), pct=150):
    """Lesson `lesson`'s step `step` (1-based) played in `lang` at `size` with `pct`% text:
    the app's last --probe, and the view's box above the lesson's band (checked)."""
    where = f"lesson {lesson} step {step} ({lang})"
    probe = os.path.join(d, f"lesson{lesson}_{step}{lang}.probe.json")
    r = subprocess.run([mhaviz, "gui", "--frames", "6", "--width", str(size[0]), "--height", str(size[1]),
                        "--text-size", str(pct), "--lesson", lesson, "--step", str(step), "--lang", lang, "--probe",
                        probe], env=dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config")), cwd=d,
                       capture_output=True, text=True, timeout=RUN_TIMEOUT)
    check(r.returncode == 0, f"{where}: exited {r.returncode}: {r.stderr[-800:]}")
    p = read_json(probe)
    band, view = p["widgets"].get("lesson_band"), p["widgets"].get("present_content")
    check(band and view and view[1] + view[3] <= band[1] + 0.5, f"{where}: the view {view}, the band {band}")
    return where, p, view


def check_within(where, name, r, box, slack=0.5):
    """Rectangle `r` (x, y, w, h: a probe's) lies wholly inside `box`: a cell past its
    table's edge is one the table cuts or scrolls sideways to."""
    check(r is not None and r[0] >= box[0] - slack and r[1] >= box[1] - slack and
          r[0] + r[2] <= box[0] + box[2] + slack and r[1] + r[3] <= box[1] + box[3] + slack,
          f"{where}: {name} at {r} is not wholly inside {box}")


def check_layout_reach(p, pct):
    """Every view's tab (or button) whole in the window, none behind scroll arrows or cut;
    the shape flow's subtitle clear of its Hide button; at 100% the Export button above
    the bottom of the window."""
    w, win = p["widgets"], p["window"]
    tabs = [k for k in w if k.startswith("tab ")]
    check(len(tabs) >= 12, f"{pct}%: only {tabs} drawn")
    for k in tabs:
        r = w[k]
        check(r[0] >= 0 and r[0] + r[2] <= win[0] and r[2] >= p["font_px"], f"{win} {pct}%: {k} at {r}")
    if "flow_subtitle" in w:
        sub, hide = w["flow_subtitle"], w["flow_toggle"]
        check(sub[0] + sub[2] <= hide[0], f"{win} {pct}%: the flow subtitle {sub} runs under Hide {hide}")
    if pct == 100:
        e = w["export"]
        check(e[1] + e[3] <= win[1] - p["font_px"], f"{win}: the Export button {e} is below the fold")


def png_rgb(path):
    """The pixels of a PNG the app wrote (8-bit RGB, every row filtered with 'none', as
    render::EncodePng writes them): (width, height, bytes)."""
    import zlib
    with open(path, "rb") as f:
        data = f.read()
    w, h = struct.unpack(">II", data[16:24])
    check(data[24:26] == b"\x08\x02", f"{path}: not 8-bit RGB")
    idat, at = b"", 8
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            idat += data[at + 8:at + 8 + n]
        at += 12 + n
    raw = zlib.decompress(idat)
    check(all(raw[y * (1 + 3 * w)] == 0 for y in range(h)), f"{path}: rows use PNG filters")
    return w, h, b"".join(raw[y * (1 + 3 * w) + 1:(y + 1) * (1 + 3 * w)] for y in range(h))


def click(app, rect):
    """Clicks the middle of `rect` after the pointer has rested there for a few frames:
    ImGui's tabs and overlapping items ignore a press in the first frame over them
    when another item was hovered the frame before (ButtonBehavior, AllowItemOverlap),
    which a loaded machine can turn into a lost click."""
    xdo("mousemove", "--window", app.wid, int(rect[0] + rect[2] / 2), int(rect[1] + rect[3] / 2))
    app.settle(3)
    xdo("mousedown", 1, "sleep", HOLD, "mouseup", 1, "sleep", HOLD)


def click_until(app, target, pred, what, tries=3):
    """Clicks `target` (a widget name, or a rectangle [x, y, w, h]) until the probe
    satisfies `pred`. Under Xvfb on a loaded machine a click is occasionally not seen
    (about 1 in 100 here, at any widget); a second click is what a user would do, and
    the state must still follow it."""
    for attempt in range(tries):
        click(app, app.widget(target) if isinstance(target, str) else target)
        try:
            return app.wait_for(pred, what, timeout=4 if attempt + 1 < tries else 20)
        except Fail:
            if attempt + 1 == tries:
                raise
            print(f"note: clicked {target} again ({what} did not follow the first click)")


def dump_run(mhaviz, d, *args, name="dump.json", frames=3):
    """Runs the GUI for a few frames with `args` and returns its --dump-state."""
    out = os.path.join(d, name)
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    subprocess.run([mhaviz, "gui", "--frames", str(frames), "--dump-state", out, *args], check=True, env=env, cwd=d)
    return read_json(out)


def cli_npz(mhaviz, d, name, *args):
    """The same computation through `mhaviz trace --npz`, loaded with numpy."""
    path = os.path.join(d, name)
    subprocess.run([mhaviz, "trace", "--quiet", "--npz", path, *args], check=True, cwd=d)
    return dict(np.load(path))


def close(a, b, tol, what):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    check(a.shape == b.shape, f"{what}: shape {a.shape} != {b.shape}")
    err = float(np.max(np.abs(a - b))) if a.size else 0.0
    check(err <= tol, f"{what}: differs by {err:g} (tolerance {tol:g})\n{a}\n{b}")


class Skip(Exception):
    """Raised by a test that finds something it needs missing (PIL, numpy): it skips, not fails."""


def run_main(tests, doc, prefix, needs_numpy=False):
    """The command line every GUI test script shares.

    `--list` prints the names in `tests` (CMake registers one ctest per name, so a test added
    to a script's table runs without being listed a second time); a name followed by
    "no-display" is a test of the app without a display. `NAME MHAVIZ` runs one test in a new
    temporary directory, which is removed when it passes and kept when it fails. A table entry
    is a function, or (function, needs_display)."""
    def entry(name):
        t = tests[name]
        return t if isinstance(t, tuple) else (t, True)

    args = sys.argv[1:]
    if args == ["--list"]:
        for name in tests:
            print(name if entry(name)[1] else name + " no-display")
        return 0
    if len(args) != 2 or args[0] not in tests:
        print(doc + "\ntests: " + ", ".join(tests), file=sys.stderr)
        return 2
    name, mhaviz = args[0], os.path.abspath(args[1])
    fn, needs_display = entry(name)
    if needs_display and not os.environ.get("DISPLAY"):
        print("skip: no DISPLAY (run under xvfb-run)")
        return SKIP
    if needs_display and not shutil.which("xdotool"):
        print("skip: xdotool is not installed")
        return SKIP
    if needs_numpy:
        try:
            import numpy  # noqa: F401
        except ImportError:
            print("skip: numpy is not installed")
            return SKIP
    d = tempfile.mkdtemp(prefix=f"mhaviz-{prefix}-{name}-")
    try:
        fn(mhaviz, d)
    except Fail as e:
        print(f"FAIL {name}: {e}\n(files kept in {d})")
        return 1
    except Skip as e:
        print(f"skip: {e}")
        shutil.rmtree(d, ignore_errors=True)
        return SKIP
    shutil.rmtree(d, ignore_errors=True)
    print(f"ok {name}")
    return 0
