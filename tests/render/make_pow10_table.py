#!/usr/bin/env python3
"""The 64-bit powers of ten of lib/src/render/shortest_float.cpp (Schubfach, float32).

For e in [-31, 45]: g(e) = floor(10^e / 2^r) + 1 with r = floor(log2(10^e)) - 63, so that
2^63 < g(e) <= 2^64 - 1: 10^e rounded up to 64 significant bits. Exact integer arithmetic.
Also checks the shift-and-multiply logarithms the C++ uses over the ranges it uses them.
  python3 tests/render/make_pow10_table.py   (prints the C++ table)
"""
from fractions import Fraction
import math


def floor_log(base, x):  # floor(log_base(x)), x a positive Fraction, exactly
    n = 0
    while Fraction(base) ** n > x:
        n -= 1
    while Fraction(base) ** (n + 1) <= x:
        n += 1
    return n


def g(e):
    p = Fraction(10) ** e
    r = floor_log(2, p) - 63
    v = math.floor(p / Fraction(2) ** r) + 1
    assert 2**63 < v < 2**64
    return v


for q in range(-149, 105):  # the float exponents
    assert (q * 661971961083) >> 41 == floor_log(10, Fraction(2) ** q), q
    assert (q * 661971961083 - 274743187321) >> 41 == floor_log(10, Fraction(3, 4) * Fraction(2) ** q), q
for e in range(-31, 46):
    assert (e * 913124641741) >> 38 == floor_log(2, Fraction(10) ** e), e

print("// g(e) for e = -31 ... 45: tests/render/make_pow10_table.py")
rows = [f"0x{g(e):016x}" for e in range(-31, 46)]
for i in range(0, len(rows), 4):
    print("    " + ", ".join(rows[i:i + 4]) + ",")
