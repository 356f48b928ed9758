#!/usr/bin/env python3
"""The documentation names every subcommand the binary has, and none it does not: the
registry is kCommands in app/main.cpp (a new command is one row there). Fails when a
command is missing from README.md's "One example per command" (its example and its row
of the table) or from docs/cli.md's list of commands, or when either names a command
the registry does not have.

usage: test_commands.py REPO_ROOT
"""
import os
import re
import sys


def section(text, title):
    m = re.search(r"^## " + re.escape(title) + r"\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return m.group(1) if m else ""


def main():
    root = sys.argv[1]
    main_cpp = open(os.path.join(root, "app", "main.cpp"), encoding="utf-8").read()
    table = main_cpp[main_cpp.index("kCommands[]"):]
    table = table[:table.index("};")]
    commands = re.findall(r'\{"([a-z-]+)",\s*"', table)
    headless = [c for c in commands if c != "gui"]
    errors = []
    if not headless:
        errors.append("app/main.cpp: no command in kCommands")
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    part = section(readme, "One example per command")
    examples = set(re.findall(r"^mhaviz ([a-z-]+)", part, flags=re.M))
    rows = set(re.findall(r"^\|\s*`mhaviz ([a-z-]+)`", part, flags=re.M))
    cli_md = open(os.path.join(root, "docs", "cli.md"), encoding="utf-8").read()
    listed = set(re.findall(r"^\|\s*`mhaviz ([a-z-]+)`", section(cli_md, "Every command"), flags=re.M))
    for name, found in (("README.md's examples", examples), ("README.md's table of commands", rows),
                        ("docs/cli.md's \"Every command\"", listed)):
        for c in headless:
            if c not in found:
                errors.append(f"{name}: no `mhaviz {c}` (app/main.cpp has the command)")
        for c in sorted(found - set(commands)):
            errors.append(f"{name}: `mhaviz {c}` is not a command of app/main.cpp's kCommands")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"README.md and docs/cli.md name the {len(headless)} commands of app/main.cpp: {', '.join(headless)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
