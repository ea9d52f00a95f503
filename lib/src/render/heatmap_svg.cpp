// --format svg and html's panels (heatmap_svg.hpp): a canvas (heatmap_figure.hpp) that
// writes SVG elements. Cells of one colour are one <path>; hatching is lines clipped
// to the cells; every id (a clip, the colour bar's gradient) starts with its panel's id.
#include "attn/render/heatmap_svg.hpp"

#include <cstdio>
#include <sstream>

#include "attn/render/heatmap_figure.hpp"
#include "attn/text/number_text.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {
namespace {

using heatmap::align;
using heatmap::box;
using heatmap::font;

/// A coordinate or length: at most 6 significant digits, no trailing zeros.
std::string svg_num(double v) { return significant_text(v); }

std::string svg_colour(const rgb& c) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", rgb::byte(c.r), rgb::byte(c.g), rgb::byte(c.b));
    return buf;
}

/// "Mx yhWvHh-Wz" for each box: one path data string for all of them.
std::string boxes_path(const std::vector<box>& boxes) {
    std::string d;
    for (const box& b : boxes)
        d += "M" + svg_num(b.x) + " " + svg_num(b.y) + "h" + svg_num(b.w) + "v" + svg_num(b.h) + "h" + svg_num(-b.w) + "z";
    return d;
}

/// width="W" height="H" viewBox="0 0 w h": a panel drawn at `scale`.
std::string panel_size(double width, double height, double scale) {
    return "width=\"" + svg_num(width * scale) + "\" height=\"" + svg_num(height * scale) + "\" viewBox=\"0 0 " +
           svg_num(width) + " " + svg_num(height) + "\"";
}

/// The canvas of the SVG: each call appends elements to `svg`.
class svg_canvas final : public heatmap::canvas {
public:
    /// `standalone`: each panel a root <svg> of its own (for html), not one placed on a page.
    explicit svg_canvas(bool standalone) : standalone_(standalone) {}

    std::string svg;

    void begin_panel(const heatmap::tensor_heatmap& h, const heatmap::panel& p, double x, double y, double width,
                     double height, double scale) override {
        id_ = heatmap::panel_id(h, p);
        const std::string title = heatmap::xml_escape(heatmap::title(h, p));
        if (standalone_)
            svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"panel\" id=\"" + id_ + "\" " +
                   panel_size(width, height, scale) + " role=\"img\" aria-label=\"" + title + "\">\n";
        else
            svg += "<svg class=\"panel\" id=\"" + id_ + "\" x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" " +
                   panel_size(width, height, scale) + ">\n<title>" + title + "</title>\n";
    }
    void end_panel() override {
        svg += "</svg>\n";
        id_ = "page";
    }

    void fill_boxes(const std::vector<box>& boxes, const rgb& colour) override {
        if (boxes.empty()) return;
        svg += "<path fill=\"" + svg_colour(colour) + "\" d=\"" + boxes_path(boxes) + "\"/>\n";
    }

    void rounded_box(const box& b, double radius, const rgb& fill, const rgb* line) override {
        svg += "<rect x=\"" + svg_num(b.x) + "\" y=\"" + svg_num(b.y) + "\" width=\"" + svg_num(b.w) + "\" height=\"" +
               svg_num(b.h) + "\" rx=\"" + svg_num(radius) + "\" fill=\"" + svg_colour(fill) + "\"" +
               (line != nullptr ? " stroke=\"" + svg_colour(*line) + "\" stroke-width=\"1\"" : "") + "/>\n";
    }

    void outline_boxes(const std::vector<box>& boxes, const rgb& colour, double width) override {
        if (boxes.empty()) return;
        svg += "<path fill=\"none\" stroke=\"" + svg_colour(colour) + "\" stroke-width=\"" + svg_num(width) + "\" d=\"" +
               boxes_path(boxes) + "\"/>\n";
    }

