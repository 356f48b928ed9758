#!/usr/bin/env python3
"""The app's state has one path, Choice -> the one recompute -> Result -> view
(docs/architecture.md, app/gui/state/app_state.hpp), and one background task type
(app/gui/state/task.hpp). This test reads the sources and fails on:

  - a view's file (app/gui/views/, the registry aside) that reads a part of AppState
    other than `choice`, `result`, `ui`, `dirty` and its own entry of the ViewStore:
    `views.Get<T>()` / `views.Find<T>()` with a T declared in the view's own file (or,
    for a view in a folder, the folder's files);
  - a view that writes the Result (`s.result.x = ...`): views write only the Choice and
    their own state;
  - a view that keeps state in a function-local or file-level static instead of the
    ViewStore;
  - a worker of app/gui that is not a Task: std::thread, std::async, std::future or
    std::condition_variable anywhere but in state/task.hpp.

usage: test_gui_state.py REPO_ROOT
"""
import os
import re
import sys

ALLOWED = {"choice", "result", "ui", "views", "dirty"}
# The registry is the views' table, not a view: it reads the choice and the ui only,
# and it is checked like a view below anyway, with the views' own types out of reach.
NOT_A_VIEW = {"registry.hpp", "registry.cpp", "dump.hpp"}
STATE_PARAM = re.compile(r"\bAppState\s*&\s*(\w+)")
STORE_USE = re.compile(r"\bviews\s*\.\s*(?:Get|Find)\s*<\s*([\w:]+)\s*>")
DECLARED = re.compile(r"^\s*(?:struct|class)\s+(\w+)\b(?!\s*;)", re.M)
STATIC_STATE = re.compile(r"^\s*static\s+(?!const\b|constexpr\b|inline\b)[\w:<>,\s]+?\b\w+\s*(?:;|=|\{)", re.M)
WORKER = re.compile(r"\bstd::(thread(?!::hardware_concurrency)|async|future|condition_variable|jthread)\b")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def bodies(text):
    """(name, body, offset) for each function taking an AppState& parameter `name`."""
    for m in STATE_PARAM.finditer(text):
        depth, close = 0, text.find(")", m.end())
        start = text.find("{", close)
        semi = text.find(";", close)
        if start < 0 or (0 <= semi < start):
            continue  # a declaration
        for i in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                yield m.group(1), text[start:i], start
                break


def view_units(views_root):
    """Each view's files: a file directly in views/ (with its header), or a folder."""
    units = {}
    for name in sorted(os.listdir(views_root)):
        path = os.path.join(views_root, name)
        if os.path.isdir(path):
            files = [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith((".cpp", ".hpp"))]
            units[name + "/"] = sorted(files)
        elif name.endswith((".cpp", ".hpp")) and name not in NOT_A_VIEW:
            units.setdefault(os.path.splitext(name)[0], []).append(path)
    return units


def check_unit(unit, files, root, errors):
    texts = {f: strip_comments(open(f, encoding="utf-8").read()) for f in files}
    declared = set()
    for t in texts.values():
        declared.update(DECLARED.findall(t))
    for f, t in texts.items():
        rel = os.path.relpath(f, root)
        seen = set()
        for name, body, at in bodies(t):
            for m in re.finditer(rf"\b{name}\s*\.\s*(\w+)", body):
                field = m.group(1)
                line = t.count("\n", 0, at + m.start()) + 1
                if field not in ALLOWED and (line, field) not in seen:
                    seen.add((line, field))
                    errors.append(f"{rel}:{line}: reads {name}.{field}: a view reads only {name}.choice, "
                                  f"{name}.result, {name}.ui and its own {name}.views entry")
            for m in re.finditer(rf"\b{name}\s*\.\s*result\b[\w.\[\]()>-]*?\s*(?:[-+*/]?=(?!=)|\.push_back\b|"
                                 rf"\.clear\(\))", body):
                line = t.count("\n", 0, at + m.start()) + 1
                errors.append(f"{rel}:{line}: writes {name}.result: only the recompute writes the Result; a view "
                              "writes the Choice and its own state")
        for m in STORE_USE.finditer(t):
            typ = m.group(1).split("::")[-1]
            if typ not in declared:
                line = t.count("\n", 0, m.start()) + 1
                errors.append(f"{rel}:{line}: uses views.{'Get' if 'Get' in m.group(0) else 'Find'}<{typ}>, which "
                              f"{unit} does not declare: a view keeps its own state, declared in its own file")
        for m in STATIC_STATE.finditer(t):
            line = t.count("\n", 0, m.start()) + 1
            errors.append(f"{rel}:{line}: a static ({m.group(0).strip()}): a view's state goes in its ViewStore "
                          "entry, made per AppState")


def main():
    root = sys.argv[1]
    gui = os.path.join(root, "app", "gui")
    errors = []
    for unit, files in view_units(os.path.join(gui, "views")).items():
        check_unit(unit, files, root, errors)
    for d, _, files in os.walk(gui):
        for f in sorted(files):
            path = os.path.join(d, f)
            rel = os.path.relpath(path, root)
            if not f.endswith((".cpp", ".hpp")) or rel == os.path.join("app", "gui", "state", "task.hpp"):
                continue
            t = strip_comments(open(path, encoding="utf-8").read())
            for m in WORKER.finditer(t):
                line = t.count("\n", 0, m.start()) + 1
                errors.append(f"{rel}:{line}: std::{m.group(1)}: every worker of the app is a Task<T> "
                              "(state/task.hpp): its snapshot, cancel, generation, result and progress")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"{len(errors)} problem(s)", file=sys.stderr)
        return 1
    print("app/gui: views read Choice, Result, Ui and their own state; every worker is a Task")
    return 0


if __name__ == "__main__":
    sys.exit(main())
