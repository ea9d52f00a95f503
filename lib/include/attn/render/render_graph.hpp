#pragma once
// A graph in Graphviz's dot language (render_plan_dot), laid out and drawn by Graphviz's own
// library (gvc, with its dot layout): `attn trace --graph --format svg|png`.
#include <ostream>
#include <string>
#include <string_view>

namespace attn {

/// Lays out `dot` (one digraph) with the dot layout and writes it as `format`, "svg" or
/// "png". Throws attn::error when Graphviz cannot read the graph or has no renderer for
/// `format` (its plugins are not installed).
void draw_graph(const std::string& dot, std::string_view format, std::ostream& out);

}  // namespace attn
