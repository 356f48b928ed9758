#!/usr/bin/env python3
"""app/gui's folders form layers: a file includes from its own folder or from a folder
below it, never from one above (docs/architecture.md). Fails on an include that runs
back up, an include of a file that does not exist, a folder not placed in a layer, and
the GUI including or linking the CLI's subcommands (app/cli).

usage: test_gui_layers.py REPO_ROOT
"""
import os
import re
import sys

# Bottom to top. A folder may include from itself and from the folders before it.
LAYERS = ["style", "state", "draw", "sources", "panels", "views", "automation", "main"]

INCLUDE = re.compile(r'^\s*#\s*include\s+"gui/([^"]+)"')
# The app does not reach into the command line's subcommands: what both need lives in
# options/, io/, lm/, text/ or render/.
CLI_INCLUDE = re.compile(r'^\s*#\s*include\s+"cli/([^"]+)"')


def main():
    root = os.path.join(sys.argv[1], "app", "gui")
    rank = {name: i for i, name in enumerate(LAYERS)}
    errors = []
    for name in sorted(os.listdir(root)):
        if os.path.isdir(os.path.join(root, name)) and name not in rank:
            errors.append(f"app/gui/{name}/ is in no layer: add it to LAYERS (and to docs/architecture.md)")
    for folder, _, files in os.walk(root):
        for f in sorted(files):
            if not f.endswith((".cpp", ".hpp", ".h")):
                continue
            path = os.path.join(folder, f)
            rel = os.path.relpath(path, root)
            if os.sep not in rel:
                errors.append(f"app/gui/{rel}: a file directly in app/gui belongs in one of its folders")
                continue
            mine = rel.split(os.sep)[0]
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    if CLI_INCLUDE.match(line):
                        errors.append(f"app/gui/{rel}:{n}: includes {line.strip()[9:]}: the GUI does not use the CLI's "
                                      "subcommands (shared code belongs in options/, io/, lm/, text/ or render/)")
                        continue
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = m.group(1)
                    theirs = target.split("/")[0]
                    where = f"app/gui/{rel}:{n}"
                    if not os.path.exists(os.path.join(root, target)):
                        errors.append(f"{where}: includes gui/{target}, which does not exist")
                    elif theirs not in rank:
                        errors.append(f"{where}: includes gui/{target}, outside every layer")
                    elif mine in rank and rank[theirs] > rank[mine]:
                        errors.append(f"{where}: {mine}/ includes gui/{target}, from {theirs}/ above it "
                                      f"(layers, bottom to top: {' -> '.join(LAYERS)})")
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as fh:
        if re.search(r"\bmha_cli\b", re.sub(r"#.*", "", fh.read())):
            errors.append("app/gui/CMakeLists.txt links mha_cli: the GUI does not link the CLI's subcommands")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"app/gui: every include runs down the layers {' -> '.join(LAYERS)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
