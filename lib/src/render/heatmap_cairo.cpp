// --format png (heatmap_cairo.hpp): a canvas (heatmap_figure.hpp) on a cairo image
// surface, and the one measure of text every layout uses.
#include "attn/render/heatmap_cairo.hpp"

#include <cmath>
#include <cstdint>
#include <memory>

#include <cairo.h>

#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/render/heatmap_figure.hpp"

namespace attn {
namespace {

using heatmap::align;
using heatmap::box;
using heatmap::font;

struct surface_deleter {
    void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct context_deleter {
    void operator()(cairo_t* c) const { cairo_destroy(c); }
};
using surface_ptr = std::unique_ptr<cairo_surface_t, surface_deleter>;
using context_ptr = std::unique_ptr<cairo_t, context_deleter>;

void check_cairo(cairo_status_t status) {
    if (status != CAIRO_STATUS_SUCCESS)
        throw error(std::string("cannot draw the picture: ") + cairo_status_to_string(status));
}

/// A context on `surface` with no hinting, so that text measures the same on the page
/// as on the surface the layout measures on.
context_ptr unhinted_context(cairo_surface_t* surface) {
    check_cairo(cairo_surface_status(surface));
    context_ptr cr(cairo_create(surface));
    cairo_font_options_t* fo = cairo_font_options_create();
    cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
    cairo_font_options_set_hint_style(fo, CAIRO_HINT_STYLE_NONE);
    cairo_set_font_options(cr.get(), fo);
    cairo_font_options_destroy(fo);
    check_cairo(cairo_status(cr.get()));
    return cr;
}

void select_font(cairo_t* cr, const font& f) {
    cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                           f.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, f.size);
}

void source_colour(cairo_t* cr, const rgb& c) { cairo_set_source_rgb(cr, c.r, c.g, c.b); }

cairo_status_t append_png_bytes(void* closure, const unsigned char* data, unsigned int length) {
    static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
    return CAIRO_STATUS_SUCCESS;
}

/// The canvas of the PNG: every call straight onto a cairo context.
class cairo_canvas final : public heatmap::canvas {
public:
    explicit cairo_canvas(cairo_t* cr) : cr_(cr) {}

    void begin_panel(const heatmap::tensor_heatmap&, const heatmap::panel&, double x, double y, double, double,
                     double scale) override {
        cairo_save(cr_);
        cairo_translate(cr_, x, y);
        cairo_scale(cr_, scale, scale);
    }
    void end_panel() override { cairo_restore(cr_); }

    void fill_boxes(const std::vector<box>& boxes, const rgb& colour) override {
        if (boxes.empty()) return;
        for (const box& b : boxes) cairo_rectangle(cr_, b.x, b.y, b.w, b.h);
        source_colour(cr_, colour);
        cairo_fill(cr_);
    }

    void rounded_box(const box& b, double r, const rgb& fill, const rgb* line) override {
        cairo_new_sub_path(cr_);
        cairo_arc(cr_, b.x + b.w - r, b.y + r, r, -M_PI / 2, 0);
        cairo_arc(cr_, b.x + b.w - r, b.y + b.h - r, r, 0, M_PI / 2);
        cairo_arc(cr_, b.x + r, b.y + b.h - r, r, M_PI / 2, M_PI);
        cairo_arc(cr_, b.x + r, b.y + r, r, M_PI, 3 * M_PI / 2);
        cairo_close_path(cr_);
        source_colour(cr_, fill);
        if (line == nullptr) {
            cairo_fill(cr_);
            return;
        }
        cairo_fill_preserve(cr_);
        source_colour(cr_, *line);
        cairo_set_line_width(cr_, 1);
        cairo_stroke(cr_);
    }

    void outline_boxes(const std::vector<box>& boxes, const rgb& colour, double width) override {
        if (boxes.empty()) return;
        for (const box& b : boxes) cairo_rectangle(cr_, b.x, b.y, b.w, b.h);
        source_colour(cr_, colour);
        cairo_set_line_width(cr_, width);
        cairo_stroke(cr_);
    }

    void hatch(const std::vector<box>& boxes, const rgb& colour, bool crossed, double spacing) override {
        if (boxes.empty()) return;
        double x0 = boxes[0].x, y0 = boxes[0].y, x1 = x0, y1 = y0;
        cairo_save(cr_);
        for (const box& b : boxes) {
            cairo_rectangle(cr_, b.x, b.y, b.w, b.h);
            x0 = std::min(x0, b.x), y0 = std::min(y0, b.y);
            x1 = std::max(x1, b.x + b.w), y1 = std::max(y1, b.y + b.h);
        }
        cairo_clip(cr_);
        const double h = y1 - y0;
        for (double d = -h; d < x1 - x0; d += spacing) {
            cairo_move_to(cr_, x0 + d, y1);
            cairo_line_to(cr_, x0 + d + h, y0);
            if (crossed) {
                cairo_move_to(cr_, x0 + d, y0);
                cairo_line_to(cr_, x0 + d + h, y1);
            }
        }
        source_colour(cr_, colour);
        cairo_set_line_width(cr_, 0.8);
        cairo_stroke(cr_);
        cairo_restore(cr_);
    }

    void colour_ramp(const box& b) override {
        cairo_pattern_t* ramp = cairo_pattern_create_linear(0, b.y + b.h, 0, b.y);
        constexpr int stops = 32;
        for (int k = 0; k <= stops; ++k) {
            const rgb c = viridis(k / double(stops));
            cairo_pattern_add_color_stop_rgb(ramp, k / double(stops), c.r, c.g, c.b);
        }
        cairo_set_source(cr_, ramp);
        cairo_rectangle(cr_, b.x, b.y, b.w, b.h);
        cairo_fill(cr_);
        cairo_pattern_destroy(ramp);
    }

