#!/usr/bin/env python3
"""GUI tests of the app on a projector: what a class reads from the back of the room.
Random weights are marked as such and their heads claim no pattern they do not beat
chance by; presentation mode keeps what the teacher selected and says what is shown;
bigger text gives bigger cells with upright labels and their numbers. Checked through
--probe and --dump-state (each run waits on the app's frame counter, never a clock).

    projector_test.py TEST MHAVIZ

Exit 0 pass, 1 fail, 77 skip (no display, or no xdotool).
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gui_test as g  # noqa: E402  (App, check, read_json, run_main)

check = g.check
KO = "고양이가 쥐를 잡았다"


def gui_run(mhaviz, d, *args, name="run", frames=4, size=(1280, 800)):
    """The app for `frames` frames: its --dump-state and last --probe."""
    dump, probe = os.path.join(d, name + ".json"), os.path.join(d, name + ".probe.json")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    r = subprocess.run([mhaviz, "gui", "--frames", str(frames), "--width", str(size[0]), "--height", str(size[1]),
                        "--dump-state", dump, "--probe", probe, *args], env=env, cwd=d, capture_output=True,
                       text=True, timeout=120)
    check(r.returncode == 0, f"{name}: mhaviz gui {' '.join(args)} exited {r.returncode}: {r.stderr[-800:]}")
    return g.read_json(dump), g.read_json(probe)


# --- tests ------------------------------------------------------------------

def test_text_size_flag(mhaviz, d):
    """--text-size PCT starts at that text size (as the View menu and Ctrl+= set it):
    the UI font scales with it; a size outside 75..300 is a usage error (exit 2)."""
    base, _ = gui_run(mhaviz, d, "--sentence", KO, name="base", frames=2)
    check(base["text_size"] == 100, f"default text size {base['text_size']}")
    for pct in (150, 200, 300):
        dump, probe = gui_run(mhaviz, d, "--sentence", KO, "--text-size", str(pct), name=f"t{pct}", frames=2)
        check(dump["text_size"] == pct and probe["text_size"] == pct, f"--text-size {pct}: {dump['text_size']}")
        want = round(base["font_px"] * pct / 100)
        check(abs(dump["font_px"] - want) <= 1, f"--text-size {pct}: font {dump['font_px']} px, expected ~{want}")
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(d, "config"))
    for bad in ("50", "301", "big"):
        r = subprocess.run([mhaviz, "gui", "--frames", "1", "--text-size", bad], capture_output=True, text=True,
                           env=env, cwd=d, timeout=60)
        check(r.returncode == 2 and "--text-size" in r.stderr, f"--text-size {bad}: exit {r.returncode}, {r.stderr!r}")


TESTS = {
    "text_size_flag": test_text_size_flag,
}

if __name__ == "__main__":
    sys.exit(g.run_main(TESTS, __doc__, "projector"))
