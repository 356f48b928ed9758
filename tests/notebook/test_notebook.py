"""`mhaviz export --notebook`: the notebooks it writes are valid nbformat 4, run headless
(nbclient, one Python kernel shared by all of them) on Debian's torch 1.13, and every
check in them passes; each fails when one weight in its .npz is changed, so the checks
can fail. `attn` is left as (batch, num_heads, seq, seq_kv) and equals what `mhaviz
trace --npz` computes with the same flags, read here with numpy (not by the notebook).
The "Copy as PyTorch" snippets run and check themselves the same way. Bad input: a name
without .ipynb, a directory in the way, an unwritable place, flags that shape pictures:
clear errors, and nothing written, neither the notebook nor its .npz.

usage: test_notebook.py PATH/TO/mhaviz PATH/TO/notebook_snippet   (exit 77: nbclient,
torch or matplotlib missing)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

try:
    import matplotlib  # noqa: F401
    import nbclient
    import nbformat
    import numpy as np
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print(f"{e.name} is not installed (scripts/setup.sh test installs it): skipped")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cli"))
from checks import check, float32_tol, FAILURES  # noqa: E402

KO = "고양이가 쥐를 잡았다"
LM_SENTENCE = "고양이가 쥐를 잡았다. 고양이가 쥐를"
# name: (flags, the weight to change, by how much (of its tensor's largest value), how many
# checks the notebook must pass at least)
CASES = {
    "default": ([], "W_q", 1e-3, 13),
    "korean_causal": (["--sentence", KO, "--mask", "causal", "--lang", "ko"], "W_q", 1e-3, 13),
    # Quotes and a backslash in the tokens: Python string literals that read back exactly.
    "gqa": (["--sentence", 'The "cat" sat \\ on the mat .', "--heads", "8", "--kv-heads", "2", "--d-model", "64"],
            "W_k", 1e-3, 13),
    "encoder": (["--sentence", KO, "--block", "encoder", "--norm", "pre", "--activation", "gelu", "--heads", "4",
                 "--d-model", "64"], "ffn_W1", 1e-3, 19),
    "hand": (["--preset", "hand"], "W_v", 1e-3, 13),
    "cross_mean": (["--sentence", "I saw her duck", "--memory", "the duck saw her", "--heads", "4", "--d-model",
                    "32", "--no-scale", "--temperature", "2", "--norm", "none", "--ablate", "L0H1", "--ablate-mode",
                    "mean"], "W_o", 1e-3, 13),
    "mhaviz_small": (["--model", "mhaviz-small", "--sentence", LM_SENTENCE, "--layer", "1", "--ablate", "L1H3",
                      "--ablate-mode", "mean", "--lang", "ko"], "layers.0.W_q", 1e-2, 14),
}


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)


class SharedKernel:
    """One ipykernel for every notebook: the kernel and torch start once (most of the
    time on a busy machine). Each notebook starts from an empty namespace in its own
    directory, as Jupyter would run it."""

    def __init__(self):
        self.client = nbclient.NotebookClient(nbformat.v4.new_notebook(), timeout=600, kernel_name="python3")
        self.context = self.client.setup_kernel()
        self.context.__enter__()

    def close(self):
        self.context.__exit__(None, None, None)

    def _scratch(self, source):
        cell = nbformat.v4.new_code_cell(source)
        self.client.nb = nbformat.v4.new_notebook(cells=[cell])
        self.client.execute_cell(cell, 0)
        return cell

    def run(self, nb, cwd):
        """Runs every cell of `nb` in `cwd`; returns the error (None if every cell ran)."""
        self._scratch(f"%reset -f\nimport os\nos.chdir({cwd!r})\nimport matplotlib.pyplot\nmatplotlib.pyplot.close('all')")
        self.client.nb = nb
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            try:
                self.client.execute_cell(cell, index)
            except nbclient.exceptions.CellExecutionError as e:
                return e
        return None

    def value(self, source):
        """The text a scratch cell prints."""
        cell = self._scratch(source)
        return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def outputs(nb, kind):
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if kind == "stream" and o.output_type == "stream":
                yield o.name, o.text
            if kind == "image" and "image/png" in o.get("data", {}):
                yield o


def export(mhaviz, d, name, flags):
    path = os.path.join(d, name + ".ipynb")
    r = run([mhaviz, "export", "--notebook", path] + flags)
    return path, r


def check_case(mhaviz, kernel, tmp, name, flags, weight, change, min_checks):
    d = os.path.join(tmp, name)
    os.makedirs(d)
    path, r = export(mhaviz, d, name, flags)
    check(r.returncode == 0 and os.path.exists(path) and os.path.exists(path[:-6] + ".npz"),
          f"{name}: export --notebook wrote the notebook and its .npz ({r.stderr.strip()[-300:]})")
    if r.returncode != 0:
        return
    nb = nbformat.read(path, as_version=4)
    try:
        nbformat.validate(nb)
        valid = True
    except nbformat.ValidationError as e:  # pragma: no cover
        valid = str(e)
    check(valid is True, f"{name}: valid nbformat {nb.nbformat}.{nb.nbformat_minor} ({valid})")
    t0 = time.monotonic()
    error = kernel.run(nb, d)
    seconds = time.monotonic() - t0
    check(error is None, f"{name}: every cell runs ({seconds:.1f} s){'' if error is None else ': ' + str(error)[-600:]}")
    stdout = "".join(text for stream, text in outputs(nb, "stream") if stream == "stdout")
    stderr = "".join(text for stream, text in outputs(nb, "stream") if stream == "stderr")
    passed = stdout.count("= mhaviz's")
    check(passed >= min_checks, f"{name}: {passed} checks against mhaviz's tensors passed (at least {min_checks})")
    check("missing from" not in stderr and "findfont" not in stderr,
          f"{name}: every label has its glyphs ({stderr.strip()[-200:]})")
    check("Korean font: NanumGothic" in stdout or "한국어 글꼴: NanumGothic" in stdout,
          f"{name}: the heatmaps' labels are in NanumGothic")
    check(len(list(outputs(nb, "image"))) >= 1, f"{name}: the heatmap grid was drawn")
    if "--lang" in flags:  # the last heading, "What to try next", as po/ko.po translates it
        last = [cell.source for cell in nb.cells if cell.cell_type == "markdown"][-1]
        check(last.startswith("## 다음에 해 볼 것"), f"{name}: the markdown is Korean ({last[:40]!r})")
    if error is None:
        check_attn(mhaviz, kernel, d, name, flags)
    check_altered(kernel, d, name, path, weight, change)


def check_attn(mhaviz, kernel, d, name, flags):
    """`attn` against `mhaviz trace --npz` of the same flags, read with numpy."""
    shape = json.loads(kernel.value("import json\nprint(json.dumps(list(attn.shape)))"))
    kernel.value(f"import numpy\nnumpy.save({os.path.join(d, 'attn.npy')!r}, attn.numpy())")
    terms = 1
    if "--preset" in flags:  # the hand calculation: one key, so every weight is 1 (trace has no presets)
        want = np.ones((1, 2, 1, 1), dtype=np.float32)
    else:
        trace_flags = [f for f in flags if f not in ("--lang", "ko")]
        npz = os.path.join(d, "trace.npz")
        r = run([mhaviz, "trace", "--npz", npz, "-q"] + trace_flags)
        if r.returncode != 0:
            check(False, f"{name}: trace with the same flags ({r.stderr.strip()})")
            return
        want = np.load(npz)["attn"]
        # Every layer up to the traced one adds its d_model-long projections.
        layers = int(flags[flags.index("--layer") + 1]) + 1 if "--layer" in flags else 1
        terms = layers * np.load(npz)["x"].shape[-1]
    got = np.load(os.path.join(d, "attn.npy"))
    err = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    # The notebook's float64 attn against mhaviz's float32, relative to the weights' scale.
    tol = float32_tol(want, terms)
    check(tuple(shape) == want.shape and len(shape) == 4,
          f"{name}: attn is (batch, num_heads, seq, seq_kv) = {tuple(shape)}, as trace's {want.shape}")
    check(err <= tol, f"{name}: attn equals trace --npz's attn (largest difference {err:.1e}, tolerance {tol:.1e})")


def check_altered(kernel, d, name, path, weight, change):
    """The same notebook on an .npz with one weight changed by `change` times its tensor's
    largest value: a check must fail."""
    bad = os.path.join(d, "altered")
    os.makedirs(bad)
    npz = path[:-6] + ".npz"
    z = dict(np.load(npz))
    w = z[weight].copy()
    w.flat[np.argmax(np.abs(w))] += change * float(np.abs(w).max())
    z[weight] = w
    np.savez(os.path.join(bad, os.path.basename(npz)), **z)
    nb = nbformat.read(path, as_version=4)
    error = kernel.run(nb, bad)
    check(error is not None and "differs from mhaviz's" in str(error),
          f"{name}: with one number of {weight} changed by {change:.1%} of its largest a check fails"
          f"{'' if error is None else ': ' + str(error).strip().splitlines()[-1][:160]}")


def check_notebooks(mhaviz, tmp):
    kernel = SharedKernel()
    try:
        for name, (flags, weight, change, min_checks) in CASES.items():
            check_case(mhaviz, kernel, tmp, name, flags, weight, change, min_checks)
    finally:
        kernel.close()


def check_bad_input(mhaviz, tmp):
    d = os.path.join(tmp, "bad")
    os.makedirs(d)

    def refused(args, status, words, what):
        before = sorted(os.listdir(d))
        r = run([mhaviz, "export"] + args)
        after = sorted(os.listdir(d))
        check(r.returncode == status and all(w in r.stderr for w in words) and before == after,
              f"{what}: exit {r.returncode} (want {status}), nothing written ({r.stderr.strip()[:240]})")

    refused(["--notebook", os.path.join(d, "cat.txt")], 2, [".ipynb"], "a name without .ipynb")
    refused(["--notebook", os.path.join(d, "cat")], 2, [".ipynb"], "a name without an extension")
    refused(["--notebook", os.path.join(d, ".ipynb")], 2, [".ipynb"], "a name that is only .ipynb")
    os.makedirs(os.path.join(d, "dir.ipynb"))
    refused(["--notebook", os.path.join(d, "dir.ipynb")], 1, ["directory"], "an existing directory as the notebook")
    os.makedirs(os.path.join(d, "lm.npz"))
    refused(["--notebook", os.path.join(d, "lm.ipynb")], 1, ["directory", "lm.npz"],
            "an existing directory where its .npz goes")
    with open(os.path.join(d, "file"), "w") as f:
        f.write("x")
    refused(["--notebook", os.path.join(d, "file", "x.ipynb")], 1, ["x.ipynb"], "a directory that is a file")
    refused(["--notebook", "/proc/x.ipynb"], 1, ["/proc/x.ipynb"], "an unwritable place")
    refused(["--notebook", os.path.join(d, "a.ipynb"), "--png", os.path.join(d, "a.png")], 2, ["--png"],
            "--notebook with --png")
    refused(["--notebook", os.path.join(d, "a.ipynb"), "--columns", "3"], 2, ["--columns"], "--notebook with --columns")
    refused(["--notebook", os.path.join(d, "a.ipynb"), "--weights", os.path.join(d, "missing.npz")], 1,
            ["missing.npz"], "a missing --weights file")
    many = " ".join(f"w{i}" for i in range(450))
    refused(["--notebook", os.path.join(d, "big.ipynb"), "--sentence", many, "--heads", "64", "--d-model", "512"], 2,
            ["80 MiB", "1.5 GB", "fewer tokens"], "a layer whose notebook would need more than 1.5 GB to run")
    # An existing notebook and .npz stay as they were when the run fails late (a bad input file).
    keep = os.path.join(d, "keep.ipynb")
    for p in (keep, keep[:-6] + ".npz"):
        with open(p, "w") as f:
            f.write("old")
    r = run([mhaviz, "export", "--notebook", keep, "--input", os.path.join(d, "file")])
    same = all(open(p).read() == "old" for p in (keep, keep[:-6] + ".npz"))
    check(r.returncode == 1 and same, f"a failed export leaves the old notebook and .npz as they were ({r.returncode})")
    r = run([mhaviz, "export", "--notebook", keep, "--heads", "2", "--d-model", "8", "-q"])
    check(r.returncode == 0 and r.stdout == "" and open(keep).read().startswith("{"),
          "a good export replaces them, quietly with -q")


# Runs each (directory, script) in one Python process (torch is imported once), in its
# directory; prints {script: [ran without an exception, its output]} as JSON.
SNIPPET_RUNNER = r"""
import contextlib, io, json, os, runpy, sys, traceback
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
results = {}
for item in sys.argv[1:]:
    cwd, script = item.split("::")
    os.chdir(cwd)
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(script, run_name="__main__")
        results[item] = [True, out.getvalue()]
    except BaseException:
        results[item] = [False, out.getvalue() + traceback.format_exc()]
    plt.close("all")
