#pragma once
// The one colour map of the pictures (terminal heatmap, SVG/PNG, HTML): viridis,
// matplotlib's default. It runs from dark blue-violet to yellow with lightness rising
// evenly, so it reads in grey too and for colour-blind readers, and a brighter cell
// always means a larger value.
#include <cstdint>

namespace attn {

/// A colour with channels in [0, 1], as cairo takes them.
struct rgb {
    double r = 0, g = 0, b = 0;

    /// A channel as a byte 0..255 (terminal escapes, CSS).
    static std::uint8_t byte(double channel);
};

/// viridis at `t` in [0, 1] (clamped; NaN gives the low end).
rgb viridis(double t);

/// Relative luminance (WCAG: 0 black .. 1 white) of an sRGB colour, to choose
/// dark or light text on a cell.
double relative_luminance(const rgb& c);

/// Where values fall on the colour map: `lo` at 0, `hi` at 1. One scale per drawn
/// tensor, over its finite values (heatmap_panels.hpp decides which).
struct value_scale {
    float lo = 0.0f;
    float hi = 1.0f;

    /// (v - lo) / (hi - lo), clamped to [0, 1]; 0.5 when lo == hi (a constant tensor).
    double position(float v) const;
};

/// The shade (0 .. levels-1) of a position in [0, 1], for ramps of `levels` steps
/// such as ' ░▒▓█': 0 (a blank) for the low end itself, and equal parts of (0, 1] for
/// the others, so that a small value above the low end is never drawn blank.
int shade_level(double position, int levels);

}  // namespace attn
