#!/usr/bin/python3
"""The window attacked as test_hostile_surfaces.py attacks the commands: a damaged Korean
catalogue (English and a notice, no crash), automation outputs (--dump-state, --export,
--screenshot, --stats, --probe) to a FIFO nobody opens or a full pipe stopped by a
signal (128 + signal, not 1), the first SIGINT/SIGTERM (closes as Ctrl+Q, then 128 +
signal), and the Importance view's memory on a model with many heads. Each waits on the
app's state (its probe file, the kernel's word for where its window thread waits), not
on the clock.

    test_hostile_gui.py PATH/TO/mhaviz [unittest args]   (needs a display: ctest runs it under xvfb-run)
"""
import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_bad_input as tb  # noqa: E402
from test_hostile_surfaces import BUDGET_MIB, Surface  # noqa: E402


class GuiCase(Surface):
    def gui(self, args, env=None):
        return subprocess.Popen([tb.MHAVIZ, "gui", "--width", "800", "--height", "600"] + args,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, start_new_session=True)

    def wait_for(self, p, ready):
        """Waits until ready() (the app's own state), or until the app ends. The guard
        only stops a hang from blocking CI; nothing asserts a duration."""
        guard = time.monotonic() + tb.HANG_GUARD_S
        while p.poll() is None and not ready():
            if time.monotonic() > guard:
                p.kill()
                self.fail("mhaviz gui never reached the state waited for")
            try:
                p.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
        if p.poll() is not None:
            self.fail("mhaviz gui ended (exit %s) before it was ready: %s" % (p.returncode,
                                                                           p.stderr.read().decode()[-2000:]))

    def blocked_on_a_pipe(self, p):
        """The window thread waits in a FIFO's open or in a write to a full pipe."""
        try:
            with open("/proc/%d/wchan" % p.pid) as f:
                where = f.read().strip()
        except OSError:
            return False
        return where == "wait_for_partner" or where.endswith("pipe_write")  # (anon_pipe_write on Linux 6.x)

    def stop(self, p, sig):
        p.send_signal(sig)
        try:
            rc = p.wait(timeout=tb.HANG_GUARD_S)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            self.fail("mhaviz gui ignored signal %d" % sig)
        err = p.stderr.read().decode("utf-8", "replace")
        p.stderr.close()
        return rc, err


class GuiStops(GuiCase):
    def test_automation_output_to_a_fifo_nobody_opens(self):
        # Was: exit 1 (the abandoned write counted as a failed one).
        for flag, name, sig in [("--dump-state", "d.json", signal.SIGINT), ("--export", "e.png", signal.SIGTERM),
                                ("--screenshot", "s.png", signal.SIGTERM), ("--stats", "t.json", signal.SIGINT),
                                ("--probe", "p.json", signal.SIGTERM)]:
            with self.subTest(flag=flag, sig=sig):
                path = self.path(name)
                os.mkfifo(path)
                p = self.gui(["--frames", "3", flag, path])
                self.wait_for(p, lambda: self.blocked_on_a_pipe(p))
                rc, err = self.stop(p, sig)
                self.assertEqual(rc, 128 + sig, err)
                self.assertNotIn("Sanitizer", err)
                os.remove(path)
                self.assertEqual([f for f in os.listdir(self.dir) if tb.is_temporary(f)], [])

    def test_automation_output_to_a_full_pipe(self):
        path = self.path("d.json")
        os.mkfifo(path)
        reader = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            fcntl.fcntl(reader, 1031, 4096)  # F_SETPIPE_SZ: full after one page
            p = self.gui(["--frames", "3", "--dump-state", path])
            self.wait_for(p, lambda: self.blocked_on_a_pipe(p))
            rc, err = self.stop(p, signal.SIGTERM)
        finally:
            os.close(reader)
        self.assertEqual(rc, 128 + signal.SIGTERM, err)

    def test_first_signal_closes_as_ctrl_q_and_exits_128_plus_signal(self):
        for sig in (signal.SIGTERM, signal.SIGINT):
            with self.subTest(sig=sig):
                probe, dump = self.path("probe.json"), self.path("dump.json")
                p = self.gui(["--frames", "1000000", "--probe", probe, "--dump-state", dump])
                self.wait_for(p, lambda: os.path.exists(probe))
                rc, err = self.stop(p, sig)
                self.assertEqual(rc, 128 + sig, err)
                with open(dump, encoding="utf-8") as f:
                    self.assertIn("trace", json.load(f))  # written as Ctrl+Q writes it
                os.remove(probe)
                os.remove(dump)


