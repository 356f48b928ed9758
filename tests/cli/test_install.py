#!/usr/bin/env python3
"""`cmake --install` into a temporary prefix, then the installed mhaviz run from another
directory after the prefix has moved (so nothing can come from the build tree or the
install path compiled in): trace, export, and a GUI screenshot under Xvfb. Checks the
font is the installed copy, and the desktop entry, icons and man page.

    test_install.py BUILD_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    build = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="mhaviz-install-")
    try:
        first, prefix = os.path.join(tmp, "first"), os.path.join(tmp, "moved")
        subprocess.run(["cmake", "--install", build, "--prefix", first], check=True, stdout=subprocess.DEVNULL)
        os.rename(first, prefix)
        elsewhere = os.path.join(tmp, "elsewhere")
        os.mkdir(elsewhere)
        exe = os.path.join(prefix, "bin", "mhaviz")
        font = os.path.join(prefix, "share", "mhaviz", "fonts", "NanumGothic.ttf")
        share = os.path.join(prefix, "share", "mhaviz")
        for f in (exe, font, os.path.join(prefix, "share", "mhaviz", "fonts", "OFL.txt"),
                  *[os.path.join(share, "models", f"mhaviz-small.{x}") for x in ("npz", "model")],
                  *[os.path.join(share, "corpus", f) for f in ("valid.txt.gz", "LICENSES.md")],
                  os.path.join(prefix, "share", "icons", "hicolor", "scalable", "apps", "mhaviz.svg"),
                  *[os.path.join(prefix, "share", "icons", "hicolor", f"{n}x{n}", "apps", "mhaviz.png")
                    for n in (16, 24, 32, 48, 64, 128, 256)]):
            assert os.path.isfile(f), f"not installed: {f}"
        env = {k: v for k, v in os.environ.items() if k not in ("MHAVIZ_FONT", "MHAVIZ_ASSETS")}
        env["XDG_CONFIG_HOME"] = os.path.join(tmp, "config")

        def run(*args, **kw):
            r = subprocess.run([exe, *args], cwd=elsewhere, env=env, capture_output=True, text=True, timeout=300,
                               **kw)
            assert r.returncode == 0, f"mhaviz {' '.join(args)}: exit {r.returncode}\n{r.stderr}"
            return r

        r = run("trace", "--sentence", "고양이가 쥐를 잡았다", "--heads", "2", "--d-model", "8")
        assert "[고양이가]" in r.stdout, r.stdout
        run("export", "--sentence", "고양이가 쥐를 잡았다", "--heads", "2", "--d-model", "8", "--png", "h.png")
        assert os.path.getsize(os.path.join(elsewhere, "h.png")) > 1000
        if shutil.which("strace"):  # the exporter opened the installed font
            log = os.path.join(tmp, "strace.log")
            # LeakSanitizer cannot run under ptrace: a sanitizer build checks leaks in the runs above.
            traced = dict(env, ASAN_OPTIONS=(env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
            subprocess.run(["strace", "-f", "-e", "trace=openat", "-o", log, exe, "export", "--heads", "1",
                            "--d-model", "4", "--png", "s.png"], cwd=elsewhere, env=traced, check=True,
                           capture_output=True)
            opened = [l for l in open(log) if "NanumGothic.ttf" in l and "ENOENT" not in l]
            assert opened and os.path.realpath(prefix) in os.path.realpath(opened[0].split('"')[1]), opened
        # The shipped language model by name: the installed copy and its tokenizer.
        log = os.path.join(tmp, "strace-model.log")
        argv = [exe, "trace", "--model", "mhaviz-small", "--sentence", "고양이가 쥐를 잡았다", "--json", "m.json", "-q"]
        if shutil.which("strace"):
            argv = ["strace", "-f", "-e", "trace=openat", "-o", log] + argv
        subprocess.run(argv, cwd=elsewhere, env=traced if shutil.which("strace") else env, check=True,
                       capture_output=True)
        ids = json.load(open(os.path.join(elsewhere, "m.json"), encoding="utf-8"))["ids"]
        assert len(ids) > 3, ids
        if shutil.which("strace"):
            for name in ("mhaviz-small.npz", "mhaviz-small.model"):
                opened = [l.split('"')[1] for l in open(log) if name in l and "ENOENT" not in l]
                assert opened and all(os.path.realpath(prefix) in os.path.realpath(o) for o in opened), (name, opened)
        # The desktop entry, and the man page covers every subcommand --help lists.
        desktop = open(os.path.join(prefix, "share", "applications", "mhaviz.desktop"), encoding="utf-8").read()
        for line in ("Type=Application", "Exec=mhaviz gui", "Icon=mhaviz", "Terminal=false"):
            assert line in desktop.splitlines(), f"{line} missing from the desktop entry"
        man = open(os.path.join(prefix, "share", "man", "man1", "mhaviz.1"), encoding="utf-8").read()
        commands = [l.split()[1].strip("[]") for l in run("--help").stdout.splitlines()
                    if l.startswith("  mhaviz ") and not l.split()[1].startswith("--")]
        assert len(commands) >= 5, commands
        for c in commands:
            assert f".SH COMMAND: {c.upper()}" in man, f"the man page has no section for {c}"
            assert run(c, "--help").stdout.splitlines()[0] in man, f"the man page lacks {c}'s --help"
        # The GUI, under Xvfb: a screenshot, with the installed font.
        if "gui" in commands and shutil.which("xvfb-run"):
            shot, dump = os.path.join(tmp, "shot.png"), os.path.join(tmp, "dump.json")
            r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", exe, "gui", "--sentence",
                                "고양이가 쥐를 잡았다", "--frames", "3", "--width", "1280", "--height", "800",
                                "--screenshot", shot, "--dump-state", dump], cwd=elsewhere, env=env,
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, f"gui: exit {r.returncode}\n{r.stderr}"
            assert os.path.getsize(shot) > 10000
            state = json.load(open(dump, encoding="utf-8"))
            assert os.path.realpath(state["font_path"]) == os.path.realpath(font), state["font_path"]
            assert state["font_notice"] == "", state["font_notice"]
            # The Model view of the installed model labels its heads on the installed validation text.
            r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", exe, "gui", "--model", "mhaviz-small",
                                "--sentence", "고양이가 쥐를 잡았다", "--view", "model-view", "--frames", "600",
                                "--dump-state", dump], cwd=elsewhere, env=env, capture_output=True, text=True,
                               timeout=300)
            assert r.returncode == 0, f"gui --model mhaviz-small: exit {r.returncode}\n{r.stderr}"
            mv = json.load(open(dump, encoding="utf-8"))["views"]["model_view_view"]
            assert mv["labels_measured_on"] == "validation text", mv["labels_measured_on"]
        print("ok install")
    except AssertionError as e:
        print(f"FAIL install: {e}\n(files kept in {tmp})")
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
