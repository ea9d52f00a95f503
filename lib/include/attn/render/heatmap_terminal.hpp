#pragma once
// --format heatmap: each [.., Sq, Sk] tensor of the shown stages (heatmap_panels.hpp)
// as one grid per batch item and head, drawn with characters: two columns per cell,
// queries down, keys across, a legend with the scale's min and max and the marks.
//
// With options.color, cells are 24-bit background colours of the colour map
// (colormap.hpp); without, a shade ramp ' ░▒▓█' that reads in any file. Marks:
// ' ·' masked, '-∞' -inf, '+∞' inf, '??' NaN.
#include <cstddef>
#include <ostream>

#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Query rows and key columns drawn per axis unless options.full.
inline constexpr std::size_t terminal_max_side = 32;

/// Draws the heatmaps, the panels of a batch item side by side within `width` columns.
void render_heatmap_terminal(const trace& t, const render_options& options, std::ostream& out,
                             std::size_t width = 80);

}  // namespace attn
