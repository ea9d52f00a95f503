// The figure of every picture file (heatmap_figure.hpp): a panel's layout and drawing
// on a canvas, and the two pages, stack and slide.
#include "attn/render/heatmap_figure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "attn/compute/error.hpp"
#include "attn/compute/mask.hpp"
#include "attn/render/render_stats.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/join.hpp"

namespace attn::heatmap {
namespace {

// --- style ----------------------------------------------------------------------------

constexpr double pad = 14;           // inside the card, all round
constexpr font title_font{13, true};  // the panel's title
constexpr font label_font{10.5};      // "query i", "key j"
constexpr font number_font{9};        // key and query numbers, colour bar, notes, legend
constexpr double bar_width = 12;
constexpr double max_cell = 36, min_cell = 2;
constexpr double grid_extent = 300;  // the larger side of a grid aims at this, within the cell limits
constexpr double swatch = 10;        // a legend's sample cell
constexpr double legend_gap = 14;    // between legend entries

const rgb ink{0.13, 0.13, 0.13};
const rgb muted_ink{0.40, 0.40, 0.40};
const rgb card_border{0.80, 0.80, 0.80};
const rgb masked_fill{0.93, 0.93, 0.93};
const rgb masked_line{0.60, 0.60, 0.60};
const rgb nan_fill{0.99, 0.84, 0.84};
const rgb nan_line{0.80, 0.12, 0.12};
const rgb paper{1, 1, 1};

/// "−∞" rather than "-inf" in a cell: shorter, and what a student writes.
std::string mark_text(cell_kind k) {
    return k == cell_kind::neg_inf ? "−∞" : k == cell_kind::pos_inf ? "+∞" : k == cell_kind::nan ? "NaN" : "";
}

std::string mark_label(cell_kind k) { return k == cell_kind::masked ? "masked" : mark_text(k); }

/// The marks legend's entries: the kinds of marked cell the tensor has.
std::vector<cell_kind> marks_of(const tensor_heatmap& h) {
    std::vector<cell_kind> marks;
    for (cell_kind k : {cell_kind::masked, cell_kind::neg_inf, cell_kind::pos_inf, cell_kind::nan})
        if (h.has(k)) marks.push_back(k);
    return marks;
}

/// The smallest of 1, 2, 5, 10, 20, 50, ... with `step` cells at least `room` wide.
std::size_t label_step(double room, double cell) {
    for (std::size_t base = 1;; base *= 10)
        for (std::size_t m : {1, 2, 5})
            if (static_cast<double>(base * m) * cell >= room) return base * m;
}

/// A panel's title: "softmax.weights — batch 0, head 1"; on a slide, where the stage's
/// heading names the tensor, "batch 0, head 1".
std::string panel_title(const tensor_heatmap& h, const panel& p, const render_options& options) {
    return options.layout == picture_layout::slide ? place(p) : title(h, p);
}

/// The colour bar's two labels: the scale's top and bottom (true/false for booleans).
std::pair<std::string, std::string> bar_labels(const tensor_heatmap& h, const render_options& options) {
    if (h.boolean()) return {"true", h.from->id() == stage_id::mask ? "" : "false"};
    return {number_text(h.scale.hi, options.precision), number_text(h.scale.lo, options.precision)};
}

/// The text of a value cell: two decimals, fixed (cells are small; the tooltip and the
/// tables have more), "0.00" for a value that rounds to zero from either side.
std::string value_text(float v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v));
    return std::string(buf) == "-0.00" ? "0.00" : buf;
}

// --- a panel --------------------------------------------------------------------------

/// The boxes of marked cells, by kind, to fill and hatch once per kind.
struct marked_boxes {
    std::vector<box> masked, nan, inf;

    void add(cell_kind k, const box& b) { (k == cell_kind::masked ? masked : k == cell_kind::nan ? nan : inf).push_back(b); }
};

