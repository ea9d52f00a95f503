#pragma once
// --format html: one self-contained page that walks through the run, stage by
// stage: its number, name, title and formula, its explanation (teach/explain.hpp,
// the fields that are filled in), its warnings, and its tensors: every [.., Sq, Sk]
// tensor as heatmaps (the SVG panels of heatmap_cairo.hpp, inlined, a cell's value
// shown on hover), the others as tables of numbers, summarised as the table format
// does. Nothing is fetched: styles, script and pictures are in the page, which
// follows the reader's light or dark colour scheme.
#include <cstddef>
#include <ostream>

#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Unless options.full: query rows and key columns drawn per heatmap, and heatmaps per
/// tensor (a page of B=4, H=8 and Sq=64 would weigh 30 MB).
inline constexpr std::size_t html_max_side = 64;
inline constexpr std::size_t html_max_panels = 16;

void render_html(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
