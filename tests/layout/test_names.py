#!/usr/bin/env python3
"""Names that say what a file is (docs/architecture.md):

  - a view's tab, its --view name, its file (app/gui/views/NAME.cpp, or the folder
    app/gui/views/NAME/ with NAME.cpp in it) and its GUI test scripts
    (tests/gui/NAME_test.py, or NAME_*_test.py) share one name: the tab's English label in
    lower case, '-' between words ('_' in file names). The registry's comment on each line
    of MHAVIZ_VIEWS names the file;
  - every script of tests/gui is a view's or one of the few that test the window as a
    whole (CROSS_CUTTING);
  - no two files of app/ share a base name (a header and its source in one folder are one
    file), so a name found in a log or an include is found once.

usage: test_names.py REPO_ROOT
"""
import os
import re
import sys

CROSS_CUTTING = {"window", "lm", "i18n", "projector", "worker"}
REGISTRY_LINE = re.compile(r"X\((\w+)\)\s*/\*\s*(views/[\w/.]+)\s*\*/")


def view_entries(gui):
    """{entry function: (name, tab, file)} from every view's file."""
    out = {}
    for d, _, files in os.walk(os.path.join(gui, "views")):
        for f in files:
            if not f.endswith(".cpp"):
                continue
            path = os.path.join(d, f)
            text = open(path, encoding="utf-8").read()
            for m in re.finditer(r"ViewEntry\s+(\w+)\(\)\s*\{\s*ViewEntry\s+v\{\s*\"([^\"]+)\",\s*N_\(\"([^\"]+)\"\)", text):
                out[m.group(1)] = (m.group(2), m.group(3), os.path.relpath(path, gui))
    return out


def main():
    root = sys.argv[1]
    gui = os.path.join(root, "app", "gui")
    errors = []
    registry = open(os.path.join(gui, "views", "registry.cpp"), encoding="utf-8").read()
    lines = REGISTRY_LINE.findall(registry)
    if not lines:
        errors.append("app/gui/views/registry.cpp: no line X(NameView) /* views/... */ in MHAVIZ_VIEWS")
    entries = view_entries(gui)
    names = set()
    for fn, comment in lines:
        if fn not in entries:
            errors.append(f"registry: {fn} has no `ViewEntry {fn}() {{ ViewEntry v{{\"name\", N_(\"Tab\"), ...` in views/")
            continue
        name, tab, path = entries[fn]
        names.add(name)
        file_name = name.replace("-", "_")
        if tab.lower().replace(" ", "-") != name:
            errors.append(f"{path}: the tab '{tab}' and --view {name} differ: one name for both")
        if path not in (os.path.join("views", file_name + ".cpp"), os.path.join("views", file_name, file_name + ".cpp")):
            errors.append(f"{path}: --view {name}'s file is views/{file_name}.cpp or views/{file_name}/{file_name}.cpp")
        if not (comment == path or comment.rstrip("/") == os.path.dirname(path)):
            errors.append(f"registry.cpp: {fn}'s comment says {comment}, its file is {path}")
    tests = os.path.join(root, "tests", "gui")
    prefixes = sorted((n.replace("-", "_") for n in names), key=len, reverse=True)
    for f in sorted(os.listdir(tests)):
        if not f.endswith("_test.py"):
            continue
        stem = f[: -len("_test.py")]
        if stem in CROSS_CUTTING or any(stem == p or stem.startswith(p + "_") for p in prefixes):
            continue
        errors.append(f"tests/gui/{f}: a GUI test script is named after its view (VIEW_test.py) or is one of "
                      f"{', '.join(sorted(CROSS_CUTTING))}")
    seen = {}
    for top in ("app",):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs.sort()
            for f in sorted(files):
                if not f.endswith((".cpp", ".hpp", ".h")):
                    continue
                base = os.path.splitext(f)[0]
                where = os.path.relpath(d, root)
                if base in seen and seen[base] != where:
                    errors.append(f"{where}/{f} and {seen[base]}/{base}.*: two files of app/ share the name '{base}'")
                seen.setdefault(base, where)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"{len(lines)} views: tab, --view, file and tests share one name; app/'s {len(seen)} file names are unique")
    return 0


if __name__ == "__main__":
    sys.exit(main())
