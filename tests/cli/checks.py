"""What the check-list CLI tests share: `check` prints each check and remembers the
failures, and `main` runs the script's checks with the mhaviz binary (argv[1]) and a
temporary directory, then exits 1 if any failed."""
import os
import sys
import tempfile

FAILURES = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILURES.append(what)


def main(checks):
    """Runs every fn(mhaviz, tmp) of `checks` in order; exits 0 only if every check passed."""
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        for fn in checks:
            fn(mhaviz, tmp)
    print(f"{len(FAILURES)} check(s) failed" if FAILURES else "all checks passed")
    sys.exit(1 if FAILURES else 0)