/// Masked cells grey, hatched; NaN pink, cross-hatched red; ±inf white, outlined grey.
void draw_marked(canvas& c, const marked_boxes& boxes, double spacing) {
    c.fill_boxes(boxes.masked, masked_fill);
    c.fill_boxes(boxes.nan, nan_fill);
    c.fill_boxes(boxes.inf, paper);
    c.hatch(boxes.masked, masked_line, false, spacing);
    c.hatch(boxes.nan, nan_line, true, spacing);
    std::vector<box> inset;
    for (const box& b : boxes.inf) inset.push_back({b.x + 0.5, b.y + 0.5, b.w - 1, b.h - 1});
    c.outline_boxes(inset, masked_line, 1);
}

/// 256 shades of the colour map, as matplotlib's table and 8-bit pixels have: cells of
/// one shade are filled together.
constexpr int shades = 256;

/// The cells, then the text in them: values when they fit, ±∞ and NaN when there is room.
void draw_cells(canvas& c, const tensor_heatmap& h, const panel& p, const panel_layout& L) {
    const double gap = L.cell >= 10 ? 1.0 : 0.0;  // white lines between cells, when they are large enough
    const auto cell_box = [&](std::size_t r, std::size_t col) {
        return box{L.grid_x + col * L.cell + gap / 2, L.grid_y + r * L.cell + gap / 2, L.cell - gap, L.cell - gap};
    };
    std::vector<std::vector<box>> by_shade(shades);
    marked_boxes marked;
    for (std::size_t r = 0; r < p.queries.size(); ++r)
        for (std::size_t col = 0; col < p.keys.size(); ++col) {
            const cell_kind k = h.kind(p, p.queries[r], p.keys[col]);
            const double position = h.scale.position(h.at(p, p.queries[r], p.keys[col]));
            if (k == cell_kind::value)
                by_shade[static_cast<int>(std::lround(position * (shades - 1)))].push_back(cell_box(r, col));
            else
                marked.add(k, cell_box(r, col));
        }
    for (int shade = 0; shade < shades; ++shade) c.fill_boxes(by_shade[shade], viridis(shade / double(shades - 1)));
    draw_marked(c, marked, std::clamp(L.cell / 5, 3.0, 6.0));

    const font mark_font{std::clamp(L.cell * 0.3, 6.0, 11.0)};
    const font value_font{L.value_size};
    for (std::size_t r = 0; r < p.queries.size(); ++r)
        for (std::size_t col = 0; col < p.keys.size(); ++col) {
            const box b = cell_box(r, col);
            const double cx = b.x + b.w / 2, cy = b.y + b.h / 2;
            const float v = h.at(p, p.queries[r], p.keys[col]);
            const cell_kind k = h.kind(p, p.queries[r], p.keys[col]);
            if (k == cell_kind::value && L.values_in_cells) {
                const rgb fill = viridis(h.scale.position(v));
                c.text(value_text(v), cx, cy + value_font.size * 0.36, value_font,
                       relative_luminance(fill) > 0.3 ? ink : paper, align::centre);
            } else if ((k == cell_kind::neg_inf || k == cell_kind::pos_inf) && L.cell >= 14) {
                c.text(mark_text(k), cx, cy + mark_font.size * 0.36, mark_font, muted_ink, align::centre);
            } else if (k == cell_kind::nan && L.cell >= 24) {
                // On a white label over the hatching, so that the red text reads.
                const double w = text_width(mark_text(k), mark_font) + 4;
                c.rounded_box({cx - w / 2, cy - mark_font.size * 0.6, w, mark_font.size * 1.2}, 2, paper, nullptr);
                c.text(mark_text(k), cx, cy + mark_font.size * 0.36, mark_font, nan_line, align::centre);
            }
        }
}

