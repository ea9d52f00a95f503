#pragma once
// --batch-index I, --head H, --row Q: trace's output flags that show one batch item,
// head or query row (attn/render/selection.hpp says what each keeps of each tensor).
// Checked here against the run's sizes, once files and --from have fixed them.
#include <cstdint>
#include <string>

#include "attn/compute/config.hpp"
#include "attn/render/output_format.hpp"
#include "attn/render/render_options.hpp"
#include "run_flags.hpp"

namespace attn_app {

/// The values given (whole numbers; only the flags given count).
struct view_flags {
    std::int64_t batch_index = 0, head = 0, row = 0;
};

/// Sets options.batch_index, head and row from the flags given, each checked against
/// the run's sizes ("--batch-index 5 is outside 0..1 (B = 2)"). With --row, the table
/// format draws bars (render_row): --stage may name only the stages it draws, and
/// options.stages is left empty for its default, softmax.
void set_views(const view_flags& v, const flag_given& given, const attn::config& c, const attn::output_format& format,
               attn::render_options& options);

}  // namespace attn_app
