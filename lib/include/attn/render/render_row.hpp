#pragma once
// --row Q with --format table: one query's row of weights (or scores) as bars, for
// each batch item and head the views select (--batch-index, --head):
//
//   weights[batch=0, head=1, query=3]
//     key 0  ███████▌                                  0.1871
//     key 1  █████████▏                                0.2291  ◀ 3rd
//     key 2  ████████████▎                             0.3054  ◀ 1st
//     key 3  ███████████▏                              0.2783  ◀ 2nd
//     key 4                                            0.0000  masked
//     query 3 attends most to key 2 (0.3054), key 3 (0.2783), key 1 (0.2291)
//
// Weights (softmax, dropout) are bars from 0, the full width being 1 (or the row's
// largest weight, when dropout's 1/(1-p) makes one larger). Scores (scores, scaled,
// masked) can be negative: bars go left or right of an axis, the full half-width
// being the row's largest |score|. Masked keys (the mask stage, from masked on) and
// keys dropped by dropout are marked and never ranked; a masked key keeps its bar
// where its weight is not 0 (a finite --fill). The values use the table's notation.
#include <ostream>
#include <string_view>

#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"
#include "attn/render/stage_views.hpp"

namespace attn {

/// Whether the bars can show the rows of stage `id` (stage_views.hpp: scores, scaled, biased,
/// masked, softmax, dropout).
bool row_view_shows(stage_id id);

/// The run header (as --format table), then for each stage of options.stages that
/// row_view_shows (softmax when options.stages is empty), its heading and warnings,
/// then one chart per selected (batch, head) of the row options.row (which must be set).
void render_row(const trace& t, const render_options& options, std::ostream& out);

}  // namespace attn
