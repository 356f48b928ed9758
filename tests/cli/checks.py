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


def float32_tol(ref, terms=1, ulps=16, scale=None):
    """The tolerance for comparing a float32 result with a float64 reference `ref`: `ulps`
    units of float32 roundoff of the reference's scale (its largest finite magnitude, or
    `scale` where the error comes from larger values upstream, e.g. a softmax's logits),
    times the square root of the number of terms summed along the way (`terms`: the
    reductions' combined length), the usual growth of rounding error in a sum. Relative to
    scale, it holds on any x86-64 CPU (AVX2 or AVX-512 summation orders alike), while a
    wrong weight, head or position, whose errors are of the values' own size, still fails."""
    if scale is None:
        r = np.abs(np.asarray(ref, dtype=np.float64))
        r = r[np.isfinite(r)]
        scale = float(np.max(r)) if r.size else 0.0
    return ulps * EPS32 * max(float(scale), np.finfo(np.float32).tiny) * float(np.sqrt(max(terms, 1)))


def max_diff(ours, ref):
    """The largest |ours - ref|: inf if the shapes differ, a NaN appears, or an infinity
    (a masked score's -inf) is not matched exactly; matched infinities count as 0."""
    ours, ref = np.asarray(ours, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    if ours.shape != ref.shape:
        return float("inf")
    if not ours.size:
        return 0.0
    inf = np.isinf(ref)
    if not np.array_equal(np.isinf(ours), inf) or not np.array_equal(ours[inf], ref[inf]):
        return float("inf")
    d = np.abs(np.where(inf, 0.0, ours - np.where(inf, 0.0, ref)))
    return float("inf") if np.isnan(d).any() else float(np.max(d))


def tol_ratio(ours, ref, terms=1, ulps=16, scale=None):
    """max_diff as a fraction of float32_tol: at most 1 passes."""
    return max_diff(ours, ref) / float32_tol(ref, terms, ulps, scale)


def close(ours, ref, what, terms=1, ulps=16, scale=None):
    """(ok, message) for float32 `ours` against float64 `ref` within float32_tol; the
    message names the largest difference and the tolerance, so a failure shows how far off
    it is."""
    tol = float32_tol(ref, terms, ulps, scale)
    diff = max_diff(ours, ref)
    return diff <= tol, f"{what}: max |diff| {diff:.2e} (tolerance {tol:.2e}, {diff / tol:.2f} of it)"


def check_close(ours, ref, what, terms=1, ulps=16, scale=None):
    """check() that float32 `ours` equals float64 `ref` within float32_tol; returns the
    largest difference."""
    ok, msg = close(ours, ref, what, terms, ulps, scale)
    check(ok, msg)
    return max_diff(ours, ref)


def assert_close(ours, ref, what, terms=1, ulps=16, scale=None):
    """close() for unittest-style tests: raises AssertionError with the message."""
    ok, msg = close(ours, ref, what, terms, ulps, scale)
    if os.environ.get("MHAVIZ_TOL_VERBOSE"):
        print(("ok    " if ok else "FAIL  ") + msg, file=sys.stderr)
    assert ok, msg


def main(checks):
    """Runs every fn(mhaviz, tmp) of `checks` in order; exits 0 only if every check passed."""
    mhaviz = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        for fn in checks:
            fn(mhaviz, tmp)
    print(f"{len(FAILURES)} check(s) failed" if FAILURES else "all checks passed")
    sys.exit(1 if FAILURES else 0)
