#pragma once
// --format html: one self-contained page that walks through the run stage by stage:
// heading, formula, explanation, warnings, and the tensors: [.., Sq, Sk] ones and the
// position tables (pe, rope's cos and sin) as the SVG heatmaps of heatmap_svg.hpp (a cell's value on hover), the others as tables of
// numbers summarised as the table format does. Nothing is fetched; the page follows the
// reader's light or dark colour scheme. With --layout slide the page opens with the
// 16:9 slide of heatmap_figure.hpp.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Unless options.full: query rows and key columns drawn per heatmap, and heatmaps per
/// tensor (a page of B=4, H=8 and Sq=64 would weigh 30 MB).
inline constexpr std::size_t html_max_side = 64;
inline constexpr std::size_t html_max_panels = 16;

/// Writes the page; returns the notes for stderr (panels the slide leaves out).
std::vector<std::string> render_html(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
