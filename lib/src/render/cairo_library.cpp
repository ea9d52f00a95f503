// cairo, opened when the first picture is drawn rather than when attn starts.
//
// attn is not linked against libcairo: loading it and the dozen libraries it needs (pixman,
// fontconfig, freetype, X11...) cost a few milliseconds of every run, pictures or not
// (README "Speed"). Instead this file defines each cairo function that heatmap_cairo.cpp
// calls, with cairo.h's own signature, as a call through the same function found with
// dlopen/dlsym in libcairo.so.2. Calling a cairo function not listed here fails at link time.
#include <dlfcn.h>

#include <string>

#include <cairo-svg.h>
#include <cairo.h>

#include "attn/compute/error.hpp"

namespace {

/// libcairo.so.2, opened once; throws attn::error when it is not installed.
void* cairo_library() {
    static void* const handle = [] {
        void* h = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
        if (h == nullptr) {
            const char* why = dlerror();
            throw attn::error("pictures (--format heatmap, svg, png, html) need cairo: cannot load libcairo.so.2" +
                              (why != nullptr ? ": " + std::string(why) : std::string()));
        }
        return h;
    }();
    return handle;
}

void* cairo_symbol(const char* name) {
    void* symbol = dlsym(cairo_library(), name);
    if (symbol == nullptr) throw attn::error(std::string("libcairo.so.2 has no ") + name);
    return symbol;
}

}  // namespace

// RET NAME PARAMS { return (the NAME in libcairo.so.2) ARGS; }
#define ATTN_CAIRO(ret, name, params, args)                                                   \
    extern "C" ret name params {                                                              \
        static const auto real = reinterpret_cast<decltype(&::name)>(cairo_symbol(#name)); \
        return real args;                                                                     \
    }

ATTN_CAIRO(void, cairo_arc, (cairo_t* cr, double xc, double yc, double r, double a1, double a2), (cr, xc, yc, r, a1, a2))
ATTN_CAIRO(void, cairo_clip, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_close_path, (cairo_t* cr), (cr))
ATTN_CAIRO(cairo_t*, cairo_create, (cairo_surface_t* target), (target))
ATTN_CAIRO(void, cairo_destroy, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_fill, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_fill_preserve, (cairo_t* cr), (cr))
ATTN_CAIRO(cairo_font_options_t*, cairo_font_options_create, (void), ())
ATTN_CAIRO(void, cairo_font_options_destroy, (cairo_font_options_t* o), (o))
ATTN_CAIRO(void, cairo_font_options_set_hint_metrics, (cairo_font_options_t* o, cairo_hint_metrics_t m), (o, m))
ATTN_CAIRO(void, cairo_font_options_set_hint_style, (cairo_font_options_t* o, cairo_hint_style_t s), (o, s))
ATTN_CAIRO(cairo_surface_t*, cairo_image_surface_create, (cairo_format_t f, int w, int h), (f, w, h))
ATTN_CAIRO(void, cairo_line_to, (cairo_t* cr, double x, double y), (cr, x, y))
ATTN_CAIRO(void, cairo_move_to, (cairo_t* cr, double x, double y), (cr, x, y))
ATTN_CAIRO(void, cairo_new_sub_path, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_paint, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_pattern_add_color_stop_rgb, (cairo_pattern_t* p, double o, double r, double g, double b),
           (p, o, r, g, b))
ATTN_CAIRO(cairo_pattern_t*, cairo_pattern_create_linear, (double x0, double y0, double x1, double y1),
           (x0, y0, x1, y1))
ATTN_CAIRO(void, cairo_pattern_destroy, (cairo_pattern_t* p), (p))
ATTN_CAIRO(void, cairo_rectangle, (cairo_t* cr, double x, double y, double w, double h), (cr, x, y, w, h))
ATTN_CAIRO(void, cairo_restore, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_rotate, (cairo_t* cr, double angle), (cr, angle))
ATTN_CAIRO(void, cairo_save, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_scale, (cairo_t* cr, double sx, double sy), (cr, sx, sy))
ATTN_CAIRO(void, cairo_select_font_face,
           (cairo_t* cr, const char* family, cairo_font_slant_t slant, cairo_font_weight_t weight),
           (cr, family, slant, weight))
ATTN_CAIRO(void, cairo_set_font_options, (cairo_t* cr, const cairo_font_options_t* o), (cr, o))
ATTN_CAIRO(void, cairo_set_font_size, (cairo_t* cr, double size), (cr, size))
ATTN_CAIRO(void, cairo_set_line_width, (cairo_t* cr, double width), (cr, width))
ATTN_CAIRO(void, cairo_set_source, (cairo_t* cr, cairo_pattern_t* source), (cr, source))
ATTN_CAIRO(void, cairo_set_source_rgb, (cairo_t* cr, double r, double g, double b), (cr, r, g, b))
ATTN_CAIRO(void, cairo_show_text, (cairo_t* cr, const char* utf8), (cr, utf8))
ATTN_CAIRO(cairo_status_t, cairo_status, (cairo_t* cr), (cr))
ATTN_CAIRO(const char*, cairo_status_to_string, (cairo_status_t status), (status))
ATTN_CAIRO(void, cairo_stroke, (cairo_t* cr), (cr))
ATTN_CAIRO(void, cairo_surface_destroy, (cairo_surface_t* s), (s))
ATTN_CAIRO(void, cairo_surface_finish, (cairo_surface_t* s), (s))
ATTN_CAIRO(void, cairo_surface_flush, (cairo_surface_t* s), (s))
ATTN_CAIRO(cairo_status_t, cairo_surface_status, (cairo_surface_t* s), (s))
ATTN_CAIRO(cairo_status_t, cairo_surface_write_to_png_stream, (cairo_surface_t* s, cairo_write_func_t w, void* c),
           (s, w, c))
ATTN_CAIRO(cairo_surface_t*, cairo_svg_surface_create_for_stream,
           (cairo_write_func_t w, void* c, double width, double height), (w, c, width, height))
ATTN_CAIRO(void, cairo_svg_surface_set_document_unit, (cairo_surface_t* s, cairo_svg_unit_t unit), (s, unit))
ATTN_CAIRO(void, cairo_text_extents, (cairo_t* cr, const char* utf8, cairo_text_extents_t* e), (cr, utf8, e))
ATTN_CAIRO(void, cairo_translate, (cairo_t* cr, double tx, double ty), (cr, tx, ty))
