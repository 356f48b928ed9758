#!/usr/bin/python3
"""The C++ of app/, core/ and tests/ is formatted with the repository's .clang-format
(clang-format --dry-run -Werror). A file that is not fails the test, named, with the
command that formats it.

    test_format.py SOURCE_DIR
"""
import os
import shutil
import subprocess
import sys


def sources(root):
    for top in ("app", "core", "tests"):
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x not in ("third_party", "build"))
            for f in sorted(files):
                if f.endswith((".cpp", ".hpp", ".h", ".cc")):
                    yield os.path.join(d, f)


def main():
    root = os.path.abspath(sys.argv[1])
    tool = shutil.which("clang-format")
    if not tool:
        print("clang-format is not installed (Debian: clang-format; scripts/setup.sh test installs it)")
        return 1
    files = list(sources(root))
    bad = []
    for i in range(0, len(files), 64):
        chunk = files[i:i + 64]
        r = subprocess.run([tool, "--dry-run", "-Werror", "--style=file"] + chunk, cwd=root, capture_output=True,
                           text=True)
        if r.returncode != 0:
            bad += sorted({line.split(":")[0] for line in r.stderr.splitlines() if ": error:" in line})
    if bad:
        print(f"{len(bad)} of {len(files)} files are not formatted as .clang-format says:")
        for f in bad:
            print("  " + os.path.relpath(f, root))
        print("Format them with: clang-format -i --style=file FILE ...")
        return 1
    print(f"{len(files)} files formatted as .clang-format says")
    return 0


if __name__ == "__main__":
    sys.exit(main())