/// The colour map from the scale's bottom to its top, with both written beside it; for
/// a boolean tensor a block for true (and one for false, except in the mask, whose
/// false cells are masked).
void draw_colour_bar(canvas& c, const tensor_heatmap& h, double x, double y, double H, const render_options& options) {
    if (!h.boolean() && !h.has(cell_kind::value)) return;  // no value has a colour (all NaN, say)
    const auto [top, bottom] = bar_labels(h, options);
    if (h.boolean()) {
        c.fill_boxes({{x, y, bar_width, H / 2}}, viridis(1.0));
        if (!bottom.empty()) c.fill_boxes({{x, y + H / 2, bar_width, H / 2}}, viridis(0.0));
    } else {
        c.colour_ramp({x, y, bar_width, H});
    }
    c.outline_boxes({{x + 0.25, y + 0.25, bar_width - 0.5, (bottom.empty() ? H / 2 : H) - 0.5}}, card_border, 0.5);
    c.text(top, x + bar_width + 5, y + number_font.size * 0.8, number_font, ink);
    if (!bottom.empty()) c.text(bottom, x + bar_width + 5, y + H, number_font, ink);
}

/// "▨ masked  ▩ NaN": a sample of each kind of marked cell the tensor has, from (x, y)
/// across, or down when `down`.
void draw_marks_legend(canvas& c, const tensor_heatmap& h, double x, double y, bool down = false) {
    for (cell_kind k : marks_of(h)) {
        marked_boxes marked;
        marked.add(k, {x, y, swatch, swatch});
        draw_marked(c, marked, 3);
        const std::string label = mark_label(k);
        c.text(label, x + swatch + 4, y + swatch - 1, number_font, ink);
        if (down)
            y += swatch + 6;
        else
            x += swatch + 4 + text_width(label, number_font) + legend_gap;
    }
}

/// The room right of a slide's block for its colour bar, its labels and its marks legend.
double key_width(const tensor_heatmap& h, const render_options& options) {
    const auto [top, bottom] = bar_labels(h, options);
    double w = bar_width + 5 + std::max(text_width(top, number_font), text_width(bottom, number_font));
    for (cell_kind k : marks_of(h)) w = std::max(w, swatch + 4 + text_width(mark_label(k), number_font));
    return 10 + w;
}

// --- pages ------------------------------------------------------------------------------

constexpr double page_margin = 16;
constexpr double panel_gap = 12;
constexpr std::size_t panels_per_row = 4;

constexpr font stats_font{9};

/// --stats: "softmax.weights stats: min ..." for each drawn tensor (of the whole tensor), else none.
std::vector<std::string> stats_lines(const trace& t, const std::vector<tensor_heatmap>& heatmaps,
                                     const render_options& options) {
    std::vector<std::string> lines;
    if (!options.stats) return lines;
    for (const tensor_heatmap& h : heatmaps)
        lines.push_back(h.name() + " " + stats_text(t.cfg, h, options));
    return lines;
}

/// Rows of up to four panels; a batch item's heads start a new row; tensors one below another,
/// each followed by its line of statistics when there are `stats`.
void stack_panels(page& pg, const std::vector<tensor_heatmap>& heatmaps, const std::vector<std::string>& stats) {
    double y = page_margin;
    for (std::size_t t = 0; t < heatmaps.size(); ++t) {
        const tensor_heatmap& h = heatmaps[t];
        const panel_layout& L = pg.layouts[t];
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
        if (t < stats.size()) {  // the line's baseline below the panels
            y += L.height + stats_font.size + 4;
            pg.lines.push_back({stats[t], page_margin, y, stats_font, true});
            pg.width = std::max(pg.width, page_margin * 2 + text_width(stats[t], stats_font));
            y += panel_gap * 2;
        } else {
            y += L.height + panel_gap * 2;
        }
    }
    pg.height = y - panel_gap * 2 + page_margin;
}

