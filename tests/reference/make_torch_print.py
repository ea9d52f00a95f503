"""PyTorch's print(t) text for many tensors: the reference for --format torch.

Run it with Debian's Python, which has torch 1.13 (the `python3` on PATH may not):

    /usr/bin/python3 tests/reference/make_torch_print.py          # from the repository root

It writes tests/reference/torch_print.json next to this script, replacing the old one. The
output is committed, so the C++ test (tests/test_render_torch.cpp) never needs torch: rerun
this script only when a case changes.

The values are drawn with NumPy's legacy RandomState (the same numbers on every machine,
unlike torch.randn, whose vectorised kernel depends on the CPU), cast to float32, and then
printed by torch itself with torch.set_printoptions(precision, threshold, sci_mode).

File format: a JSON list, one case per line:
    {"name": ..., "shape": [...], "dtype": "float32" | "bool",
     "values": [flat, row-major],
     "options": {"precision": 4, "sci_mode": null | true | false, "full": false},
     "text": str(t)}
Floats are float32 values written with repr(float(v)), so they read back exactly; non-finite
values are the strings "-inf", "inf", "nan"; booleans are true/false. "full" means
threshold=inf (never summarise); otherwise the threshold is PyTorch's default, 1000.
"""

import json
import math
import os

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_PATH = os.path.join(HERE, "torch_print.json")

INF = float("inf")
NAN = float("nan")

CASES = []  # (name, tensor, options)


def case(name, t, precision=4, sci_mode=None, full=False):
    assert all(name != c[0] for c in CASES), name
    CASES.append((name, t, {"precision": precision, "sci_mode": sci_mode, "full": full}))


def randn(seed, *shape, scale=1.0):
    """float32 normals, the same on every machine."""
    v = np.random.RandomState(seed).standard_normal(shape) * scale
    return torch.from_numpy(v.astype(np.float32))


def f32(values):
    return torch.tensor(values, dtype=torch.float32)


def counting(*shape, start=0.0, step=1.0):
    n = math.prod(shape)
    return (torch.arange(n, dtype=torch.float64) * step + start).to(torch.float32).view(*shape)


def causal(b, sq, sk):
    i = torch.arange(sq).view(1, 1, sq, 1)
    j = torch.arange(sk).view(1, 1, 1, sk)
    return (j <= i).expand(b, 1, sq, sk).contiguous()


def with_value(t, index, value):
    t[index] = value
    return t


def masked_scores(seed, b, h, sq, sk, fill=-INF):
    """scaled scores with `fill` above the diagonal, as the masked stage holds them."""
    s = randn(seed, b, h, sq, sk, scale=0.5)
    return s.masked_fill(~causal(b, sq, sk), fill)


def softmax_rows_nan(seed, b, h, sq, sk, dead_rows):
    """softmax weights where `dead_rows` (queries with no allowed key) are NaN."""
    s = randn(seed, b, h, sq, sk)
    keep = torch.ones(b, 1, sq, sk, dtype=torch.bool)
    keep[:, :, dead_rows, :] = False
    return torch.softmax(s.masked_fill(~keep, -INF), dim=-1)


# ----------------------------------------------------------------------------
# the cases

# classroom tensors: randn and the attention stages of small runs
case("randn_1x3x8", randn(1, 1, 3, 8))
case("randn_2x4x5x5", randn(2, 2, 4, 5, 5))
case("randn_2x5x8", randn(3, 2, 5, 8))
case("randn_8x8_weight", randn(4, 8, 8, scale=0.35))
case("randn_bias_8", randn(5, 8, scale=0.35))
case("randn_4", randn(6, 4))
case("randn_2x3", randn(7, 2, 3))
case("softmax_2x4x5x5", torch.softmax(randn(8, 2, 4, 5, 5), dim=-1))
case("masked_causal_neginf_1x2x4x4", masked_scores(9, 1, 2, 4, 4))
case("masked_causal_neg1e9_1x2x4x4", masked_scores(10, 1, 2, 4, 4, fill=-1e9))
case("softmax_causal_1x2x4x4", torch.softmax(masked_scores(11, 1, 2, 4, 4), dim=-1))
case("softmax_nan_rows_2x1x3x3", softmax_rows_nan(12, 2, 1, 3, 3, [2]))
case("softmax_all_nan_1x1x2x3", softmax_rows_nan(13, 1, 1, 2, 3, [0, 1]))
case("randn_1x1x1x1", randn(14, 1, 1, 1, 1))
case("randn_1x5", randn(15, 1, 5))
case("randn_5x1", randn(16, 5, 1))
case("randn_3x1x2", randn(17, 3, 1, 2))
case("randn_1x1x3x3", randn(18, 1, 1, 3, 3))
case("randn_1", randn(19, 1))

