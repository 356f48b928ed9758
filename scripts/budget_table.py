#!/usr/bin/python3
"""Peak RSS and wall time of the largest configuration every mhaviz command accepts:
the table behind the memory and time budget (every accepted input under 1.5 GB and
30 s). Each row runs once; the GUI rows run under xvfb-run.

    scripts/budget_table.py PATH/TO/mhaviz [--only SUBSTRING]

Prints a Markdown table: command, configuration, exit status, peak RSS (MiB), seconds.
On a shared machine the seconds vary; the peaks do not.
"""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np


def measure(cmd, cwd):
    """Runs cmd; returns (exit status, peak RSS of the command in MiB, seconds). A row
    may prepare its files first ("A && B": only B, the last part, is measured)."""
    while "&&" in cmd:
        prep, cmd = cmd[:cmd.index("&&")], cmd[cmd.index("&&") + 1:]
        prep = [MHAVIZ if a == "MHAVIZ" else sys.executable if a == "PYTHON" else a for a in prep]
        p = subprocess.run(prep, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        if p.returncode != 0:
            return p.returncode, 0.0, 0.0, p.stderr.decode("utf-8", "replace")
    t0 = time.monotonic()
    # /usr/bin/time reports the command's own peak (under xvfb-run, mhaviz's, not Xvfb's).
    with tempfile.NamedTemporaryFile("r") as rep:
        full = cmd[:cmd.index("MHAVIZ")] + ["/usr/bin/time", "-f", "%M", "-o", rep.name] + cmd[cmd.index("MHAVIZ"):]
        full[full.index("MHAVIZ")] = MHAVIZ
        p = subprocess.run(full, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        secs = time.monotonic() - t0
        lines = [l for l in rep.read().split("\n") if l.strip().isdigit()]
        kib = int(lines[-1]) if lines else 0
    return p.returncode, kib / 1024.0, secs, p.stderr.decode("utf-8", "replace")


def main():
    global MHAVIZ
    MHAVIZ = os.path.abspath(sys.argv[1])
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    d = tempfile.mkdtemp(prefix="mhaviz-budget-")
    for n in (1024, 300):
        with open(os.path.join(d, "s%d.txt" % n), "w") as f:
            f.write(" ".join("w%d" % i for i in range(n)))
    s = ["--sentence-file", "s1024.txt"]
    s300 = ["--sentence-file", "s300.txt"]
    xvfb = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24"]
    gui = xvfb + ["MHAVIZ", "gui", "--no-settings", "--frames", "5"]
    heads = ["--heads", "110", "--d-model", "220"]        # the most attention weights the trace cap takes
    wide = ["--heads", "32", "--d-model", "4096"]         # the widest layer, with as many heads as fit
    enc = ["--heads", "8", "--d-model", "4096", "--block", "encoder", "--d-ff", "16384"]
    tr_model = ["--d-model", "1024", "--layers", "3", "--heads", "16", "--threads", "2"]
    # A model of max_seq 1024 (trained for 0 steps on a 1024-token batch) and its batch.
    rng = np.random.default_rng(0)
    np.savez(os.path.join(d, "b1024.npz"), tokens=rng.integers(0, 100, (1, 1024)), targets=rng.integers(0, 100, (1, 1024)))
    np.savez(os.path.join(d, "b256.npz"), tokens=rng.integers(0, 1000, (1, 256)), targets=rng.integers(0, 1000, (1, 256, 2)))
    # Logits: batch x seq x targets x vocab numbers, and SentencePiece's working memory.
    np.savez(os.path.join(d, "b16x4.npz"), tokens=rng.integers(0, 65536, (1, 4)),
             targets=rng.integers(0, 65536, (1, 4, 16)))
    np.savez(os.path.join(d, "bv64k.npz"), tokens=rng.integers(0, 65536, (8, 512)),
             targets=rng.integers(0, 65536, (8, 512)))
    np.savez(os.path.join(d, "bv64k1.npz"), tokens=rng.integers(0, 65536, (1, 4)), targets=rng.integers(0, 65536, (1, 4)))
    with open(os.path.join(d, "paragraph.txt"), "w") as f:  # one 40 MB paragraph
        words = ["the", "cat", "sat", "on", "mat", "고양이가", "매트", "위에", "앉았다"]
        f.write(" ".join(words[i % 9] for i in range(6_000_000)) + "\n")
        f.write("the cat sat on the mat, and the dog sat on the rug beside it.\n" * 400)  # every 20th held out
    tok = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models", "mhaviz-small.model")
    rows = [
        ("train, 8 offsets x vocab 1000 x 256 tokens, batch 104 (the logits' cap)",
         ["MHAVIZ", "train", "--task", "offsets", "--offsets", "8", "--vocab", "1000", "--seq", "256", "--heads", "1",
          "--batch", "104", "--steps", "2", "--out", "off.npz"]),
        ("trace --model, 16 targets x vocab 65536, 223 tokens (the logits' cap)",
         ["MHAVIZ", "train", "--data", "b16x4.npz", "--vocab", "65536", "--pos", "sinusoidal", "--d-model", "16",
          "--heads", "2", "--steps", "0", "--out", "v64k.npz", "&&", "PYTHON", "-c",
          "import json,numpy as n;z=dict(n.load('v64k.npz'));c=json.loads(bytes(z['config']));c['max_seq']=1024;"
          "z['config']=n.frombuffer(json.dumps(c).encode(),n.uint8);n.savez('v64k.npz',**z)", "&&", "MHAVIZ", "trace",
          "-q", "--model", "v64k.npz", "--tokens", " ".join(["7"] * 223), "--npz", "o.npz"]),
        ("grad, vocab 65536, 8 x 512 tokens (the logits' cap)",
         ["MHAVIZ", "train", "--data", "bv64k1.npz", "--vocab", "65536", "--pos", "sinusoidal", "--d-model", "16",
          "--heads", "2", "--steps", "0", "--out", "g64k.npz", "&&", "PYTHON", "-c",
          "import json,numpy as n;z=dict(n.load('g64k.npz'));c=json.loads(bytes(z['config']));c['max_seq']=1024;"
          "z['config']=n.frombuffer(json.dumps(c).encode(),n.uint8);n.savez('g64k.npz',**z)", "&&", "MHAVIZ", "grad",
          "--model", "g64k.npz", "--data", "bv64k.npz", "--out", "g.npz"]),
        ("train --task text, one 40 MB paragraph (tokenized in 64 KiB chunks), 1 step",
         ["MHAVIZ", "train", "--task", "text", "--corpus", "paragraph.txt", "--tokenizer", tok, "--seq", "64",
          "--batch", "8", "--steps", "1", "--out", "lm.npz"]),
        ("train (setup: 3 layers d_model 1024, max_seq 1024, 0 steps)", ["MHAVIZ", "train", "--data", "b1024.npz", "--vocab", "100", "--steps", "0",
                                                  "--out", "m1024.npz"] + tr_model),
        ("trace, 110 heads x 1024 tokens", ["MHAVIZ", "trace", "-q"] + heads + s),
        ("trace, d_model 4096, 32 heads, 1024 tokens", ["MHAVIZ", "trace", "-q"] + wide + s),
        ("trace, encoder d_model 4096, d_ff 16384, 300 tokens", ["MHAVIZ", "trace", "-q"] + enc + s300),
        ("trace --npz, 110 heads x 1024 tokens", ["MHAVIZ", "trace", "-q", "--npz", "o.npz"] + heads + s),
        ("trace --npz, encoder d_model 4096, 300 tokens", ["MHAVIZ", "trace", "-q", "--npz", "o.npz"] + enc + s300),
        ("trace --json, 4 heads x 1024 tokens (the JSON cap)", ["MHAVIZ", "trace", "-q", "--json", "o.json",
                                                                "--heads", "4", "--d-model", "64"] + s),
        ("trace --model, 3 layers d_model 1024, 1024 tokens", ["MHAVIZ", "trace", "-q", "--model", "m1024.npz", "--tokens",
                                                               " ".join(["7"] * 1024), "--layer", "2", "--npz", "o.npz"]),
        ("export --png, 110 heads x 1024 tokens", ["MHAVIZ", "export", "-q", "--png", "o.png"] + heads + s),
        ("export --svg, 300,000 cells (--head 0, 547 tokens)", ["MHAVIZ", "export", "-q", "--svg", "o.svg", "--head", "0",
                                                               "--sentence", " ".join("w%d" % i for i in range(547))]),
        ("bench, 110 heads x 1024 tokens", ["MHAVIZ", "bench", "--seq", "1024"] + heads),
        ("bench, d_model 4096, 32 heads, 1024 tokens", ["MHAVIZ", "bench", "--seq", "1024"] + wide),
        ("bench --live, 16 heads (<-> 32) x 512 tokens", ["MHAVIZ", "bench", "--live", "--seq", "512", "--heads", "16",
                                                          "--d-model", "512"]),
        ("bench --live, d_model 2048, 128 tokens", ["MHAVIZ", "bench", "--live", "--seq", "128", "--heads", "16",
                                                    "--d-model", "2048"]),
        ("bench --train, 6 layers d_model 1024, batch 1 x 256", ["MHAVIZ", "bench", "--train", "--task", "offsets", "--seq",
                                                                 "256", "--vocab", "1000", "--d-model", "1024", "--layers",
                                                                 "6", "--heads", "16", "--batch", "1", "--repeat", "2"]),
        ("train, 6 layers d_model 1024, batch 1 x 256, 3 steps", ["MHAVIZ", "train", "--task", "offsets", "--seq", "256",
                                                                  "--vocab", "1000", "--d-model", "1024", "--layers", "6",
                                                                  "--heads", "16", "--batch", "1", "--steps", "3",
                                                                  "--out", "m6.npz"]),
        ("grad, 6 layers d_model 1024 on 1 x 256 tokens", ["MHAVIZ", "grad", "--model", "m6.npz", "--data", "b256.npz", "--out", "g.npz"]),
        ("gui --screenshot, 110 heads x 1024 tokens, heatmaps", gui + ["--screenshot", "g1.png"] + heads + s),
        ("gui --dump-state, 110 heads x 1024 tokens, head metrics", gui + ["--view", "heads", "--dump-state", "g.json",
                                                                           "--screenshot", "g2.png"] + heads + s),
        ("gui --screenshot 7680 x 4320 (the window cap)", gui + ["--width", "7680", "--height", "4320",
                                                                 "--screenshot", "g3.png"]),
        ("gui --screenshot, encoder d_model 4096, inspector", gui + ["--inspect", "ffn_W1", "--screenshot", "g4.png"] + enc + s300),
    ]
    print("| command and largest accepted configuration | exit | peak RSS (MiB) | seconds |")
    print("|---|---|---|---|")
    for name, cmd in rows:
        if only and only not in name:
            continue
        rc, mib, secs, err = measure(cmd, d)
        print("| %s | %d | %.0f | %.1f |" % (name, rc, mib, secs), flush=True)
        if rc != 0:
            print("    stderr: " + err.strip().replace("\n", " ")[:300], flush=True)
    shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