// The slide, in points of its 960 by 540 page.
constexpr double slide_margin = 28;
constexpr font slide_title_font{20, true};
constexpr font slide_subtitle_font{11};
constexpr font heading_font{13, true};
constexpr font slide_note_font{10};
constexpr double block_gap = 28;       // between the tensors' blocks
constexpr double slide_panel_gap = 8;  // between panels (page points)
constexpr double min_slide_scale = 0.3;  // smaller than this, a panel's numbers no longer read
constexpr double max_slide_scale = 2.0;

/// A tensor's panels in rows: a row per batch item, of up to `columns` panels each.
std::vector<std::vector<std::size_t>> panel_rows(const tensor_heatmap& h, std::size_t columns) {
    std::vector<std::vector<std::size_t>> rows;
    for (std::size_t k = 0; k < h.panels.size(); ++k) {
        const bool new_batch = k > 0 && h.panels[k].batch != h.panels[k - 1].batch;
        if (rows.empty() || rows.back().size() == columns || new_batch) rows.emplace_back();
        rows.back().push_back(k);
    }
    return rows;
}

/// The most panels of one batch item in any tensor: the widest a row need be.
std::size_t widest_batch(const std::vector<tensor_heatmap>& heatmaps) {
    std::size_t widest = 1;
    for (const tensor_heatmap& h : heatmaps)
        for (const auto& row : panel_rows(h, h.panels.size())) widest = std::max(widest, row.size());
    return widest;
}

/// The scale at which the tensors' blocks, `columns` panels wide, fit the room below the
/// title (`top`) and the headings.
double fitting_scale(const page& pg, const std::vector<tensor_heatmap>& heatmaps, std::size_t columns, double top,
                     double bottom_reserved, const render_options& options) {
    double fixed_w = slide_margin * 2 + block_gap * static_cast<double>(heatmaps.size() - 1), scaled_w = 0;
    double scale = max_slide_scale;
    const double room_h = slide_height - top - heading_font.size - 10 - slide_margin - bottom_reserved;
    for (std::size_t t = 0; t < heatmaps.size(); ++t) {
        const auto rows = panel_rows(heatmaps[t], columns);
        std::size_t across = 0;
        for (const auto& row : rows) across = std::max(across, row.size());
        fixed_w += slide_panel_gap * static_cast<double>(across - 1) + key_width(heatmaps[t], options);
        scaled_w += pg.layouts[t].width * static_cast<double>(across);
        const double gaps_h = slide_panel_gap * static_cast<double>(rows.size() - 1);
        scale = std::min(scale, (room_h - gaps_h) / (pg.layouts[t].height * static_cast<double>(rows.size())));
    }
    return std::min(scale, (slide_width - fixed_w) / scaled_w);
}

/// `f`, smaller when `text` would be wider than `room`, so that a slide's line stays on the page.
font fitted(const std::string& text, font f, double room) {
    const double w = text_width(text, f);
    if (w > room) f.size = std::max(5.0, std::floor(f.size * room / w * 10) / 10);
    return f;
}

/// "seed 24 · B 2 · Sq 5 · Sk 5 · D 8 · H 4 (dk 2) · mask causal · pos alibi": the run, for the slide's title line.
std::string run_line(const config& c, const render_options& options) {
    std::string line;
    if (!options.seed_secret) line += "seed " + std::to_string(c.seed) + " · ";
    line += "B " + std::to_string(c.batch) + " · Sq " + std::to_string(c.seq) + " · Sk " + std::to_string(c.kv_seq) +
            " · D " + std::to_string(c.d_model) + " · H " + std::to_string(c.heads) + " (dk " +
            std::to_string(c.heads > 0 ? c.d_model / c.heads : 0) + ")";
    if (c.mask.any()) line += " · mask " + mask_kinds_to_string(c.mask);
    if (c.pos != position_encoding::none) line += " · pos " + std::string(position_encoding_name(c.pos));
    return line;
}