# magnitudes and signs
case("small_1e-6", randn(20, 2, 3, scale=1e-6))
case("large_1e9", randn(21, 2, 3, scale=1e9))
case("mixed_signs", f32([[0.5, -1.25, 2.0], [-0.0625, 3.125, -0.75]]))
case("all_negative", -randn(22, 3, 4).abs())
case("all_positive_small_ratio", f32([0.0011, 0.5, 1.0]))
case("ratio_over_1000", f32([0.001, 2.0]))
case("ratio_float32_0_001_to_1", f32([0.001, 1.0]))  # float32 0.001 > 1e-3: ratio < 1000
case("min_below_1e-4", f32([0.00005, 0.001]))
case("min_float32_1e-4", f32([1e-4, 0.5]))  # float32 1e-4 is just below 1e-4
case("max_1e8_integer", f32([1e8, 3.0]))  # ratio > 1000 anyway
case("max_just_above_1e8", f32([1.0000001e8, 2e8]))
case("max_1e8_alone", f32([1e8, 5e7]))  # integers, max not above 1e8: int mode
case("rounds_up_to_10", f32([9.99996, -1.5]))
case("round_half_even_p2", f32([0.125, 0.375, -0.625]), precision=2)
case("float32_max_and_denormal", f32([3.4e38, 1e-45, -1.0]))
case("wide_fixed", f32([12345.6789, -2.5, 7.125, 100.0]))
case("sci_with_nonfinite", f32([-INF, 1e-6, 2.0, NAN, INF]))

# non-finite values, zeros, integers
case("neginf_and_inf_only", f32([-INF, INF, -INF]))
case("nan_only", f32([[NAN, NAN], [NAN, NAN]]))
case("nan_and_zero", f32([0.0, NAN, 0.0]))
case("fixed_with_inf_nan", f32([0.5, -INF, INF, NAN, -0.25]))
case("zeros_2x3", torch.zeros(2, 3))
case("zeros_1d", torch.zeros(5))
case("negative_zero", f32([-0.0, 1.0, 2.0]))
case("negative_zero_fixed", f32([-0.0, 0.5]))
case("integers", f32([1.0, -2.0, 0.0, 35.0]))
case("integers_with_inf", f32([[1.0, -INF], [3.0, INF]]))
case("integers_with_nan", f32([1.0, NAN, -4.0]))
case("integers_ratio_over_1000", f32([1.0, 5000.0]))
case("integers_2x2x3", counting(2, 2, 3, start=-6.0))
case("integers_large_123456", f32([123456.0, -654321.0, 100.0]))

# booleans
case("mask_causal_1x1x4x4", causal(1, 4, 4))
case("mask_causal_2x1x5x5", causal(2, 5, 5))
case("mask_all_true", torch.ones(2, 3, dtype=torch.bool))
case("mask_all_false", torch.zeros(3, dtype=torch.bool))
case("mask_1d_mixed", torch.tensor([True, False, True, True]))
case("mask_wide_1d", torch.arange(40) % 3 == 0)
case("mask_summarised_2x1x30x30", causal(2, 30, 30))

# rows that wrap at 80 columns
case("wrap_1d_20", randn(30, 20))
case("wrap_2d_3x20", randn(31, 3, 20))
case("wrap_3d_2x3x20", randn(32, 2, 3, 20))
case("wrap_4d_2x2x2x12", randn(33, 2, 2, 2, 12))
case("wrap_sci_2x15", randn(34, 2, 15, scale=1e-5))
case("wrap_integers_1d_60", counting(60))
case("wrap_wide_fixed_1d_13", randn(35, 13, scale=1e5))
case("wrap_bool_2x30", torch.arange(60).view(2, 30) % 4 == 1)
case("wrap_exactly_one_line", randn(36, 8))  # 8 x 9 columns: 72 <= 80 - 7

