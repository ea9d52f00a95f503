#pragma once
// What every renderer is asked to show, and how.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/stage_table.hpp"

namespace attn {

/// torch.set_printoptions(sci_mode=...): None chooses per tensor, True/False force it.
enum class sci_mode { automatic, on, off };

/// How svg, png and html place a run's panels: stacked, a tensor's panels in rows of up
/// to four, tensors one below another (stack); or the stages side by side on one
/// 16:9 page, scaled down to fit (slide).
enum class picture_layout { stack, slide };

struct render_options {
    stage_set stages = 0;             // the stages to show (stage_bit); 0 = all of them
    int precision = 4;                // digits after the decimal point in text formats
    bool full = false;                // print every element, never summarise
    sci_mode notation = sci_mode::automatic;  // scientific notation in text formats
    bool color = false;               // ANSI colour (the program decides: terminal, NO_COLOR)
    bool explain = false;             // --explain: each stage's explanation (teach/explain.hpp)
    bool seed_secret = false;         // the seed comes from a class secret: never printed
    bool stats = false;               // --stats: each shown tensor's statistics (tensor_stats.hpp)

    // Views (--batch-index I, --head H, --row Q): only this batch item, head or query row
    // of every tensor that has that axis; empty = all.
    std::optional<std::size_t> batch_index, head, row;

    // --vmin X, --vmax Y: the colour scale of every drawn non-boolean tensor (pictures),
    // in place of its own; either alone replaces one end. Finite; vmin < vmax.
    std::optional<float> vmin, vmax;
    picture_layout layout = picture_layout::stack;  // --layout
    bool graph = false;  // --graph with html: the run's graph beside its stages, each box a link to its stage
    // --input FILE and --kv-input FILE as typed: --format py's script loads the same files
    // (empty: drawn, or not known, as in a replay)
    std::string input_file, kv_input_file;
    // --params, --q --k --v, --mask-file and --key-padding-mask as typed, for the same script
    std::string params_file, q_file, k_file, v_file, mask_file, key_padding_file;

    bool shows(stage_id id) const { return stages == 0 || (stages & stage_bit(id)) != 0; }
};

}  // namespace attn
