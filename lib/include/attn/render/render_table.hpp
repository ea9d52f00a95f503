#pragma once
// --format table: each stage titled with its number, name, formula and shape,
// each 2-D slice labelled with its leading indices and row/column labels.
#include <optional>
#include <ostream>

#include "attn/render/render_options.hpp"
#include "attn/render/selection.hpp"
#include "attn/render/text_headings.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// --format table as a stage sink: the run's lines at once, each stage that options.shows
/// as it is complete, and with --explain a summary at finish().
class table_stream : public printing_sink {
public:
    table_stream(const config& c, const render_options& options, std::ostream& out);
    void finish();

private:
    void print(const trace& so_far, const stage& s, const std::vector<element_grid>& grids) override;
    const config& c_;
    std::ostream& out_;
    heading_style style_;
    std::optional<stage_id> previous_;  // the stage printed last; none before the first
};

/// A whole trace through table_stream.
void render_table(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
