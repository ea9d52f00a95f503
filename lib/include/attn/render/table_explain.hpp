#pragma once
// --format table --explain: the explanation texts (teach/explain.hpp) laid out
// for reading, wrapped to 100 columns: the opening paragraphs, each
// stage's labelled block under its heading, and the closing summary.
#include <cstddef>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/trace.hpp"
#include "attn/render/table_parts.hpp"

namespace attn::table {

/// `text` broken at spaces into lines of at most `width` columns (a word longer
/// than that gets a line of its own).
std::vector<std::string> wrap_words(std::string_view text, std::size_t width);

/// "── multi-head attention, explained ──" and the paragraphs of explain_intro, then a blank line.
void print_explain_intro(std::ostream& out, const config& c, const palette& p);

/// The block under a stage's heading: "   what    ...", "   shape   ...", ... (explanation_lines),
/// with its worked row (flash).
void print_stage_explanation(std::ostream& out, const config& c, const stage& s, const palette& p);

/// A blank line, "── summary ──" and the lines of explain_summary.
void print_explain_summary(std::ostream& out, const config& c, const palette& p);

}  // namespace attn::table
