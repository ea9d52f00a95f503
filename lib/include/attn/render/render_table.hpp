#pragma once
// --format table: each stage titled with its number, name, formula and shape,
// each 2-D slice labelled with its leading indices and row/column labels.
#include <ostream>

#include "attn/render/render_options.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

void render_table(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
