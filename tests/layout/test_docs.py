#!/usr/bin/env python3
"""The documentation holds together: every relative link in README.md and docs/*.md
points at a file or folder that exists (and, for a link to a heading of a Markdown
file, at a heading that exists); README's layout section names every folder under
app/ and core/; docs/architecture.md names every folder of app/gui.

usage: test_docs.py REPO_ROOT
"""
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as '-'."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(path):
    with open(path, encoding="utf-8") as f:
        text = re.sub(r"```.*?```", "", f.read(), flags=re.S)
    return {slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, flags=re.M)}


def section(text, title):
    m = re.search(r"^## " + re.escape(title) + r"\s*$(.*?)(?=^## |\Z)", text, flags=re.M | re.S)
    return m.group(1) if m else ""


def main():
    root = sys.argv[1]
    errors = []
    docs = os.path.join(root, "docs")
    pages = [os.path.join(root, "README.md")]
    if os.path.isdir(docs):
        pages += sorted(os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md"))
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = re.sub(r"```.*?```", "", f.read(), flags=re.S)  # links in code blocks are examples
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            where = os.path.relpath(page, root)
            if not os.path.exists(full):
                errors.append(f"{where}: the link to {target} points at nothing ({os.path.relpath(full, root)})")
            elif anchor and full.endswith(".md") and anchor not in anchors(full):
                errors.append(f"{where}: the link to {target}: {os.path.relpath(full, root)} has no heading #{anchor}")

    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        layout = section(f.read(), "Layout")
    if not layout:
        errors.append("README.md has no '## Layout' section")
    for top in ("app", "core"):
        for name in sorted(os.listdir(os.path.join(root, top))):
            if os.path.isdir(os.path.join(root, top, name)) and f"`{top}/{name}/`" not in layout:
                errors.append(f"README.md's Layout does not name `{top}/{name}/`")
    arch = os.path.join(docs, "architecture.md")
    with open(arch, encoding="utf-8") as f:
        arch_text = f.read()
    gui = os.path.join(root, "app", "gui")
    for name in sorted(os.listdir(gui)):
        if os.path.isdir(os.path.join(gui, name)) and f"`{name}/`" not in arch_text:
            errors.append(f"docs/architecture.md does not describe app/gui's `{name}/`")

    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 1
    print(f"{len(pages)} pages: every relative link resolves; the layout names every folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