/// The stages shown, side by side on a 16:9 page, as heatmap_figure.hpp describes.
void slide_panels(page& pg, const trace& t, std::vector<tensor_heatmap>& heatmaps, const render_options& options) {
    const double stats_room = options.stats ? (slide_note_font.size + 4) * static_cast<double>(heatmaps.size()) : 0;
    pg.width = slide_width;
    pg.height = slide_height;
    std::string stages;  // each stage once, though it draws two tensors (rope: cos and sin)
    for (std::size_t k = 0; k < heatmaps.size(); ++k)
        if (k == 0 || heatmaps[k].from != heatmaps[k - 1].from)
            stages += (stages.empty() ? "" : ", ") + heatmaps[k].from->info->step.text() + " " +
                      std::string(heatmaps[k].from->name());
    double y = slide_margin + slide_title_font.size;
    const std::string title = "Attention, stage by stage: " + stages;
    pg.lines.push_back({title, slide_margin, y, fitted(title, slide_title_font, slide_width - 2 * slide_margin), false});
    y += slide_subtitle_font.size + 8;
    pg.lines.push_back({run_line(t.cfg, options), slide_margin, y, slide_subtitle_font, true});
    const double top = y + 16;

    // The most columns that fit best; fewer panels while they would be too small to read.
    std::size_t columns = 1;
    for (;;) {
        bool cut = false;  // then a line at the foot says so
        for (const tensor_heatmap& h : heatmaps) cut = cut || h.panels.size() < h.panels_in_view;
        pg.scale = 0;
        for (std::size_t c = 1; c <= widest_batch(heatmaps); ++c) {
            const double s = fitting_scale(pg, heatmaps, c, top, (cut ? slide_note_font.size + 6 : 0) + stats_room, options);
            if (s > pg.scale + 1e-9) pg.scale = s, columns = c;
        }
        std::size_t most = 0;
        for (const tensor_heatmap& h : heatmaps) most = std::max(most, h.panels.size());
        if (pg.scale >= min_slide_scale || most <= 1) break;
        for (tensor_heatmap& h : heatmaps)
            if (h.panels.size() == most) h.panels.pop_back();
    }
    // One note for the tensors cut alike: "scores.scores and softmax.weights show 8 of 32 panels (batch 0)".
    std::vector<std::pair<std::string, std::vector<std::string>>> cuts;  // "8 of 32 panels (batch 0)" -> tensors
    std::vector<std::string> drawn_notes;  // pg.notes as the foot of the slide says them
    for (const tensor_heatmap& h : heatmaps) {
        if (h.panels.size() >= h.panels_in_view) continue;
        const std::string what = std::to_string(h.panels.size()) + " of " + std::to_string(h.panels_in_view) +
                                 " panels (" + panels_span(h) + ")";
        auto it = std::find_if(cuts.begin(), cuts.end(), [&](const auto& c) { return c.first == what; });
        if (it == cuts.end()) it = cuts.insert(cuts.end(), {what, {}});
        it->second.push_back(h.name());
    }
    for (const auto& [what, names] : cuts) {
        const std::string cut = join(names, ", ", " and ") + (names.size() > 1 ? " show " : " shows ") + what +
                                "; the others do not fit";
        pg.notes.push_back("--layout slide: " + cut + ": choose with --batch-index or --head, or use --layout stack");
        drawn_notes.push_back(cut + " on the slide");  // the picture says what it lacks, not which flags to give
    }

    // The blocks, left to right, each under its heading; the whole centred across the page.
    const double heading_y = top + heading_font.size;
    const double panels_y = heading_y + 10;
    double x = slide_margin;
    for (std::size_t tn = 0; tn < heatmaps.size(); ++tn) {
        const tensor_heatmap& h = heatmaps[tn];
        const panel_layout& L = pg.layouts[tn];
        const double w = L.width * pg.scale, hgt = L.height * pg.scale;
        double block_w = 0, row_y = panels_y;
        for (const auto& row : panel_rows(h, columns)) {
            double px = x;
            for (std::size_t k : row) {
                pg.panels.push_back({tn, k, px, row_y});
                px += w + slide_panel_gap;
            }
            block_w = std::max(block_w, px - slide_panel_gap - x);
            row_y += hgt + slide_panel_gap;
        }
        std::string heading = h.from->info->step.text() + " " + std::string(h.from->name()) + ": " +
                              stage_formula(t.cfg, h.from->name());
        if (text_width(heading, heading_font) > block_w) heading = h.from->info->step.text() + " " + h.name();
        pg.lines.push_back({heading, x, heading_y, heading_font, false});
        const double block_h = row_y - slide_panel_gap - panels_y;
        pg.keys.push_back({tn, x + block_w + 10, panels_y, std::clamp(block_h / 2, 72.0, 160.0)});
        x += block_w + key_width(h, options) + block_gap;
    }
    // Everything centred across the page, the title lines too; the blocks centred down
    // the room below the title.
    const double shift = std::max(0.0, (slide_width - slide_margin - (x - block_gap)) / 2);
    double bottom = panels_y;
    for (const page::placed& at : pg.panels) bottom = std::max(bottom, at.y + pg.layouts[at.tensor].height * pg.scale);
    const double room_bottom =
        slide_height - slide_margin - (slide_note_font.size + 4) * static_cast<double>(drawn_notes.size()) - stats_room;
    const double drop = std::max(0.0, (room_bottom - bottom) / 3);
    for (page::placed& at : pg.panels) at.x += shift, at.y += drop;
    for (page::key& k : pg.keys) k.x += shift, k.y += drop;
    for (std::size_t k = 0; k < pg.lines.size(); ++k) {
        page::line& l = pg.lines[k];
        if (k < 2) {
            l.x = (slide_width - text_width(l.text, l.f)) / 2;
        } else {
            l.x += shift;
            l.y += drop;
        }
    }
    double note_y = slide_height - slide_margin / 2;
    for (auto it = drawn_notes.rbegin(); it != drawn_notes.rend(); ++it, note_y -= slide_note_font.size + 4)
        pg.lines.push_back({*it, slide_margin, note_y, fitted(*it, slide_note_font, slide_width - 2 * slide_margin), true});
    const std::vector<std::string> stats = stats_lines(t, heatmaps, options);  // above the notes, at the foot
    for (auto it = stats.rbegin(); it != stats.rend(); ++it, note_y -= slide_note_font.size + 4)
        pg.lines.push_back({*it, slide_margin, note_y, fitted(*it, slide_note_font, slide_width - 2 * slide_margin), true});
}

