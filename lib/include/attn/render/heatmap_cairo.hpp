#pragma once
// --format svg and png: the heatmaps (heatmap_panels.hpp) drawn for slides with cairo,
// one code path for both (a panel is drawn in heatmap_cairo.cpp). A tensor's panels stand
// in rows of up to four, each batch item starting a new row; tensors follow each other.
// The SVG nests an <svg class="panel" id="softmax-weights-b0-h1"> per panel; the PNG is
// the same page on one image surface at png_scale pixels per point.
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Query rows and key columns drawn per axis unless options.full.
inline constexpr std::size_t picture_max_side = 128;

/// Pixels per point in the PNG (2: sharp on slides and high-density screens); 1 for pages
/// over png_max_pixels.
inline constexpr double png_scale = 2.0;
inline constexpr double png_max_pixels = 40e6;

void render_svg(const trace& t, const render_options& options, std::ostream& out);
void render_png(const trace& t, const render_options& options, std::ostream& out);

namespace heatmap {

/// Where a drawn panel's cells are, in its SVG's units (points): the cell of the r-th
/// drawn query and the c-th drawn key is the square of side `cell` at (x + c·cell, y + r·cell).
struct cell_grid {
    double x = 0, y = 0, cell = 0;
};

/// The glyph outlines of a page's panels, one copy of each. cairo writes into each
/// panel's SVG an outline of every glyph it shows (<symbol id="glyph0-1">); the same
/// glyph at the same size is the same outline in every panel, so a page keeps one.
class glyph_library {
public:
    /// Takes the glyph outlines out of one panel's SVG and points its uses at the shared ones.
    void take_from(std::string& svg);
    /// The shared outlines, as <symbol> elements for a <defs>.
    const std::string& symbols() const { return symbols_; }

private:
    std::map<std::string, std::string> id_of_outline_;  // a symbol's content -> its shared id
    std::string symbols_;
};

/// One panel as an <svg> element to inline in a page (no XML declaration), every id
/// in it prefixed with the panel's id ("softmax-weights-b0-h1") so that many panels can share a page, its glyphs
/// in `glyphs` (the page must hold glyphs.symbols() in a <defs>). Its size is in CSS pixels, one per point.
struct svg_panel {
    std::string svg;
    cell_grid grid;
};

/// The panels of `h`, in order, each drawn as an <svg> element.
std::vector<svg_panel> draw_svg_panels(const tensor_heatmap& h, const render_options& options, glyph_library& glyphs);

/// `text` with & < > " escaped, for an XML (SVG, HTML) attribute or element.
std::string xml_escape(std::string_view text);

}  // namespace heatmap
}  // namespace attn