    void text(std::string_view text, double x, double y, const font& f, const rgb& colour, align a,
              bool turned) override {
        const std::string s(text);
        select_font(cr_, f);
        source_colour(cr_, colour);
        cairo_text_extents_t e;
        cairo_text_extents(cr_, s.c_str(), &e);
        const double shift = a == align::left ? 0 : a == align::centre ? -e.x_advance / 2 : -e.x_advance;
        cairo_save(cr_);
        cairo_translate(cr_, x, y);
        if (turned) cairo_rotate(cr_, -M_PI / 2);
        cairo_move_to(cr_, shift, 0);
        cairo_show_text(cr_, s.c_str());
        cairo_restore(cr_);
    }

private:
    cairo_t* cr_;
};

std::string points_text(double v) { return std::to_string(static_cast<long long>(std::lround(v))); }

}  // namespace

namespace heatmap {

double text_width(std::string_view text, const font& f) {
    // One 1x1 surface to measure on, kept: layouts measure every value of every cell.
    static const surface_ptr scratch(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1));
    static const context_ptr measure = unhinted_context(scratch.get());
    select_font(measure.get(), f);
    cairo_text_extents_t e;
    cairo_text_extents(measure.get(), std::string(text).c_str(), &e);
    return e.x_advance;
}

}  // namespace heatmap

namespace {

/// The pixels per point of `pg` as a PNG; refuses a page larger than a PNG's side, or whose
/// canvas (4 bytes a pixel; its size comes from the labels too: a vocabulary's token of
/// 5,000 characters) is larger than c.limits.max_memory.
double png_page_scale(const heatmap::page& pg, const config& c) {
    const double scale = pg.width * pg.height * png_scale * png_scale <= png_max_pixels ? png_scale : 1.0;
    const double limit = 32767;  // cairo's largest image side
    if (pg.width * scale > limit || pg.height * scale > limit)
        throw error("the picture would be " + points_text(pg.width) + " by " + points_text(pg.height) +
                    " points, too large for a PNG: draw fewer panels (--stage, --batch-index, --head) or use --format svg");
    const std::uint64_t canvas_bytes = 4 * static_cast<std::uint64_t>(pg.width * scale) * static_cast<std::uint64_t>(pg.height * scale);
    if (c.limits.max_memory != 0 && canvas_bytes > c.limits.max_memory)
        throw error("the picture would be " + points_text(pg.width * scale) + " by " + points_text(pg.height * scale) +
                    " pixels, a canvas of " + format_bytes(canvas_bytes) + ", more than the " +
                    format_bytes(c.limits.max_memory) + " --max-memory allows: draw fewer panels (--stage, --batch-index, "
                    "--head), with shorter labels, or use --format svg");
    return scale;
}

/// The stages `plan` shows as the run will hand them to the picture, in their shapes, every
/// element one stand-in value (1: true for the mask), read through zero strides, so nothing of
/// their size is held.
trace stand_in_trace(const config& c, const stage_plan& plan) {
    trace t;
    t.cfg = c;
    const tensor one("one", {"element"}, xt::xarray<float>{1.0f});
    for (const planned_stage& s : make_plan(c, plan).stages) {
        if (!plan.shows(s.id) || s.gradient) continue;
        stage st;
        st.info = &info_of(s.id);
        for (const planned_tensor& p : s.tensors) {
            tensor x = as_strided(one, "", p.name, p.dims, p.layout.shape, tensor_strides(p.layout.shape.size(), 0));
            x.type = p.type;
            x.view_of.clear();
            st.tensors.push_back(std::move(x));
        }
        t.stages.push_back(std::move(st));
    }
    return t;
}

}  // namespace

void check_png_size(const config& c, const stage_plan& plan, const render_options& options) {
    const trace t = stand_in_trace(c, plan);
    std::vector<heatmap::tensor_heatmap> heatmaps = heatmap::collect_pictured(t, options);
    for (heatmap::tensor_heatmap& h : heatmaps)  // a mask masks some key: its mark in the legend
        if (h.mask != nullptr && c.kv_seq > 1) h.present[static_cast<std::size_t>(heatmap::cell_kind::masked)] = true;
    png_page_scale(heatmap::lay_out_page(t, heatmaps, options), c);
}

std::vector<std::string> render_png(const trace& t, const render_options& options, std::ostream& out) {
    std::vector<heatmap::tensor_heatmap> heatmaps = heatmap::collect_pictured(t, options);
    const heatmap::page pg = heatmap::lay_out_page(t, heatmaps, options);
    const double scale = png_page_scale(pg, t.cfg);  // checked before the run too (check_png_size), from the sizes
    surface_ptr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, static_cast<int>(pg.width * scale),
                                                   static_cast<int>(pg.height * scale)));
    const context_ptr cr = unhinted_context(surface.get());
    cairo_scale(cr.get(), scale, scale);
    source_colour(cr.get(), {1, 1, 1});
    cairo_paint(cr.get());
    cairo_canvas canvas(cr.get());
    heatmap::draw_page(canvas, pg, heatmaps, options);
    check_cairo(cairo_status(cr.get()));
    cairo_surface_flush(surface.get());
    // Encoded into memory first: a stream's write error then reaches the caller as
    // thrown, not through cairo's C frames.
    std::string png;
    check_cairo(cairo_surface_write_to_png_stream(surface.get(), append_png_bytes, &png));
    out.write(png.data(), static_cast<std::streamsize>(png.size()));
    return pg.notes;
}

}  // namespace attn
