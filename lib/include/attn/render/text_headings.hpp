#pragma once
// The lines every text renderer (table, --row bars, terminal heatmap) opens with:
// the run in a few aligned lines, and each stage's heading, formula and warnings.
#include <ostream>
#include <string_view>

#include "attn/compute/config.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// ANSI codes for the headings, or empty strings when colour is off.
struct heading_style {
    std::string_view bold, dim, red, reset;
};
heading_style make_heading_style(bool color);

/// The run in three or four aligned lines (run_summary):
///   run    self-attention: Q, K, V from x; seed 24; no output projection
///   sizes  B=2  Sq=5  Sk=5  Din=8  D=8  H=4  dk=2  √dk=1.4142
///   mask   causal, fill -inf
void print_run_header(std::ostream& out, const config& c, const heading_style& style, bool seed_secret = false);

/// "── 6 · scores ── every query against every key, per head", and the formula under it.
void print_stage_heading(std::ostream& out, const config& c, const stage& s, const heading_style& style);

/// "   max_abs_diff = 2.98e-08, tolerance = 1.2e-05": the stage's figures, when it has some; then
/// "   ! batch 1, query 3: no key may be attended ...": the warnings about the stage.
void print_stage_warnings(std::ostream& out, const trace& t, const stage& s, const heading_style& style);

}  // namespace attn
