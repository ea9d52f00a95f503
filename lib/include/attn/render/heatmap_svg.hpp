#pragma once
// --format svg, and the panels --format html inlines: the figure of heatmap_figure.hpp
// written as plain SVG, by hand: a <path> per colour of cells, a <text> per label in
// "DejaVu Sans, sans-serif" (so that a label can be searched, selected and edited), and
// an <svg class="panel" id="softmax-weights-b0-h1"> per panel with its <title>.
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// Writes the SVG document; returns the notes for stderr (panels a slide leaves out).
std::vector<std::string> render_svg(const trace& t, const render_options& options, std::ostream& out);

/// The SVG document without its XML declaration: one <svg> element, to inline in an HTML
/// page; the notes for stderr are added to `notes`.
std::string svg_page_element(const trace& t, const render_options& options, std::vector<std::string>& notes);

namespace heatmap {

/// Where a drawn panel's cells are, in its SVG's units (points): the cell of the r-th
/// drawn query and the c-th drawn key is the square of side `cell` at (x + c·cell, y + r·cell).
struct cell_grid {
    double x = 0, y = 0, cell = 0;
};

/// One panel as an <svg> element to inline in a page (no XML declaration), every id in
/// it prefixed with the panel's id ("softmax-weights-b0-h1") so that many panels can
/// share a page. Its size is in CSS pixels, one per point.
struct svg_panel {
    std::string svg;
    cell_grid grid;
};

/// The panels of `h`, in order, each drawn as an <svg> element.
std::vector<svg_panel> draw_svg_panels(const tensor_heatmap& h, const render_options& options);

/// `text` with & < > " escaped, for an XML (SVG, HTML) attribute or element, and the
/// characters printable_text escapes (controls, bidirectional controls, U+2028, the
/// noncharacters XML forbids) written as printable_text writes them; tab and line breaks kept.
std::string xml_escape(std::string_view text);

}  // namespace heatmap
}  // namespace attn
