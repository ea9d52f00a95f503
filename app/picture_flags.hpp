#pragma once
// --vmin X, --vmax Y and --layout stack|slide: how trace's pictures (--format heatmap,
// svg, png, html) draw, checked against the format chosen.
#include <string>

#include <CLI/CLI.hpp>

#include "attn/render/output_format.hpp"
#include "attn/render/render_options.hpp"
#include "run_flags.hpp"

namespace attn_app {

/// The values as typed: parsed and checked by set_picture_options.
struct picture_flags {
    std::string vmin, vmax;
    std::string layout = "stack";
};

/// Adds --vmin, --vmax and --layout to `cmd`.
void add_picture_flags(CLI::App* cmd, picture_flags& p);

/// Sets options.vmin, vmax and layout from the flags given. Usage errors: a value that
/// is not a finite number ("--vmin nan: expected a finite number such as -2.5"),
/// --vmin >= --vmax, any of them with a format that colours nothing, --layout slide with
/// one that has no page (heatmap).
void set_picture_options(const picture_flags& p, const flag_given& given, const attn::output_format& format,
                         attn::render_options& options);

}  // namespace attn_app