/// The colour bar right of the grid, at least tall enough for its two labels, and the
/// marks legend below: the panel's size.
void lay_out_key(panel_layout& L, const tensor_heatmap& h, const render_options& options, double grid_w,
                 double grid_h, double content_w) {
    L.bar_x = L.grid_x + grid_w + 18;
    L.bar_y = L.grid_y;
    L.bar_height = std::max(grid_h, 72.0);
    const auto [top, bottom] = bar_labels(h, options);
    const double right =
        L.bar_x + bar_width + 5 + std::max(text_width(top, number_font), text_width(bottom, number_font)) + pad;
    double bottom_y = L.grid_y + std::max(grid_h, L.bar_height);

    const std::vector<cell_kind> marks = marks_of(h);
    double legend_w = 0;
    for (cell_kind k : marks) legend_w += swatch + 4 + text_width(mark_label(k), number_font) + legend_gap;
    if (!marks.empty()) {
        L.legend_y = bottom_y + 10;
        bottom_y = L.legend_y + swatch;
    }
    L.height = std::ceil(bottom_y + pad);
    const double key_label_w = text_width(h.columns.label, label_font);
    L.width = std::ceil(std::max({right, pad + content_w + pad, L.grid_x + legend_w + pad,
                                  L.grid_x + grid_w / 2 + key_label_w / 2 + pad}));
}

