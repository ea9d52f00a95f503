#pragma once
// --format png: the figure of heatmap_figure.hpp drawn with cairo on one image surface,
// png_scale pixels per point (the stacked page, or the 16:9 slide at 1920 by 1080).
#include <ostream>
#include <string>
#include <vector>

#include "attn/compute/stage_sink.hpp"
#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Pixels per point in the PNG (2: sharp on slides and high-density screens); 1 for pages
/// over png_max_pixels.
inline constexpr double png_scale = 2.0;
inline constexpr double png_max_pixels = 40e6;

/// Before the run: the page of a run of `c` and `plan` drawn with `options`, laid out from the
/// shapes of the stages it shows and the labels (each value a stand-in: the values move only the
/// colour bars' numbers, --stats' lines and the marks' legends, by a few points), refused as
/// render_png refuses it: larger than a PNG's side, or a canvas larger than c.limits.max_memory.
void check_png_size(const config& c, const stage_plan& plan, const render_options& options);

/// Writes the PNG; returns the notes for stderr (panels a slide leaves out).
std::vector<std::string> render_png(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
