#!/usr/bin/python3
"""The coefficients of core/src/gelu.hpp's Phi, reproducibly.

For x >= 0, Phi(-x) = erfc(x / sqrt 2) / 2 = exp(-x^2 / 2) * t * Q(t) / 2 with
t = 1 / (1 + K x) (the form of Numerical Recipes' erfcc), for x in [0, XMAX]: past
XMAX, exp(-x^2 / 2) is below float's smallest denormal. Q is smooth on [t(XMAX), 1],
so a polynomial in u = 1 - A (1 - t) fits it (u in [-1, 1]; A as a float, so the fit
is of the map the C++ runs, which computes 1 - t as K x t: small, and so precise,
where Q is steepest, near x = 0): a Chebyshev least-squares fit in double, printed as the power-series
coefficients in u that the C++ evaluates by Horner's rule, with the fit's largest
relative error.

usage: /usr/bin/python3 scripts/fit_gelu.py
"""
import math

import numpy as np
from numpy.polynomial import chebyshev as C

K, XMAX, DEGREE = 7.0 / 32.0, 15.0, 10


def q_exact(t):
    z = (1.0 / t - 1.0) / K / math.sqrt(2.0)  # x / sqrt 2
    return math.erfc(z) * math.exp(z * z) / t  # erfcx(z) / t, in double


def main():
    tmin = 1.0 / (1.0 + K * XMAX)
    a = float(np.float32(2.0 / (1.0 - tmin)))
    n = 4000
    u = np.cos(np.pi * (np.arange(n) + 0.5) / n)  # Chebyshev nodes
    c = C.chebfit(u, np.array([q_exact(1.0 - (1.0 - x) / a) for x in u]), DEGREE)
    uu = np.linspace(-1.0, 1.0, 100001)
    err = max(abs(C.chebval(x, c) / q_exact(1.0 - (1.0 - x) / a) - 1.0) for x in uu)
    print(f"K = 7/32, XMAX = {XMAX}, degree {DEGREE}: largest relative error of the fit {err:.2e}")
    print(f"u = 1 - A (1 - t): A = {a:.9e}f")
    print("Q(u), highest power first:")
    for x in reversed(C.cheb2poly(c)):
        print(f"  {x:.9e}f")


if __name__ == "__main__":
    main()
