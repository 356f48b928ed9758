#!/usr/bin/env python3
"""The Korean translation is complete and follows the glossary.

  test_po.py complete SOURCE_DIR   every _() / N_() / P_() string of app/ is in po/ko.po,
                                   translated, not fuzzy (xgettext + msgmerge + msgfmt
                                   --statistics, as the mhaviz-pot target runs them)
  test_po.py glossary SOURCE_DIR   every po/GLOSSARY.md term that a msgid uses appears in
                                   its msgstr as the glossary writes it
  test_po.py selftest SOURCE_DIR   both checks fail on a catalogue that breaks them
"""
import os
import re
import subprocess
import sys
import tempfile

XGETTEXT_ARGS = ["--from-code=UTF-8", "--language=C++", "-k_", "-kN_", "-kP_:1,2", "--no-wrap"]


def sources(root):
    out = []
    for d, _dirs, files in os.walk(os.path.join(root, "app")):
        out += [os.path.join(d, f) for f in files if f.endswith((".cpp", ".hpp"))]
    return sorted(out)


def check_complete(root, po_path, tmp):
    pot = os.path.join(tmp, "now.pot")
    subprocess.run(["xgettext", *XGETTEXT_ARGS, "-o", pot, *sources(root)], check=True)
    merged = os.path.join(tmp, "merged.po")
    subprocess.run(["msgmerge", "--quiet", "--no-fuzzy-matching", "-o", merged, po_path, pot], check=True)
    r = subprocess.run(["msgfmt", "--check", "--statistics", "-o", os.devnull, merged],
                       capture_output=True, text=True)
    stats = (r.stdout + r.stderr).strip()
    problems = []
    if r.returncode != 0:
        problems.append("msgfmt --check failed: " + stats)
    if "untranslated" in stats or "fuzzy" in stats:
        problems.append("not complete: " + stats)
    # Name the strings, so the fix is obvious.
    missing = [e for e in parse_po(merged) if e["msgid"] and (e["fuzzy"] or not all(e["msgstr"]))]
    for e in missing[:20]:
        problems.append("  needs a translation: %r%s" % (e["msgid"], " (fuzzy)" if e["fuzzy"] else ""))
    return problems, stats


def unquote(s):
    return bytes(s, "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8")


def parse_po(path):
    entries, cur, key = [], None, None
    for line in open(path, encoding="utf-8").read().split("\n") + [""]:
        if not line.strip():
            if cur is not None:
                entries.append(cur)
            cur, key = None, None
            continue
        if cur is None:
            cur = {"msgid": "", "plural": None, "msgstr": [""], "fuzzy": False, "obsolete": False}
        if line.startswith("#~"):
            cur["obsolete"] = True
            continue
        if line.startswith("#,") and "fuzzy" in line:
            cur["fuzzy"] = True
        if line.startswith("#"):
            continue
        m = re.match(r'^(msgid|msgid_plural|msgstr(?:\[(\d+)\])?) "(.*)"$', line)
        if m:
            kind, idx, text = m.group(1), m.group(2), unquote(m.group(3))
            if kind == "msgid":
                key = ("msgid", None)
                cur["msgid"] = text
            elif kind == "msgid_plural":
                key = ("plural", None)
                cur["plural"] = text
            else:
                i = int(idx or 0)
                while len(cur["msgstr"]) <= i:
                    cur["msgstr"].append("")
                key = ("msgstr", i)
                cur["msgstr"][i] = text
            continue
        m = re.match(r'^"(.*)"$', line)
        if m and key:
            text = unquote(m.group(1))
            if key[0] == "msgstr":
                cur["msgstr"][key[1]] += text
            else:
                cur[key[0]] += text
    return [e for e in entries if not e["obsolete"]]


def parse_glossary(path):
    """Rows of the table: | English | Korean | why |. Korean may list alternatives
    separated by ' / ' (any one must appear)."""
    terms = []
    for line in open(path, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not line.startswith("|") or cells[0] in ("English", "") or set(cells[0]) <= set("-: "):
            continue
        english = cells[0].strip("`")
        korean = [k.strip().strip("`") for k in cells[1].split(" / ")]
        terms.append((english, korean))
    # Longest first: "multi-head attention" is checked before "attention" and "head".
    return sorted(terms, key=lambda t: -len(t[0]))


def check_glossary(po_path, glossary_path):
    terms = parse_glossary(glossary_path)
    problems = []
    for e in parse_po(po_path):
        if not e["msgid"] or e["fuzzy"]:
            continue
        # The visible part only: an ImGui id after "##" is not text.
        source = e["msgid"].split("##")[0] + " " + (e["plural"] or "").split("##")[0]
        source = re.sub(r"%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z]+", " ", source)
        target = " ".join(e["msgstr"])
        for english, korean in terms:
            pat = re.compile(r"(?<![\w-])" + re.escape(english) + r"(?:s|es)?(?![\w])", re.IGNORECASE)
            if not pat.search(source):
                continue
            if not any(k.lower() in target.lower() for k in korean):
                problems.append("%r uses %r but its translation %r has none of %s" % (e["msgid"], english, target, korean))
            source = pat.sub(" ", source)  # a longer term's words are not checked again
    return problems, len(terms)


def main():
    mode, root = sys.argv[1], sys.argv[2]
    po_path = os.path.join(root, "po", "ko.po")
    glossary = os.path.join(root, "po", "GLOSSARY.md")
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "complete":
            problems, stats = check_complete(root, po_path, tmp)
            print("po/ko.po against the sources:", stats)
        elif mode == "glossary":
            problems, n = check_glossary(po_path, glossary)
            print("po/GLOSSARY.md: %d terms" % n)
        elif mode == "selftest":
            # A catalogue with one string untranslated, one fuzzy and one against the
            # glossary: each check must notice.
            bad = os.path.join(tmp, "bad.po")
            text = open(po_path, encoding="utf-8").read()
            entries = [e for e in parse_po(po_path) if e["msgid"] and e["plural"] is None]
            victim = entries[0]["msgid"]
            esc = victim.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
            text = re.sub(r'(msgid "%s"\nmsgstr )"[^\n]*"' % re.escape(esc), r'\1""', text, count=1)
            open(bad, "w", encoding="utf-8").write(text)
            p1, _ = check_complete(root, bad, tmp)
            g = os.path.join(tmp, "g.md")
            open(g, "w", encoding="utf-8").write("| English | Korean | why |\n|---|---|---|\n| head | XYZ-not-used | test |\n")
            p2, _ = check_glossary(po_path, g)
            problems = []
            if not p1:
                problems.append("the completeness check passed a catalogue with %r untranslated" % victim)
            if not p2:
                problems.append("the glossary check passed a glossary term the translation never uses")
            print("self-test: completeness found %d problems, glossary %d" % (len(p1), len(p2)))
        else:
            sys.exit("unknown mode " + mode)
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
