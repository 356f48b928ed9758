"""The head labels shipped beside mhaviz-small (assets/models/mhaviz-small.labels.json,
written by scripts/measure_head_labels.sh) equal a fresh measurement by this build: the
same checkpoint, pairs and validation text (their hashes), every head's pattern score
within float rounding, every phenomenon's counts within one pair (a near-tie may flip
between builds), and the same name, kind and job for every head. The same comparison
against the fresh file with two heads' names swapped must fail. And the names obey their
rule: a causal name only where the head's knock-out is a significant drop of a learned
phenomenon; no "particle → noun" unless the particles need the head.

Usage: test_head_labels.py MHAVIZ"""
import json
import os
import subprocess
import sys

from checks import check, main

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SHIPPED = os.path.join(ROOT, "assets", "models", "mhaviz-small.labels.json")
SCRIPT = os.path.join(ROOT, "scripts", "measure_head_labels.sh")


def differences(a, b):
    """What differs between two labels files beyond float rounding, as sentences."""
    out = []
    for key in ("checkpoint", "pairs_file", "validation_text"):
        if a[key] != b[key]:
            out.append(f"{key}: {a[key]} vs {b[key]} (run scripts/measure_head_labels.sh)")
    for p, q in zip(a["profiles"], b["profiles"]):
        if (p["layer"], p["head"], p["label"]) != (q["layer"], q["head"], q["label"]):
            out.append(f"L{p['layer']}H{p['head']}: pattern {p['label']} vs {q['label']}")
        if abs(p["score"] - q["score"]) > 1e-4:
            out.append(f"L{p['layer']}H{p['head']}: pattern score {p['score']:.6f} vs {q['score']:.6f}")
    if len(a["profiles"]) != len(b["profiles"]):
        out.append("a different number of heads")
    rows_a, rows_b = a["table"]["rows"], b["table"]["rows"]
    if [r["phenomenon"] for r in rows_a] != [r["phenomenon"] for r in rows_b]:
        out.append("different phenomena")
    for r, s in zip(rows_a, rows_b):
        if abs(r["correct"] - s["correct"]) > 1:
            out.append(f"{r['phenomenon']}: {r['correct']} vs {s['correct']} pairs right")
        for c, d in zip(r["knocked_out"], s["knocked_out"]):
            if c["name"] != d["name"] or abs(c["correct"] - d["correct"]) > 1:
                out.append(f"{r['phenomenon']} without {c['name']}/{d['name']}: {c['correct']} vs {d['correct']}")
    names = lambda doc: [(l["name"], l["label"]["text"], l["label"]["kind"], l["label"]["job"]) for l in doc["labels"]]
    if names(a) != names(b):
        out.append(f"head names: {names(a)} vs {names(b)}")
    return out


def shipped_equals_fresh(mhaviz, tmp):
    check(os.path.isfile(SHIPPED), f"{os.path.relpath(SHIPPED, ROOT)} ships beside the checkpoint")
    if os.environ.get("MHAVIZ_SANITIZED"):
        # Nine passes over the pairs take minutes under a sanitizer; the normal build
        # measures afresh, and the rules are checked on the shipped file here.
        print("skip  the fresh measurement under a sanitizer (checked in the normal build)")
        if os.path.isfile(SHIPPED):
            with open(SHIPPED, encoding="utf-8") as f:
                rules(json.load(f))
        return
    fresh = os.path.join(tmp, "mhaviz-small.labels.json")
    model = os.path.join(ROOT, "assets", "models", "mhaviz-small.npz")
    r = subprocess.run([mhaviz, "pairs", "--model", model, "--write-labels", fresh], capture_output=True, text=True,
                       timeout=1800)
    check(r.returncode == 0, f"pairs --write-labels measures them ({r.stderr.strip()[:300]})")
    if r.returncode != 0 or not os.path.isfile(SHIPPED):
        return
    with open(SHIPPED, encoding="utf-8") as f:
        shipped = json.load(f)
    with open(fresh, encoding="utf-8") as f:
        doc = json.load(f)
    diff = differences(shipped, doc)
    check(not diff, "the shipped labels are a fresh measurement's" + ("" if not diff else ": " + "; ".join(diff[:6])))
    # The comparison can fail: two heads' names swapped.
    swapped = json.loads(json.dumps(doc))
    a, b = swapped["labels"][0]["label"], swapped["labels"][-1]["label"]
    swapped["labels"][0]["label"], swapped["labels"][-1]["label"] = b, a
    check(a["text"] == b["text"] or differences(shipped, swapped),
          "with two heads' names swapped the comparison fails")
    with open(SCRIPT, encoding="utf-8") as f:
        check("--write-labels" in f.read(), "scripts/measure_head_labels.sh writes them in one command")
    rules(doc)


def rules(doc):
    rows = {r["phenomenon"]: r for r in doc["table"]["rows"]}
    for l in doc["labels"]:
        for claim in [l["label"], *l["also"]]:
            if claim["kind"] != "causal":
                continue
            row = rows[claim["phenomenon"]]
            cell = next(c for c in row["knocked_out"] if c["name"] == l["name"])
            check(row["learned"] and cell["significant"],
                  f"{l['name']} '{claim['text']}' is causal: {claim['phenomenon']} is learned and its drop without "
                  f"the head significant (p = {cell['p']:.2g})")
        particle = [c for c in [l["label"], *l["also"]] if c["text"] == "particle → noun"]
        needed = any(c["name"] == l["name"] and c["significant"] and r["learned"]
                     for r in doc["table"]["rows"] if r["phenomenon"].startswith("particle ")
                     for c in r["knocked_out"])
        check(not particle or needed, f"{l['name']}: 'particle → noun' only where a particle needs the head")


if __name__ == "__main__":
    main([shipped_equals_fresh])
