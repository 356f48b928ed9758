#!/usr/bin/env python3
"""The documentation names every subcommand the binary has, and no other: `mhaviz --help`
(the registry in app/main.cpp) against README.md's command table and its "One example per
command" block, and docs/cli.md's list of where each command is documented. Fails on a
command missing from the docs, and on a command the docs list that the binary does not
have.

usage: test_commands.py MHAVIZ REPO_ROOT
"""
import re
import subprocess
import sys


def section(text, title):
    m = re.search(r"^## " + re.escape(title) + r"\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return m.group(1) if m else ""


def main():
    mhaviz, root = sys.argv[1], sys.argv[2]
    out = subprocess.run([mhaviz, "--help"], capture_output=True, text=True, timeout=60).stdout
    registry = set(re.findall(r"^  mhaviz (?:\[)?([a-z]+)", out, flags=re.M)) - {"--help"}
    errors = []
    if len(registry) < 5:
        errors.append(f"mhaviz --help lists only {sorted(registry)}")
    with open(f"{root}/README.md", encoding="utf-8") as f:
        readme = f.read()
    table = set(re.findall(r"^\| `mhaviz(?: ([a-z]+))?`", readme, flags=re.M))
    table |= set(re.findall(r"^\| `mhaviz`, `mhaviz ([a-z]+)`", readme, flags=re.M))
    table.discard("")
    examples = set(re.findall(r"^mhaviz ([a-z]+)", section(readme, "One example per command"), flags=re.M))
    with open(f"{root}/docs/cli.md", encoding="utf-8") as f:
        cli = f.read()
    listed = set(re.findall(r"`mhaviz ([a-z]+)`", cli))
    # A build without the GUI (-DMHAVIZ_GUI=OFF) has no `gui`; the docs still describe it.
    optional = {"gui"} - registry
    for name, found in (("README.md's command table", table), ("README.md's examples", examples),
                        ("docs/cli.md", listed)):
        found = found - optional
        for c in sorted(registry - found):
            errors.append(f"{name} does not name `mhaviz {c}`")
        for c in sorted(found - registry):
            errors.append(f"{name} names `mhaviz {c}`, which mhaviz --help does not list")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"{len(registry)} commands, each in README.md's table and examples and in docs/cli.md: {sorted(registry)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