/// Values in the cells when every one of them fits.
void lay_out_values(panel_layout& L, const tensor_heatmap& h) {
    if (!h.boolean() && L.cell >= 28) {
        L.value_size = std::clamp(L.cell * 0.3, 7.0, 11.0);
        double widest = 0;
        for (const panel& p : h.panels)
            for (std::size_t i : p.queries)
                for (std::size_t j : p.keys)
                    if (h.kind(p, i, j) == cell_kind::value)
                        widest = std::max(widest, text_width(value_text(h.at(p, i, j)), font{L.value_size}));
        L.values_in_cells = widest <= L.cell - 4;
    }
}

}  // namespace

panel_layout lay_out(const tensor_heatmap& h, const render_options& options) {
    panel_layout L;
    const panel& first = h.panels.front();  // every panel of a tensor draws as many queries and keys
    const double rows = static_cast<double>(first.queries.size()), cols = static_cast<double>(first.keys.size());
    L.cell = std::clamp(std::floor(grid_extent / std::max(rows, cols)), min_cell, max_cell);
    const double grid_w = cols * L.cell, grid_h = rows * L.cell;

    double content_w = 0;  // the widest line that is not the grid
    for (const panel& p : h.panels) content_w = std::max(content_w, text_width(panel_title(h, p, options), title_font));
    double y = pad;
    L.title_y = y + title_font.size;
    y += title_font.size + 5;
    const std::string note = crop_note(h, first);
    if (!note.empty()) {
        L.note_y = y + number_font.size;
        y += number_font.size + 5;
        content_w = std::max(content_w, text_width(note, number_font));
    }
    y += 6;
    L.key_label_y = y + label_font.size;
    y += label_font.size + 4;
    if (h.column_labels.empty()) {
        L.key_numbers_y = y + number_font.size * 0.8;
        y += number_font.size + 4;
        L.key_step = label_step(text_width(std::to_string(first.keys.back()), number_font) + 5, L.cell);
    } else {  // tokens, turned to read upwards from just above the grid: as tall as the longest
        double tallest = 0;
        for (std::size_t j : first.keys) tallest = std::max(tallest, text_width(h.column_text(j), number_font));
        y += tallest + 4;
        L.key_numbers_y = y;
        L.key_step = label_step(number_font.size + 2, L.cell);
    }
    L.grid_y = std::ceil(y);  // whole points: shorter SVG paths, crisper PNG cells
    L.query_step = label_step(number_font.size + 2, L.cell);  // on rows whose number (h.row_number) is a multiple

    double x = pad;
    L.query_label_x = x + label_font.size * 0.6;
    x += label_font.size + 8;
    double widest_query = 0;  // its number, or its token
    for (std::size_t i : first.queries) widest_query = std::max(widest_query, text_width(h.row_text(i), number_font));
    x += widest_query;
    L.query_numbers_x = x;
    L.grid_x = std::ceil(x + 5);

    if (options.layout == picture_layout::slide) {  // the slide draws one colour bar and legend per tensor
        L.height = std::ceil(L.grid_y + grid_h + pad);
        L.width = std::ceil(std::max({L.grid_x + grid_w + pad, pad + content_w + pad,
                                      L.grid_x + grid_w / 2 + text_width(h.columns.label, label_font) / 2 + pad}));
    } else {
        lay_out_key(L, h, options, grid_w, grid_h, content_w);
    }
    lay_out_values(L, h);
    return L;
}

