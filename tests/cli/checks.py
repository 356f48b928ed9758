"""What the check-list CLI tests share: `check` prints each check and remembers the
failures, and `main` runs the script's checks with the mhaviz binary (argv[1]) and a
temporary directory, then exits 1 if any failed."""
import os
import sys
import tempfile

import numpy as np

# float32's unit roundoff: a float32 result carries errors of a few of these times the
# size of what it sums, whichever order (AVX2's 8 lanes or AVX-512's 16) it sums in.
EPS32 = float(np.finfo(np.float32).eps)

FAILURES = []


def check(ok, what):
    print(("ok    " if ok else "FAIL  ") + what)
    if not ok:
        FAILURES.append(what)


def float32_tol(ref, terms=1, ulps=16):
    """The tolerance for comparing a float32 result with a float64 reference `ref`: `ulps`
    units of float32 roundoff of the reference's scale (its largest magnitude), times the
    square root of the number of terms summed along the way (`terms`: the reductions'
    combined length), the usual growth of rounding error in a sum. Relative to scale, it
    holds on any x86-64 CPU (AVX2 or AVX-512 summation orders alike), while a wrong
    weight, head or position, whose errors are of the values' own size, still fails."""
    scale = float(np.max(np.abs(np.asarray(ref, dtype=np.float64)))) if np.size(ref) else 0.0
    return ulps * EPS32 * max(scale, np.finfo(np.float32).tiny) * float(np.sqrt(max(terms, 1)))


def check_close(ours, ref, what, terms=1, ulps=16):
    """check() that float32 `ours` equals float64 `ref` within float32_tol; prints the
    largest difference and the tolerance, so a failure shows how far off it is."""
    ours, ref = np.asarray(ours, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    tol = float32_tol(ref, terms, ulps)
    same_shape = ours.shape == ref.shape
    diff = float(np.max(np.abs(ours - ref))) if same_shape and ours.size else (0.0 if same_shape else float("inf"))
    check(same_shape and diff <= tol, f"{what}: max |diff| {diff:.2e} (tolerance {tol:.2e})")
    return diff


def main(checks):
    """Runs every fn(mhaviz, tmp) of `checks` in order; exits 0 only if every check passed."""
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        for fn in checks:
            fn(mhaviz, tmp)
    print(f"{len(FAILURES)} check(s) failed" if FAILURES else "all checks passed")
    sys.exit(1 if FAILURES else 0)