# more than 1000 elements: summarised
case("summarised_1d_2000", randn(40, 2000))
case("summarised_1d_1001_integers", counting(1001))
case("summarised_2d_40x40", randn(41, 40, 40))
case("summarised_2d_1001x1", randn(42, 1001, 1))
case("summarised_2d_2x600", randn(43, 2, 600))
case("summarised_2d_600x2", randn(44, 600, 2))
case("summarised_3d_10x10x11", randn(45, 10, 10, 11))
case("summarised_3d_2x3x200", randn(46, 2, 3, 200))
case("summarised_3d_200x2x3", randn(47, 200, 2, 3))
case("summarised_4d_2x4x16x16", randn(48, 2, 4, 16, 16))
case("summarised_4d_8x8x4x4", randn(49, 8, 8, 4, 4))
case("summarised_4d_7x7x7x7", randn(50, 7, 7, 7, 7))
case("summarised_4d_3x3x3x50", randn(51, 3, 3, 3, 50))
case("summarised_4d_1x1x40x40_counting", counting(1, 1, 40, 40))
case("summarised_masked_2x4x20x20", masked_scores(52, 2, 4, 20, 20))
case("summarised_softmax_2x2x20x20", torch.softmax(masked_scores(53, 2, 2, 20, 20), dim=-1))
case("summarised_wide_1d_1500", randn(54, 1500, scale=1e4))  # " ..." fills a slot of the line
# a 1e-6 where the summary hides it (PyTorch decides the notation without it), then shown
case("summarised_hidden_tiny_value", with_value(randn(55, 34, 34), (17, 17), 1e-6))
case("summarised_shown_tiny_value", with_value(randn(55, 34, 34), (0, 0), 1e-6))

# print options
case("precision_0", randn(60, 2, 4))
case("precision_2", randn(61, 2, 4))
case("precision_8", randn(62, 2, 4))
case("precision_8_wraps", randn(63, 12))
case("precision_0_sci", randn(64, 5, scale=1e-6), precision=0)
case("precision_8_sci", f32([1e-6, 0.1, 123.0]), precision=8)
case("precision_2_integers", f32([1.0, 2.0, -3.0]), precision=2)
case("precision_0_fixed_halves", f32([0.5, 1.5, 2.5, -0.5]), precision=0)
case("sci_on_randn", randn(65, 2, 3), sci_mode=True)
case("sci_on_integers", f32([1.0, -2.0, 30.0]), sci_mode=True)
case("sci_on_zeros", torch.zeros(2, 2), sci_mode=True)  # no nonzero value: sci_mode not applied
case("sci_on_nonfinite_only", f32([NAN, -INF]), sci_mode=True)
case("sci_on_bool", causal(1, 2, 2), sci_mode=True)
case("sci_on_masked_neginf", masked_scores(66, 1, 1, 3, 3), sci_mode=True)
case("sci_off_tiny", randn(67, 2, 3, scale=1e-6), sci_mode=False)
case("sci_off_large_integers", f32([1e9, -2e9, 3.0]), sci_mode=False)
case("sci_off_large_fixed", f32([1.5e9, 0.25]), sci_mode=False)
case("sci_off_mixed_ratio", f32([0.001, 2.0, -INF]), sci_mode=False)
case("full_2d_30x40", randn(68, 30, 40), full=True)
case("full_1d_1100", randn(69, 1100), full=True)
case("full_4d_2x4x10x16", randn(70, 2, 4, 10, 16), full=True)
case("full_precision_2_sci_on", randn(71, 1010), precision=2, sci_mode=True, full=True)
case("summarised_precision_2_sci_off", randn(72, 40, 40, scale=1e-3), precision=2, sci_mode=False)

# shapes a trace never holds, still printed as PyTorch prints them
case("scalar", torch.tensor(3.5))
case("scalar_integer", torch.tensor(-2.0))
case("scalar_nan", torch.tensor(NAN))
case("empty_1d", torch.zeros(0))
case("empty_2x0", torch.zeros(2, 0))
case("empty_bool", torch.zeros(0, dtype=torch.bool))


# ----------------------------------------------------------------------------
# writing


def value_to_json(v):
    if isinstance(v, bool):
        return v
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v  # json.dumps writes repr(float): the exact float32 value, read back exactly


def torch_text(t, options):
    torch.set_printoptions(profile="default")
    torch.set_printoptions(precision=options["precision"],
                           threshold=INF if options["full"] else 1000,
                           sci_mode=options["sci_mode"])
    try:
        return str(t)
    finally:
        torch.set_printoptions(profile="default")


def case_json(name, t, options):
    assert t.dtype in (torch.float32, torch.bool), name
    assert not t.requires_grad, name
    return {
        "name": name,
        "shape": list(t.shape),
        "dtype": "bool" if t.dtype == torch.bool else "float32",
        "values": [value_to_json(v) for v in t.reshape(-1).tolist()],
        "options": options,
        "text": torch_text(t, options),
    }


def main():
    cases = [case_json(*c) for c in CASES]
    with open(OUT_PATH, "w") as f:
        f.write("[\n" + ",\n".join(json.dumps(c) for c in cases) + "\n]\n")
    print(f"wrote {len(cases)} cases to {OUT_PATH}")


if __name__ == "__main__":
    main()
