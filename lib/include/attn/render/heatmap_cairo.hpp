#pragma once
// --format png: the figure of heatmap_figure.hpp drawn with cairo on one image surface,
// png_scale pixels per point (the stacked page, or the 16:9 slide at 1920 by 1080).
#include <ostream>
#include <string>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Pixels per point in the PNG (2: sharp on slides and high-density screens); 1 for pages
/// over png_max_pixels.
inline constexpr double png_scale = 2.0;
inline constexpr double png_max_pixels = 40e6;

/// Writes the PNG; returns the notes for stderr (panels a slide leaves out).
std::vector<std::string> render_png(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