void draw_panel(canvas& c, const tensor_heatmap& h, const panel& p, const panel_layout& L,
                const render_options& options) {
    c.rounded_box({0.5, 0.5, L.width - 1, L.height - 1}, 6, paper, &card_border);
    c.text(panel_title(h, p, options), pad, L.title_y, title_font, ink);
    if (L.note_y != 0) c.text(crop_note(h, p), pad, L.note_y, number_font, muted_ink);

    // Axis labels: "key j" over the grid, "query i" turned up the left side (a table's:
    // "feature" or "head dim", and "position").
    const double grid_w = static_cast<double>(p.keys.size()) * L.cell;
    const double grid_h = static_cast<double>(p.queries.size()) * L.cell;
    c.text(h.columns.label, L.grid_x + grid_w / 2, L.key_label_y, label_font, muted_ink, align::centre);
    c.text(h.rows.label, L.query_label_x + label_font.size * 0.36, L.grid_y + grid_h / 2, label_font, muted_ink,
           align::centre, true);

    for (std::size_t col = 0; col < p.keys.size(); ++col) {
        if (p.keys[col] % L.key_step != 0) continue;
        if (h.column_labels.empty())
            c.text(std::to_string(p.keys[col]), L.grid_x + (col + 0.5) * L.cell, L.key_numbers_y, number_font, muted_ink,
                   align::centre);
        else  // a token, read upwards from the grid's top
            c.text(h.column_text(p.keys[col]), L.grid_x + (col + 0.5) * L.cell + number_font.size * 0.36,
                   L.key_numbers_y, number_font, muted_ink, align::left, true);
    }
    for (std::size_t r = 0; r < p.queries.size(); ++r)
        if (h.row_number(p.queries[r]) % L.query_step == 0 || p.queries.size() == 1)
            c.text(h.row_text(p.queries[r]), L.query_numbers_x,
                   L.grid_y + (r + 0.5) * L.cell + number_font.size * 0.36, number_font, muted_ink, align::right);

    draw_cells(c, h, p, L);
    if (L.bar_height != 0) draw_colour_bar(c, h, L.bar_x, L.bar_y, L.bar_height, options);
    if (L.legend_y != 0) draw_marks_legend(c, h, L.grid_x, L.legend_y);
}

page lay_out_page(const trace& t, std::vector<tensor_heatmap>& heatmaps, const render_options& options) {
    page pg;
    for (const tensor_heatmap& h : heatmaps) pg.layouts.push_back(lay_out(h, options));
    if (options.layout == picture_layout::slide)
        slide_panels(pg, t, heatmaps, options);
    else
        stack_panels(pg, heatmaps, stats_lines(t, heatmaps, options));
    return pg;
}

void draw_page(canvas& c, const page& pg, const std::vector<tensor_heatmap>& heatmaps, const render_options& options) {
    for (const page::line& l : pg.lines) c.text(l.text, l.x, l.y, l.f, l.muted ? muted_ink : ink);
    for (const page::key& k : pg.keys) {
        draw_colour_bar(c, heatmaps[k.tensor], k.x, k.y, k.height, options);
        draw_marks_legend(c, heatmaps[k.tensor], k.x, k.y + k.height + 12, true);
    }
    for (const page::placed& at : pg.panels) {
        const tensor_heatmap& h = heatmaps[at.tensor];
        const panel_layout& L = pg.layouts[at.tensor];
        c.begin_panel(h, h.panels[at.panel], at.x, at.y, L.width, L.height, pg.scale);
        draw_panel(c, h, h.panels[at.panel], L, options);
        c.end_panel();
    }
}

std::vector<tensor_heatmap> collect_pictured(const trace& t, const render_options& options) {
    std::vector<tensor_heatmap> heatmaps = collect(t, options, picture_max_side);
    if (heatmaps.empty())
        throw usage_error("no stage shown has a tensor to draw (this run draws " + drawable_stages_text(t.cfg) + ")");
    return heatmaps;
}

std::string panel_id(const tensor_heatmap& h, const panel& p) {
    std::string tensor = h.values->name;  // a name from a file may hold anything: an id holds [A-Za-z0-9_.]
    for (char& ch : tensor)
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '.') ch = '_';
    std::string id = std::string(h.from->name()) + "-" + tensor;
    if (!p.every_batch) id += "-b" + std::to_string(p.batch);
    return p.head ? id + "-h" + std::to_string(*p.head) : id;
}

}  // namespace attn::heatmap