class GuiCatalogue(GuiCase):
    def test_damaged_catalogue_opens_in_english_with_a_notice(self):
        # Was: SIGSEGV in gettext, or ImGui's "Cannot have an empty ID at the root of window".
        built = os.path.join(os.path.dirname(tb.MHAVIZ), "..", "assets", "locale", "ko", "LC_MESSAGES", "mhaviz.mo")
        with open(built, "rb") as f:
            good = f.read()
        assets = tempfile.mkdtemp(prefix="mhaviz-mo-")
        try:
            mo_dir = os.path.join(assets, "locale", "ko", "LC_MESSAGES")
            os.makedirs(mo_dir)
            for what, data in [("an eighth", good[:len(good) // 8]), ("a half", good[:len(good) // 2])]:
                with self.subTest(what):
                    with open(os.path.join(mo_dir, "mhaviz.mo"), "wb") as f:
                        f.write(data)
                    dump = self.path("d.json")
                    r = tb.run(["gui", "--lang", "ko", "--frames", "3", "--dump-state", dump],
                               env=dict(os.environ, MHAVIZ_ASSETS=assets))
                    self.check_clean(r)
                    self.assertEqual(r.rc, 0, r)
                    self.assertWithinBudget(r)
                    with open(dump, encoding="utf-8") as f:
                        state = json.load(f)
                    self.assertEqual(state["language"], "en")
                    self.assertTrue(any("is damaged" in n for n in state["notices"]), state["notices"])
        finally:
            shutil.rmtree(assets, ignore_errors=True)


def peak_rss_mib(pid):
    """The process's peak RSS since it started (VmHWM: its own, not its parent's)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


class GuiImportance(GuiCase):
    def test_importance_view_of_a_wide_model(self):
        # Was 2,520 MiB on a model of this kind: the view's reference pass ran 128
        # held-out examples in one batch. Measured once the labels, the in-context curve
        # and one whole pass over the reference (512 examples) are done.
        models = tempfile.mkdtemp(prefix="mhaviz-ref-")
        try:
            wide = os.path.join(models, "wide.npz")
            self.assertEqual(tb.run(["train", "--task", "offsets", "--offsets", "1", "--seq", "256", "--vocab", "8",
                                     "--heads", "64", "--d-model", "64", "--layers", "1", "--batch", "2", "--steps",
                                     "0", "--out", wide]).rc, 0)
            probe = self.path("probe.json")
            p = self.gui(["--model", wide, "--view", "importance", "--frames", "1000000", "--probe", probe])

            def measured():
                try:
                    with open(probe, encoding="utf-8") as f:
                        imp = json.load(f).get("importance", {})
                except (OSError, ValueError):
                    return False
                self.assertNotEqual(imp.get("state"), "error", imp)
                return imp.get("state") == "done" or imp.get("step", 0) >= 4

            self.wait_for(p, measured)
            peak = peak_rss_mib(p.pid)
            rc, err = self.stop(p, signal.SIGTERM)
            self.assertLess(peak, BUDGET_MIB, err)
            self.assertEqual(rc, 128 + signal.SIGTERM, err)
        finally:
            shutil.rmtree(models, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) < 2 or not os.access(sys.argv[1], os.X_OK):
        sys.exit("usage: test_hostile_gui.py PATH/TO/mhaviz [unittest args]")
    if not os.environ.get("DISPLAY"):
        sys.exit("test_hostile_gui.py needs a display: run it under xvfb-run")
    tb.MHAVIZ = os.path.abspath(sys.argv.pop(1))
    unittest.main(verbosity=2)
