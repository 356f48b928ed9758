#!/usr/bin/env python3
"""No function of app/ or core/ is longer than 150 lines: a longer one is several ideas
waiting for names (docs/architecture.md). Reads every .cpp and .hpp and measures each
function body from its opening brace to its closing one (lambdas count in the function
that holds them). Fails naming each function over the limit and its length.

    test_function_length.py REPO_ROOT [--list N]   (--list: the N longest, for a look)
"""
import os
import re
import sys

LIMIT = 150
# A definition's head: a name and its parameters, then (after const, noexcept,
# override, a trailing return type or an initialiser list) the body's brace.
HEAD = re.compile(r"(\b[~\w:]+)\s*\([^;{}]*\)\s*(?:const\b|noexcept\b|override\b|final\b|->\s*[\w:<>&*, ]+|\s)*"
                  r"(?::[^;{}]*(?:\{[^{}]*\}[^;{}]*)*)?\{")
NOT_FUNCTIONS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignof", "static_assert"}


def strip(text):
    """Comments, strings and character literals blanked, newlines kept (lines count)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + "\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, lines) of each outermost function body in `text`."""
    i = 0
    while True:
        m = HEAD.search(text, i)
        if not m:
            return
        name = m.group(1).split("::")[-1]
        start = m.end() - 1
        depth, j = 0, start
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            if depth == 0:
                break
            j += 1
        if name in NOT_FUNCTIONS or name.startswith("operator") and False:
            i = m.end()
            continue
        first = text.count("\n", 0, start) + 1
        yield name, first, text.count("\n", start, j) + 1
        i = j + 1


def main():
    root = sys.argv[1]
    listing = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--list" else 0
    found = []
    for top in ("app", "core"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in ("third_party", "build"))
            for f in sorted(files):
                if not f.endswith((".cpp", ".hpp")):
                    continue
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    text = strip(fh.read())
                for name, line, n in functions(text):
                    found.append((n, f"{os.path.relpath(path, root)}:{line}", name))
    found.sort(reverse=True)
    if listing:
        for n, where, name in found[:listing]:
            print(f"{n:5d}  {where}  {name}")
        return 0
    long = [x for x in found if x[0] > LIMIT]
    for n, where, name in long:
        print(f"{where}: {name} is {n} lines (at most {LIMIT}: split it into functions that each do one thing)",
              file=sys.stderr)
    if long:
        return 1
    print(f"{len(found)} functions in app/ and core/, none over {LIMIT} lines (the longest: {found[0][0]}, "
          f"{found[0][2]} at {found[0][1]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