print(json.dumps(results))
"""


def check_snippets(tool, mhaviz, tmp):
    """Each snippet computes what its view shows from trace --npz's file and checks it."""
    d = os.path.join(tmp, "snippets")
    bad = os.path.join(d, "bad")
    os.makedirs(bad)
    configs = {
        "causal_gqa": ["--sentence", KO + " 그리고", "--mask", "causal", "--heads", "4", "--kv-heads", "2",
                       "--d-model", "32"],
        "cross_encoder": ["--sentence", "I saw her duck", "--memory", "a duck", "--heads", "2", "--d-model", "16",
                          "--block", "encoder", "--norm", "post", "--temperature", "0.5", "--ablate", "L0H1"],
        "pre_gelu": ["--heads", "4", "--d-model", "32", "--block", "encoder", "--norm", "pre", "--activation", "gelu",
                     "--no-scale"],
    }
    jobs = []  # (what, "dir::script", should it pass)
    for name, flags in configs.items():
        npz = os.path.join(d, name + ".npz")
        r = run([mhaviz, "trace", "--npz", npz, "-q"] + flags)
        check(r.returncode == 0, f"snippets {name}: trace ({r.stderr.strip()})")
        names = run([tool, "tensors"] + flags).stdout.split()
        check(len(names) >= 10, f"snippets {name}: the tensors a snippet recomputes: {' '.join(names)}")
        kinds = [("query", "1", "2", ""), ("heatmaps", "0", "0", "")] + [("tensor", "1", "0", n) for n in names]
        for kind, head, query, tensor in kinds:
            r = run([tool, kind, os.path.basename(npz), head, query, tensor] + flags)
            script = os.path.join(d, f"{name}_{kind}_{tensor}.py")
            with open(script, "w") as f:
                f.write(r.stdout)
            check(r.returncode == 0, f"snippets {name}: {kind} {tensor} written ({r.stderr.strip()})")
            jobs.append((f"snippets {name}: {kind} {tensor} runs and matches trace --npz", f"{d}::{script}", True))
        # A wrong input: the snippets that read it fail.
        for changed, tensor in (("W_q", "q"), ("q", "scores"), ("k", "query"), ("q", "heatmaps")):
            z = dict(np.load(npz))
            z[changed] = z[changed] * 1.001
            where = os.path.join(bad, changed)
            os.makedirs(where, exist_ok=True)
            np.savez(os.path.join(where, os.path.basename(npz)), **z)
            script = os.path.join(d, f"{name}_{'tensor_' + tensor if tensor in ('q', 'scores') else tensor + '_'}.py")
            jobs.append((f"snippets {name}: with {changed} changed by 0.1%, the {tensor} snippet's check fails",
                         f"{where}::{script}", False))
    r = run([sys.executable, "-c", SNIPPET_RUNNER] + [j for _, j, _ in jobs])
    results = json.loads(r.stdout) if r.returncode == 0 else {}
    check(r.returncode == 0, f"the snippets' runner ({r.stderr.strip()[-300:]})")
    for what, job, should_pass in jobs:
        ok, out = results.get(job, [None, "not run"])
        if should_pass:
            check(ok is True and "largest difference" in out, what + ("" if ok else ": " + out.strip()[-300:]))
        else:
            check(ok is False and "AssertionError" in out, what)


def main():
    mhaviz = os.path.abspath(sys.argv[1])
    tool = os.path.abspath(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        check_bad_input(mhaviz, tmp)
        check_snippets(tool, mhaviz, tmp)
        check_notebooks(mhaviz, tmp)
        print(f"(took {time.monotonic() - t0:.0f} s)")
    print(f"{len(FAILURES)} check(s) failed" if FAILURES else "all checks passed")
    sys.exit(1 if FAILURES else 0)


if __name__ == "__main__":
    main()
