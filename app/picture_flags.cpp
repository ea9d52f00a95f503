// --vmin, --vmax, --layout (picture_flags.hpp): CLI11 wiring and the checks.
#include "picture_flags.hpp"

#include <cmath>
#include <limits>

#include "attn/compute/error.hpp"
#include "messages.hpp"

namespace attn_app {
namespace {

/// `text` as a colour-scale end: a finite number a float holds.
float scale_end(const char* flag, const std::string& text) {
    try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::isfinite(value) && std::abs(value) <= std::numeric_limits<float>::max())
            return static_cast<float>(value);
    } catch (const std::exception&) {
    }
    throw attn::usage_error(std::string(flag) + " " + text + ": expected a finite number such as -2.5");
}

}  // namespace

void add_picture_flags(CLI::App* cmd, picture_flags& p) {
    cmd->add_option("--vmin", p.vmin,
                    "pictures (heatmap, svg, png, html): the bottom of the colour scale of every drawn tensor, "
                    "in place of its own (weights 0, scores -m for m the largest |value|); values below are "
                    "drawn as X")
        ->type_name("X");
    cmd->add_option("--vmax", p.vmax,
                    "pictures: the top of the colour scale of every drawn tensor, in place of its own (weights 1, "
                    "after dropout 1/(1-p); scores m); values above are drawn as Y. With --vmin, X < Y")
        ->type_name("Y");
    add_choice(cmd, "--layout", p.layout, {"stack", "slide"}, "LAYOUT",
               "svg, png, html: stack (a tensor's panels in rows of up to four, tensors one below another) or "
               "slide (the stages side by side on one 16:9 page, 1920x1080 pixels as PNG, panels scaled "
               "down to fit)");
}

void set_picture_options(const picture_flags& p, const flag_given& given, const attn::output_format& format,
                         attn::render_options& options) {
    const std::string name(format.name);
    for (const char* flag : {"--vmin", "--vmax"})
        if (given(flag) && !format.colour_scale)
            throw attn::usage_error(std::string(flag) + " sets the colour scale of a picture, and --format " + name +
                                    " draws none: use --format heatmap, svg, png or html");
    if (given("--vmin")) options.vmin = scale_end("--vmin", p.vmin);
    if (given("--vmax")) options.vmax = scale_end("--vmax", p.vmax);
    if (options.vmin && options.vmax && !(*options.vmin < *options.vmax))
        throw attn::usage_error("--vmin " + p.vmin + " --vmax " + p.vmax + ": --vmin must be below --vmax");
    if (given("--layout") && p.layout == "slide" && !format.page)
        throw attn::usage_error("--layout slide places the panels on a page, and --format " + name +
                                " has none: use --format svg, png or html");
    options.layout = p.layout == "slide" ? attn::picture_layout::slide : attn::picture_layout::stack;
}

}  // namespace attn_app