    void hatch(const std::vector<box>& boxes, const rgb& colour, bool crossed, double spacing) override {
        if (boxes.empty()) return;
        double x0 = boxes[0].x, y0 = boxes[0].y, x1 = x0, y1 = y0;
        for (const box& b : boxes) {
            x0 = std::min(x0, b.x), y0 = std::min(y0, b.y);
            x1 = std::max(x1, b.x + b.w), y1 = std::max(y1, b.y + b.h);
        }
        const double h = y1 - y0;
        std::string lines;
        for (double d = -h; d < x1 - x0; d += spacing) {
            lines += "M" + svg_num(x0 + d) + " " + svg_num(y1) + "l" + svg_num(h) + " " + svg_num(-h);
            if (crossed) lines += "M" + svg_num(x0 + d) + " " + svg_num(y0) + "l" + svg_num(h) + " " + svg_num(h);
        }
        const std::string clip = next_id("clip");
        svg += "<clipPath id=\"" + clip + "\"><path d=\"" + boxes_path(boxes) + "\"/></clipPath>\n<path clip-path=\"url(#" +
               clip + ")\" fill=\"none\" stroke=\"" + svg_colour(colour) + "\" stroke-width=\"0.8\" d=\"" + lines + "\"/>\n";
    }

    void colour_ramp(const box& b) override {
        const std::string ramp = next_id("ramp");
        svg += "<linearGradient id=\"" + ramp + "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
        constexpr int stops = 16;
        for (int k = 0; k <= stops; ++k)
            svg += "<stop offset=\"" + svg_num(k / double(stops)) + "\" stop-color=\"" + svg_colour(viridis(k / double(stops))) +
                   "\"/>";
        svg += "</linearGradient>\n<rect x=\"" + svg_num(b.x) + "\" y=\"" + svg_num(b.y) + "\" width=\"" + svg_num(b.w) +
               "\" height=\"" + svg_num(b.h) + "\" fill=\"url(#" + ramp + ")\"/>\n";
    }

    void text(std::string_view text, double x, double y, const font& f, const rgb& colour, align a,
              bool turned) override {
        svg += "<text x=\"" + svg_num(x) + "\" y=\"" + svg_num(y) + "\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"" +
               svg_num(f.size) + "\"" + (f.bold ? " font-weight=\"bold\"" : "") + " fill=\"" + svg_colour(colour) + "\"" +
               (a == align::centre ? " text-anchor=\"middle\"" : a == align::right ? " text-anchor=\"end\"" : "") +
               (turned ? " transform=\"rotate(-90 " + svg_num(x) + " " + svg_num(y) + ")\"" : "") + ">" +
               heatmap::xml_escape(text) + "</text>\n";
    }

private:
    std::string next_id(const char* kind) { return id_ + "-" + kind + std::to_string(++ids_); }

    bool standalone_;
    std::string id_ = "page";  // the panel being drawn: the prefix of the ids in it
    std::size_t ids_ = 0;
};

}  // namespace

namespace heatmap {

std::string xml_escape(std::string_view text) {
    std::string out;
    for (char ch : printable_text(text, true)) {
        if (ch == '&') out += "&amp;";
        else if (ch == '<') out += "&lt;";
        else if (ch == '>') out += "&gt;";
        else if (ch == '"') out += "&quot;";
        else out += ch;
    }
    return out;
}

std::vector<svg_panel> draw_svg_panels(const tensor_heatmap& h, const render_options& options) {
    const panel_layout L = lay_out(h, options);
    std::vector<svg_panel> panels;
    for (const panel& p : h.panels) {
        svg_canvas canvas(true);
        canvas.begin_panel(h, p, 0, 0, L.width, L.height, 1);
        draw_panel(canvas, h, p, L, options);
        canvas.end_panel();
        panels.push_back({std::move(canvas.svg), {L.grid_x, L.grid_y, L.cell}});
    }
    return panels;
}

}  // namespace heatmap

std::string svg_page_element(const trace& t, const render_options& options, std::vector<std::string>& notes) {
    std::vector<heatmap::tensor_heatmap> heatmaps = heatmap::collect_pictured(t, options);
    const heatmap::page pg = heatmap::lay_out_page(t, heatmaps, options);
    svg_canvas canvas(false);
    heatmap::draw_page(canvas, pg, heatmaps, options);
    notes.insert(notes.end(), pg.notes.begin(), pg.notes.end());
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg_num(pg.width) + "pt\" height=\"" +
           svg_num(pg.height) + "pt\" viewBox=\"0 0 " + svg_num(pg.width) + " " + svg_num(pg.height) +
           "\" version=\"1.1\">\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n" + canvas.svg + "</svg>\n";
}

std::vector<std::string> render_svg(const trace& t, const render_options& options, std::ostream& out) {
    std::vector<std::string> notes;
    const std::string page = svg_page_element(t, options, notes);
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" << page;
    return notes;
}

}  // namespace attn
