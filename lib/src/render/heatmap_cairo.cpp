// --format svg and png, and the panels of --format html: draw_panel is the one
// place a panel is drawn; it draws on whatever cairo surface it is given (an SVG
// surface per panel, or one image surface for the PNG page).
//
// A panel (points; the same layout for every panel of a tensor):
//
//   softmax.weights — batch 0, head 1           title
//   queries 0–127 of 512, keys 0–127 of 512     only when cut
//                key j                          axis label
//            0   1   2   3   4                  key numbers (every n-th when cells are small)
//   q     0 [ ][ ][ ][ ][ ]       ┌┐ 1.0000     grid, colour bar with max and min
//   u     1 [ ][ ][ ][ ][ ]       ││
//   e ... 4 [ ][ ][ ][ ][ ]       └┘ 0.0671
//           ▨ masked  ▩ NaN                     the marks present in the tensor
#include "attn/render/heatmap_cairo.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <cairo-svg.h>
#include <cairo.h>

#include "attn/compute/error.hpp"
#include "attn/render/colormap.hpp"

namespace attn {
namespace {

using heatmap::cell_kind;
using heatmap::panel;
using heatmap::tensor_heatmap;

// --- cairo objects, owned ------------------------------------------------------------

struct surface_deleter {
    void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct context_deleter {
    void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using surface_ptr = std::unique_ptr<cairo_surface_t, surface_deleter>;
using context_ptr = std::unique_ptr<cairo_t, context_deleter>;

void check(cairo_status_t status) {
    if (status != CAIRO_STATUS_SUCCESS)
        throw error(std::string("cannot draw the picture: ") + cairo_status_to_string(status));
}

/// A context on `surface` with the text settings every surface shares: no hinting, so
/// text measures the same on the SVG, the PNG and the surface the layout measures on.
context_ptr make_context(cairo_surface_t* surface) {
    check(cairo_surface_status(surface));
    context_ptr cr(cairo_create(surface));
    cairo_font_options_t* fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr.get(), fo);
    cairo_font_options_destroy(fo);
    check(cairo_status(cr.get()));
    return cr;
}

cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

// --- style ----------------------------------------------------------------------------

constexpr const char* font_family = "DejaVu Sans";
constexpr double pad = 14;           // inside the card, all round
constexpr double title_size = 13;    // the panel's title
constexpr double label_size = 10.5;  // "query i", "key j"
constexpr double number_size = 9;    // key and query numbers, colour bar, notes, legend
constexpr double bar_width = 12;
constexpr double max_cell = 36, min_cell = 2;
constexpr double grid_extent = 300;  // the larger side of a grid aims at this, within the cell limits

const rgb ink{0.13, 0.13, 0.13};
const rgb muted{0.40, 0.40, 0.40};
const rgb card_border{0.80, 0.80, 0.80};
const rgb masked_fill{0.93, 0.93, 0.93};
const rgb masked_line{0.60, 0.60, 0.60};
const rgb nan_fill{0.99, 0.84, 0.84};
const rgb nan_line{0.80, 0.12, 0.12};
const rgb white{1, 1, 1};

void set_colour(cairo_t* cr, const rgb& c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

void set_font(cairo_t* cr, double size, bool bold = false) {
    cairo_select_font_face(cr, font_family, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

double text_width(cairo_t* cr, const std::string& text) {
    cairo_text_extents_t e;
    cairo_text_extents(cr, text.c_str(), &e);
    return e.x_advance;
}

enum class align { left, centre, right };

/// `text` on the baseline `y`, its left end, middle or right end at `x`.
void show_text(cairo_t* cr, const std::string& text, double x, double y, align a = align::left) {
    const double w = text_width(cr, text);
    cairo_move_to(cr, a == align::left ? x : a == align::centre ? x - w / 2 : x - w, y);
    cairo_show_text(cr, text.c_str());
}

/// `text` centred on (x, y) both ways (the baseline a third of the size below y).
void show_centred(cairo_t* cr, const std::string& text, double x, double y, double size) {
    show_text(cr, text, x, y + size * 0.36, align::centre);
}

/// "−∞" rather than "-inf" in a cell: shorter, and what a student writes.
std::string cell_text(cell_kind k) {
    return k == cell_kind::neg_inf ? "−∞" : k == cell_kind::pos_inf ? "+∞" : k == cell_kind::nan ? "NaN" : "";
}

// --- layout ---------------------------------------------------------------------------

/// Where everything of a panel goes; the same for every panel of a tensor, so they line up.
struct panel_layout {
    double width = 0, height = 0;          // whole points
    double grid_x = 0, grid_y = 0, cell = 0;
    double title_y = 0;                    // baselines
    double note_y = 0;                     // 0: no note (the panel shows the whole plane)
    double key_label_y = 0, key_numbers_y = 0;
    std::size_t key_step = 1, query_step = 1;  // a number on every n-th key and query
    double query_numbers_x = 0;            // right edge of the query numbers
    double query_label_x = 0;              // middle of the rotated "query i"
    double bar_x = 0, bar_y = 0, bar_height = 0;
    double legend_y = 0;                   // top of the marks legend; 0: none
    bool values_in_cells = false;
    double value_size = 0;

    double grid_width(const panel& p) const { return static_cast<double>(p.keys.size()) * cell; }
    double grid_height(const panel& p) const { return static_cast<double>(p.queries.size()) * cell; }
};

/// The smallest of 1, 2, 5, 10, 20, 50, ... with `step` cells at least `room` wide.
std::size_t label_step(double room, double cell) {
    for (std::size_t base = 1;; base *= 10)
        for (std::size_t m : {1, 2, 5})
            if (static_cast<double>(base * m) * cell >= room) return base * m;
}

/// The marks legend's entries: the kinds of marked cell the tensor has.
std::vector<cell_kind> marks_of(const tensor_heatmap& h) {
    std::vector<cell_kind> marks;
    for (cell_kind k : {cell_kind::masked, cell_kind::neg_inf, cell_kind::pos_inf, cell_kind::nan})
        if (h.has(k)) marks.push_back(k);
    return marks;
}

std::string mark_label(cell_kind k) { return k == cell_kind::masked ? "masked" : cell_text(k); }

constexpr double swatch = 10;       // a legend's sample cell
constexpr double legend_gap = 14;   // between legend entries

/// The colour bar's two labels: max on top, min below (true/false for booleans).
std::pair<std::string, std::string> bar_labels(const tensor_heatmap& h, const render_options& options) {
    if (h.boolean()) return {"true", h.from->name() == "mask" ? "" : "false"};
    return {heatmap::number_text(h.scale.hi, options.precision), heatmap::number_text(h.scale.lo, options.precision)};
}

/// The text of a value cell: two decimals, fixed (cells are small; the tooltip and the
/// tables have more), "0.00" for a value that rounds to zero from either side.
std::string value_text(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
    return std::string(buf) == "-0.00" ? "0.00" : buf;
}

panel_layout lay_out(cairo_t* m, const tensor_heatmap& h, const render_options& options) {
    panel_layout L;
    const panel& first = h.panels.front();  // every panel of a tensor draws as many queries and keys
    const double rows = static_cast<double>(first.queries.size()), cols = static_cast<double>(first.keys.size());
    L.cell = std::clamp(std::floor(grid_extent / std::max(rows, cols)), min_cell, max_cell);
    const double grid_w = cols * L.cell, grid_h = rows * L.cell;

    set_font(m, title_size, true);
    double content_w = 0;  // the widest line that is not the grid
    for (const panel& p : h.panels) content_w = std::max(content_w, text_width(m, heatmap::title(h, p)));
    double y = pad;
    L.title_y = y + title_size;
    y += title_size + 5;
    set_font(m, number_size);
    const std::string note = heatmap::crop_note(h, first);
    if (!note.empty()) {
        L.note_y = y + number_size;
        y += number_size + 5;
        content_w = std::max(content_w, text_width(m, note));
    }
    y += 6;
    L.key_label_y = y + label_size;
    y += label_size + 4;
    L.key_numbers_y = y + number_size * 0.8;
    y += number_size + 4;
    L.grid_y = std::ceil(y);  // whole points: shorter SVG paths, crisper PNG cells
    L.key_step = label_step(text_width(m, std::to_string(first.keys.back())) + 5, L.cell);
    L.query_step = label_step(number_size + 2, L.cell);

    double x = pad;
    L.query_label_x = x + label_size * 0.6;
    x += label_size + 8;
    std::size_t widest_query = 0;
    for (std::size_t i : first.queries) widest_query = std::max(widest_query, i);
    x += text_width(m, std::to_string(widest_query));
    L.query_numbers_x = x;
    L.grid_x = std::ceil(x + 5);

    // The colour bar right of the grid, at least tall enough for its two labels.
    L.bar_x = L.grid_x + grid_w + 18;
    L.bar_y = L.grid_y;
    L.bar_height = std::max(grid_h, 72.0);
    const auto [top, bottom] = bar_labels(h, options);
    const double right = L.bar_x + bar_width + 5 + std::max(text_width(m, top), text_width(m, bottom)) + pad;
    double bottom_y = L.grid_y + std::max(grid_h, L.bar_height);

    const std::vector<cell_kind> marks = marks_of(h);
    double legend_w = 0;
    for (cell_kind k : marks) legend_w += swatch + 4 + text_width(m, mark_label(k)) + legend_gap;
    if (!marks.empty()) {
        L.legend_y = bottom_y + 10;
        bottom_y = L.legend_y + swatch;
    }
    L.height = std::ceil(bottom_y + pad);
    set_font(m, label_size);
    const double key_label_w = text_width(m, "key j");
    L.width = std::ceil(std::max({right, pad + content_w + pad, L.grid_x + legend_w + pad,
                                  L.grid_x + grid_w / 2 + key_label_w / 2 + pad}));

    // Values in the cells when every one of them fits.
    if (!h.boolean() && L.cell >= 28) {
        L.value_size = std::clamp(L.cell * 0.3, 7.0, 11.0);
        set_font(m, L.value_size);
        double widest = 0;
        for (const panel& p : h.panels)
            for (std::size_t i : p.queries)
                for (std::size_t j : p.keys)
                    if (h.kind(p, i, j) == cell_kind::value) widest = std::max(widest, text_width(m, value_text(h.at(p, i, j))));
        L.values_in_cells = widest <= L.cell - 4;
    }
    return L;
}

// --- drawing --------------------------------------------------------------------------

struct box {
    double x, y, w, h;
};

/// A rectangle with corners rounded by `r`.
void rounded_rectangle(cairo_t* cr, double x, double y, double w, double h, double r) {
    cairo_new_sub_path(cr);
    cairo_arc(cr, x + w - r, y + r, r, -M_PI / 2, 0);
    cairo_arc(cr, x + w - r, y + h - r, r, 0, M_PI / 2);
    cairo_arc(cr, x + r, y + h - r, r, M_PI / 2, M_PI);
    cairo_arc(cr, x + r, y + r, r, M_PI, 3 * M_PI / 2);
    cairo_close_path(cr);
}

/// Lines at 45° over the union of `boxes` ('/', and '\' too when `crossed`).
void hatch(cairo_t* cr, const std::vector<box>& boxes, const rgb& colour, bool crossed, double spacing) {
    if (boxes.empty()) return;
    double x0 = boxes[0].x, y0 = boxes[0].y, x1 = x0, y1 = y0;
    cairo_save(cr);
    for (const box& b : boxes) {
        cairo_rectangle(cr, b.x, b.y, b.w, b.h);
        x0 = std::min(x0, b.x), y0 = std::min(y0, b.y);
        x1 = std::max(x1, b.x + b.w), y1 = std::max(y1, b.y + b.h);
    }
    cairo_clip(cr);
    const double h = y1 - y0;
    for (double d = -h; d < x1 - x0; d += spacing) {
        cairo_move_to(cr, x0 + d, y1);
        cairo_line_to(cr, x0 + d + h, y0);
        if (crossed) {
            cairo_move_to(cr, x0 + d, y0);
            cairo_line_to(cr, x0 + d + h, y1);
        }
    }
    set_colour(cr, colour);
    cairo_set_line_width(cr, 0.8);
    cairo_stroke(cr);
    cairo_restore(cr);
}

void fill_box(cairo_t* cr, const box& b, const rgb& colour) {
    set_colour(cr, colour);
    cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    cairo_fill(cr);
}

/// Boxes of one colour, filled as one path (one SVG element, not one per cell).
void fill_boxes(cairo_t* cr, const std::vector<box>& boxes, const rgb& colour) {
    if (boxes.empty()) return;
    for (const box& b : boxes) cairo_rectangle(cr, b.x, b.y, b.w, b.h);
    set_colour(cr, colour);
    cairo_fill(cr);
}

/// The boxes of marked cells, by kind, to fill and hatch once per kind.
struct marked_boxes {
    std::vector<box> masked, nan, inf;

    void add(cell_kind k, const box& b) {
        (k == cell_kind::masked ? masked : k == cell_kind::nan ? nan : inf).push_back(b);
    }
};

/// Masked cells grey, hatched; NaN pink, cross-hatched red; ±inf white, outlined grey.
void draw_marked(cairo_t* cr, const marked_boxes& boxes, double spacing) {
    fill_boxes(cr, boxes.masked, masked_fill);
    fill_boxes(cr, boxes.nan, nan_fill);
    fill_boxes(cr, boxes.inf, white);
    hatch(cr, boxes.masked, masked_line, false, spacing);
    hatch(cr, boxes.nan, nan_line, true, spacing);
    for (const box& b : boxes.inf) cairo_rectangle(cr, b.x + 0.5, b.y + 0.5, b.w - 1, b.h - 1);
    set_colour(cr, masked_line);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);
}

/// 256 shades of the colour map, as matplotlib's table and 8-bit pixels have: cells of
/// one shade are filled together.
constexpr int shades = 256;

int shade_of(double position) { return static_cast<int>(std::lround(position * (shades - 1))); }

/// The cells, then the text in them: values when they fit, ±∞ and NaN when there is room.
void draw_cells(cairo_t* cr, const tensor_heatmap& h, const panel& p, const panel_layout& L) {
    const double gap = L.cell >= 10 ? 1.0 : 0.0;  // white lines between cells, when they are large enough
    const auto cell_box = [&](std::size_t r, std::size_t c) {
        return box{L.grid_x + c * L.cell + gap / 2, L.grid_y + r * L.cell + gap / 2, L.cell - gap, L.cell - gap};
    };
    std::vector<std::vector<box>> by_shade(shades);
    marked_boxes marked;
    for (std::size_t r = 0; r < p.queries.size(); ++r)
        for (std::size_t c = 0; c < p.keys.size(); ++c) {
            const cell_kind k = h.kind(p, p.queries[r], p.keys[c]);
            if (k == cell_kind::value)
                by_shade[shade_of(h.scale.position(h.at(p, p.queries[r], p.keys[c])))].push_back(cell_box(r, c));
            else
                marked.add(k, cell_box(r, c));
        }
    for (int shade = 0; shade < shades; ++shade) fill_boxes(cr, by_shade[shade], viridis(shade / double(shades - 1)));
    draw_marked(cr, marked, std::clamp(L.cell / 5, 3.0, 6.0));

    const double mark_size = std::clamp(L.cell * 0.3, 6.0, 11.0);
    for (std::size_t r = 0; r < p.queries.size(); ++r)
        for (std::size_t c = 0; c < p.keys.size(); ++c) {
            const box b = cell_box(r, c);
            const double cx = b.x + b.w / 2, cy = b.y + b.h / 2;
            const float v = h.at(p, p.queries[r], p.keys[c]);
            const cell_kind k = h.kind(p, p.queries[r], p.keys[c]);
            if (k == cell_kind::value && L.values_in_cells) {
                const rgb fill = viridis(h.scale.position(v));
                set_colour(cr, relative_luminance(fill) > 0.3 ? ink : white);
                set_font(cr, L.value_size);
                show_centred(cr, value_text(v), cx, cy, L.value_size);
            } else if ((k == cell_kind::neg_inf || k == cell_kind::pos_inf) && L.cell >= 14) {
                set_colour(cr, muted);
                set_font(cr, mark_size);
                show_centred(cr, cell_text(k), cx, cy, mark_size);
            } else if (k == cell_kind::nan && L.cell >= 24) {
                // On a white label over the hatching, so that the red text reads.
                set_font(cr, mark_size);
                const double w = text_width(cr, cell_text(k)) + 4;
                rounded_rectangle(cr, cx - w / 2, cy - mark_size * 0.6, w, mark_size * 1.2, 2);
                set_colour(cr, white);
                cairo_fill(cr);
                set_colour(cr, nan_line);
                show_centred(cr, cell_text(k), cx, cy, mark_size);
            }
        }
}

/// The colour map from the min (bottom) to the max (top), with both written beside it;
/// for a boolean tensor a block for true (and one for false, except in the mask,
/// whose false cells are masked).
void draw_colour_bar(cairo_t* cr, const tensor_heatmap& h, const panel_layout& L, const render_options& options) {
    if (!h.boolean() && !h.has(cell_kind::value)) return;  // no value has a colour (all NaN, say)
    const double x = L.bar_x, y = L.bar_y, H = L.bar_height;
    const auto [top, bottom] = bar_labels(h, options);
    if (h.boolean()) {
        fill_box(cr, {x, y, bar_width, H / 2}, viridis(1.0));
        if (!bottom.empty()) fill_box(cr, {x, y + H / 2, bar_width, H / 2}, viridis(0.0));
    } else {
        cairo_pattern_t* ramp = cairo_pattern_create_linear(0, y + H, 0, y);
        constexpr int stops = 32;
        for (int k = 0; k <= stops; ++k) {
            const rgb c = viridis(k / double(stops));
            cairo_pattern_add_color_stop_rgb(ramp, k / double(stops), c.r, c.g, c.b);
        }
        cairo_set_source(cr, ramp);
        cairo_rectangle(cr, x, y, bar_width, H);
        cairo_fill(cr);
        cairo_pattern_destroy(ramp);
    }
    cairo_rectangle(cr, x + 0.25, y + 0.25, bar_width - 0.5, (bottom.empty() ? H / 2 : H) - 0.5);
    set_colour(cr, card_border);
    cairo_set_line_width(cr, 0.5);
    cairo_stroke(cr);
    set_colour(cr, ink);
    set_font(cr, number_size);
    show_text(cr, top, x + bar_width + 5, y + number_size * 0.8);
    if (!bottom.empty()) show_text(cr, bottom, x + bar_width + 5, y + H);
}

/// "▨ masked  ▩ NaN": a sample of each kind of marked cell the tensor has.
void draw_marks_legend(cairo_t* cr, const tensor_heatmap& h, const panel_layout& L) {
    if (L.legend_y == 0) return;
    double x = L.grid_x;
    for (cell_kind k : marks_of(h)) {
        marked_boxes marked;
        marked.add(k, {x, L.legend_y, swatch, swatch});
        draw_marked(cr, marked, 3);
        set_colour(cr, ink);
        set_font(cr, number_size);
        const std::string label = mark_label(k);
        show_text(cr, label, x + swatch + 4, L.legend_y + swatch - 1);
        x += swatch + 4 + text_width(cr, label) + legend_gap;
    }
}

/// The one drawing of a panel, at (0, 0) of `cr`, L.width by L.height points.
void draw_panel(cairo_t* cr, const tensor_heatmap& h, const panel& p, const panel_layout& L,
                const render_options& options) {
    rounded_rectangle(cr, 0.5, 0.5, L.width - 1, L.height - 1, 6);
    set_colour(cr, white);
    cairo_fill_preserve(cr);
    set_colour(cr, card_border);
    cairo_set_line_width(cr, 1);
    cairo_stroke(cr);

    set_colour(cr, ink);
    set_font(cr, title_size, true);
    show_text(cr, heatmap::title(h, p), pad, L.title_y);
    set_colour(cr, muted);
    set_font(cr, number_size);
    if (L.note_y != 0) show_text(cr, heatmap::crop_note(h, p), pad, L.note_y);

    // Axis labels: "key j" over the grid, "query i" turned up the left side.
    const double grid_w = L.grid_width(p), grid_h = L.grid_height(p);
    set_font(cr, label_size);
    show_text(cr, "key j", L.grid_x + grid_w / 2, L.key_label_y, align::centre);
    cairo_save(cr);
    cairo_translate(cr, L.query_label_x, L.grid_y + grid_h / 2);
    cairo_rotate(cr, -M_PI / 2);
    show_centred(cr, "query i", 0, 0, label_size);
    cairo_restore(cr);

    set_font(cr, number_size);
    for (std::size_t c = 0; c < p.keys.size(); ++c)
        if (p.keys[c] % L.key_step == 0)
            show_text(cr, std::to_string(p.keys[c]), L.grid_x + (c + 0.5) * L.cell, L.key_numbers_y, align::centre);
    for (std::size_t r = 0; r < p.queries.size(); ++r)
        if (p.queries[r] % L.query_step == 0 || p.queries.size() == 1)
            show_text(cr, std::to_string(p.queries[r]), L.query_numbers_x, L.grid_y + (r + 0.5) * L.cell + number_size * 0.36,
                      align::right);

    draw_cells(cr, h, p, L);
    draw_colour_bar(cr, h, L, options);
    draw_marks_legend(cr, h, L);
}

// --- pages ------------------------------------------------------------------------------

constexpr double page_margin = 16;
constexpr double panel_gap = 12;
constexpr std::size_t panels_per_row = 4;

/// Every panel of every tensor, placed on one page.
struct page {
    std::vector<panel_layout> layouts;  // one per tensor
    struct placed {
        std::size_t tensor, panel;
        double x, y;
    };
    std::vector<placed> panels;
    double width = 0, height = 0;
};

/// Rows of up to four panels; a batch item's heads start a new row; tensors one below another.
page lay_out_page(const std::vector<tensor_heatmap>& heatmaps, const render_options& options) {
    surface_ptr scratch(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1));
    const context_ptr m = make_context(scratch.get());
    page pg;
    double y = page_margin;
    for (std::size_t t = 0; t < heatmaps.size(); ++t) {
        const tensor_heatmap& h = heatmaps[t];
        pg.layouts.push_back(lay_out(m.get(), h, options));
        const panel_layout& L = pg.layouts.back();
        std::size_t in_row = 0;
        for (std::size_t k = 0; k < h.panels.size(); ++k) {
            const bool new_batch = k > 0 && h.panels[k].head && h.panels[k].batch != h.panels[k - 1].batch;
            if (in_row == panels_per_row || (in_row > 0 && new_batch)) {
                y += L.height + panel_gap;
                in_row = 0;
            }
            const double x = page_margin + static_cast<double>(in_row) * (L.width + panel_gap);
            pg.panels.push_back({t, k, x, y});
            pg.width = std::max(pg.width, x + L.width + page_margin);
            ++in_row;
        }
        y += L.height + panel_gap * 2;
    }
    pg.height = y - panel_gap * 2 + page_margin;
    return pg;
}

/// The panels to draw, or an error when there are none.
std::vector<tensor_heatmap> collect_or_fail(const trace& t, const render_options& options) {
    std::vector<tensor_heatmap> heatmaps = heatmap::collect(t, options, picture_max_side);
    if (heatmaps.empty())
        throw usage_error("no stage shown has a [.., Sq, Sk] tensor to draw (scores, scaled, mask, masked, softmax, "
                          "dropout)");
    return heatmaps;
}

std::string svg_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
    for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
}

/// One panel drawn on its own SVG surface: the document cairo writes.
std::string panel_document(const tensor_heatmap& h, const panel& p, const panel_layout& L,
                           const render_options& options) {
    std::string document;
    {
        surface_ptr surface(cairo_svg_surface_create_for_stream(append_to_string, &document, L.width, L.height));
        cairo_svg_surface_set_document_unit(surface.get(), CAIRO_SVG_UNIT_PT);
        {
            const context_ptr cr = make_context(surface.get());
            draw_panel(cr.get(), h, p, L, options);
            check(cairo_status(cr.get()));
        }
        cairo_surface_finish(surface.get());
        check(cairo_surface_status(surface.get()));
    }
    return document;
}

/// "softmax-weights-b0-h1": an id for a panel, from its tensor and place.
std::string panel_id(const tensor_heatmap& h, const panel& p) {
    std::string id = std::string(h.from->name()) + "-" + h.values->name + "-b" + std::to_string(p.batch);
    return p.head ? id + "-h" + std::to_string(*p.head) : id;
}

/// cairo's document as an element of a page: its root tag replaced by `root`, the XML
/// declaration dropped, and its ids ("glyph0-1", "clip1") prefixed with the panel's id,
/// since every panel's cairo numbers them from the start; its glyphs moved to `glyphs`.
std::string panel_element(const tensor_heatmap& h, const panel& p, const panel_layout& L,
                          const render_options& options, const std::string& root, heatmap::glyph_library& glyphs) {
    const std::string document = panel_document(h, p, L, options);
    const std::size_t open = document.find("<svg");
    const std::size_t close = document.find('>', open);
    if (open == std::string::npos || close == std::string::npos) throw error("cannot draw the picture: no SVG from cairo");
    std::string body = document.substr(close + 1);
    const std::string id_prefix = panel_id(h, p) + "-";
    replace_all(body, "id=\"", "id=\"" + id_prefix);
    replace_all(body, "href=\"#", "href=\"#" + id_prefix);
    replace_all(body, "url(#", "url(#" + id_prefix);
    std::string element = root + body;
    glyphs.take_from(element);
    return element;
}

/// width="W" height="H" viewBox="0 0 W H": a panel's size in points.
std::string size_attributes(const panel_layout& L) {
    return "width=\"" + svg_number(L.width) + "\" height=\"" + svg_number(L.height) + "\" viewBox=\"0 0 " + svg_number(L.width) + " " +
           svg_number(L.height) + "\"";
}

}  // namespace

namespace heatmap {

/// Text for an XML attribute or element.
std::string xml_escape(std::string_view text) {
    std::string out;
    for (char ch : text) {
        if (ch == '&') out += "&amp;";
        else if (ch == '<') out += "&lt;";
        else if (ch == '>') out += "&gt;";
        else if (ch == '"') out += "&quot;";
        else out += ch;
    }
    return out;
}


void glyph_library::take_from(std::string& svg) {
    const std::string open = "<symbol overflow=\"visible\" id=\"", close = "</symbol>";
    std::vector<std::pair<std::string, std::string>> renamed;  // a panel's id -> the shared one
    for (std::size_t at = svg.find(open); at != std::string::npos; at = svg.find(open, at)) {
        const std::size_t id_end = svg.find('"', at + open.size());
        const std::size_t content = svg.find('>', id_end) + 1;
        const std::size_t end = svg.find(close, content);
        if (id_end == std::string::npos || end == std::string::npos) return;  // not cairo's form: leave it
        const std::string outline = svg.substr(content, end - content);
        auto [it, added] = id_of_outline_.emplace(outline, "attn-glyph-" + std::to_string(id_of_outline_.size()));
        if (added) symbols_ += open + it->second + "\">" + outline + close + "\n";
        renamed.emplace_back(svg.substr(at + open.size(), id_end - at - open.size()), it->second);
        svg.erase(at, end + close.size() - at);
    }
    for (const auto& [local, shared] : renamed) replace_all(svg, "href=\"#" + local + "\"", "href=\"#" + shared + "\"");
}

std::vector<svg_panel> draw_svg_panels(const tensor_heatmap& h, const render_options& options, glyph_library& glyphs) {
    surface_ptr scratch(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1));
    const panel_layout L = lay_out(make_context(scratch.get()).get(), h, options);
    std::vector<svg_panel> panels;
    for (const panel& p : h.panels) {
        const std::string root = "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" "
                                 "class=\"panel\" id=\"" + panel_id(h, p) + "\" " + size_attributes(L) +
                                 " role=\"img\" aria-label=\"" + xml_escape(title(h, p)) + "\">";
        panels.push_back({panel_element(h, p, L, options, root, glyphs), {L.grid_x, L.grid_y, L.cell}});
    }
    return panels;
}

}  // namespace heatmap

void render_svg(const trace& t, const render_options& options, std::ostream& out) {
    const std::vector<tensor_heatmap> heatmaps = collect_or_fail(t, options);
    const page pg = lay_out_page(heatmaps, options);
    heatmap::glyph_library glyphs;
    std::string panels;
    for (const page::placed& at : pg.panels) {
        const tensor_heatmap& h = heatmaps[at.tensor];
        const panel& p = h.panels[at.panel];
        const panel_layout& L = pg.layouts[at.tensor];
        const std::string root = "<svg class=\"panel\" id=\"" + panel_id(h, p) + "\" x=\"" + svg_number(at.x) +
                                 "\" y=\"" + svg_number(at.y) + "\" " + size_attributes(L) + ">\n<title>" +
                                 heatmap::xml_escape(heatmap::title(h, p)) + "</title>";
        panels += panel_element(h, p, L, options, root, glyphs);
    }
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\""
        << svg_number(pg.width) << "pt\" height=\"" << svg_number(pg.height) << "pt\" viewBox=\"0 0 " << svg_number(pg.width) << ' '
        << svg_number(pg.height) << "\" version=\"1.1\">\n<defs>\n"
        << glyphs.symbols() << "</defs>\n" << panels << "</svg>\n";
}

void render_png(const trace& t, const render_options& options, std::ostream& out) {
    const std::vector<tensor_heatmap> heatmaps = collect_or_fail(t, options);
    const page pg = lay_out_page(heatmaps, options);
    const double scale = pg.width * pg.height * png_scale * png_scale <= png_max_pixels ? png_scale : 1.0;
    const double limit = 32767;  // cairo's largest image side
    if (pg.width * scale > limit || pg.height * scale > limit)
        throw error("the picture would be " + svg_number(pg.width) + " by " + svg_number(pg.height) +
                    " points, too large for a PNG: draw fewer panels (--stage, --batch-index, --head) or use --format svg");
    surface_ptr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(pg.width * scale),
                                                   static_cast<int>(pg.height * scale)));
    const context_ptr cr = make_context(surface.get());
    cairo_scale(cr.get(), scale, scale);
    set_colour(cr.get(), white);
    cairo_paint(cr.get());
    for (const page::placed& at : pg.panels) {
        cairo_save(cr.get());
        cairo_translate(cr.get(), at.x, at.y);
        draw_panel(cr.get(), heatmaps[at.tensor], heatmaps[at.tensor].panels[at.panel], pg.layouts[at.tensor], options);
        cairo_restore(cr.get());
    }
    check(cairo_status(cr.get()));
    cairo_surface_flush(surface.get());
    // Encoded into memory first: a stream's write error then reaches the caller as
    // thrown, not through cairo's C frames.
    std::string png;
    check(cairo_surface_write_to_png_stream(surface.get(), append_to_string, &png));
    out.write(png.data(), static_cast<std::streamsize>(png.size()));
}

}  // namespace attn
