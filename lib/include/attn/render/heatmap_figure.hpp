#pragma once
// The figure behind --format svg and png and the heatmaps of --format html: each panel
// of heatmap_panels.hpp laid out in points and drawn on a canvas, and pages of panels.
// heatmap_svg.cpp writes a canvas as SVG elements (rects, <text>), heatmap_cairo.cpp
// draws one with cairo for the PNG: the same calls, so the two pictures agree.
//
// A panel (points; the same layout for every panel of a tensor):
//
//   softmax.weights — batch 0, head 1           title
//   queries 0–127 of 512, keys 0–127 of 512     only when cut
//                key j                          axis label
//            0   1   2   3   4                  key numbers (every n-th when cells are small)
//   q     0 [ ][ ][ ][ ][ ]       ┌┐ 1.0000     grid, colour bar with the scale's top and bottom
//   u     1 [ ][ ][ ][ ][ ]       ││
//   e ... 4 [ ][ ][ ][ ][ ]       └┘ 0.0000
//           ▨ masked  ▩ NaN                     the marks present in the tensor
//
// A position table (pe, rope's cos and sin) is one such panel: "position" down, "feature"
// (or "head dim") across, rows numbered by position.
//
// Pages: `stack` puts a tensor's panels in rows of up to four, each batch item starting
// a new row, tensors one below another. `slide` is a 16:9 page (slide_width by
// slide_height points): a title line, then the tensors side by side, each under its
// stage's heading with one colour bar, batch items down and heads across, every panel scaled by one factor
// so that all fit; when they would be too small to read, each tensor keeps its first
// panels and the page says how many it left out.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/colormap.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/render_options.hpp"

namespace attn::heatmap {

/// Query rows and key columns drawn per axis unless options.full.
inline constexpr std::size_t picture_max_side = 128;

/// The slide: 16:9, 1920 by 1080 pixels as a PNG at 2 pixels per point.
inline constexpr double slide_width = 960, slide_height = 540;

struct box {
    double x = 0, y = 0, w = 0, h = 0;
};

enum class align { left, centre, right };

/// DejaVu Sans at `size` points.
struct font {
    double size = 10;
    bool bold = false;
};

/// The advance of `text` set in `f`, in points, as the PNG sets it (cairo's DejaVu Sans,
/// unhinted): the one measure behind every layout.
double text_width(std::string_view text, const font& f);

/// What a figure is drawn on: points, y down. Each panel is drawn between begin_panel
/// and end_panel in its own coordinates, (0, 0) its top left, scaled by `scale` on the page.
class canvas {
public:
    virtual ~canvas() = default;

    virtual void begin_panel(const tensor_heatmap& h, const panel& p, double x, double y, double width,
                             double height, double scale) = 0;
    virtual void end_panel() = 0;

    /// Boxes of one colour, filled together.
    virtual void fill_boxes(const std::vector<box>& boxes, const rgb& colour) = 0;
    /// A rectangle with corners rounded by `radius`, filled, and outlined 1 point wide
    /// unless `line` is null.
    virtual void rounded_box(const box& b, double radius, const rgb& fill, const rgb* line) = 0;
    /// The outlines of `boxes`, `width` points wide.
    virtual void outline_boxes(const std::vector<box>& boxes, const rgb& colour, double width) = 0;
    /// Lines at 45° over the union of `boxes`, `spacing` apart: '/', and '\' too when `crossed`.
    virtual void hatch(const std::vector<box>& boxes, const rgb& colour, bool crossed, double spacing) = 0;
    /// The colour map over `b`, its low end at the bottom.
    virtual void colour_ramp(const box& b) = 0;
    /// `text` on the baseline `y`, its left end, middle or right end at `x`; `turned`:
    /// read upwards, rotated a quarter turn anticlockwise about (x, y).
    virtual void text(std::string_view text, double x, double y, const font& f, const rgb& colour,
                      align a = align::left, bool turned = false) = 0;
};

/// Where everything of a panel goes; the same for every panel of a tensor, so they line up.
struct panel_layout {  // on a slide without the colour bar and marks legend (bar_height, legend_y 0)
    double width = 0, height = 0;  // whole points
    double grid_x = 0, grid_y = 0, cell = 0;
    double title_y = 0;  // baselines
    double note_y = 0;   // 0: no note (the panel shows the whole plane)
    double key_label_y = 0, key_numbers_y = 0;
    std::size_t key_step = 1, query_step = 1;  // a number on every n-th key and query
    double query_numbers_x = 0;                // right edge of the query numbers
    double query_label_x = 0;                  // middle of the rotated "query i"
    double bar_x = 0, bar_y = 0, bar_height = 0;
    double legend_y = 0;  // top of the marks legend; 0: none
    bool values_in_cells = false;
    double value_size = 0;
};

/// The layout of `h`'s panels.
panel_layout lay_out(const tensor_heatmap& h, const render_options& options);

/// The one drawing of a panel, at (0, 0) of the canvas's current panel.
void draw_panel(canvas& c, const tensor_heatmap& h, const panel& p, const panel_layout& L,
                const render_options& options);

/// Every panel of every tensor, placed on one page.
struct page {
    std::vector<panel_layout> layouts;  // one per tensor
    struct placed {
        std::size_t tensor = 0, panel = 0;
        double x = 0, y = 0;
    };
    std::vector<placed> panels;
    double scale = 1;  // of every panel (slide: below 1 to fit)
    struct line {
        std::string text;
        double x = 0, y = 0;  // baseline, left end
        font f;
        bool muted = false;
    };
    std::vector<line> lines;          // slide: the title line, the stage headings, the notes
    struct key {
        std::size_t tensor = 0;
        double x = 0, y = 0, height = 0;  // the colour bar's top left and height; the marks legend below
    };
    std::vector<key> keys;            // slide: one colour bar per tensor, right of its panels
    std::vector<std::string> notes;   // slide: the panels left out, for stderr (the slide says it without flags)
    double width = 0, height = 0;
};

/// The tensors `options` shows, laid out on a page as options.layout says; the slide
/// may drop panels from `heatmaps` (page.notes says which). Throws usage_error when
/// no shown stage has a tensor to draw.
page lay_out_page(const trace& t, std::vector<tensor_heatmap>& heatmaps, const render_options& options);

/// The page on `c`: its lines, then its panels.
void draw_page(canvas& c, const page& pg, const std::vector<tensor_heatmap>& heatmaps, const render_options& options);

/// The tensors to draw (collect), or a usage error when there are none.
std::vector<tensor_heatmap> collect_pictured(const trace& t, const render_options& options);

/// "softmax-weights-b0-h1": an id for a panel, from its tensor and place (any character
/// of the tensor's name but a letter, digit, _ or . as _).
std::string panel_id(const tensor_heatmap& h, const panel& p);

}  // namespace attn::heatmap
