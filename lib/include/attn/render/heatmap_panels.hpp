#pragma once
// What the pictures draw (--format heatmap, svg, png, html): every [B,H,Sq,Sk]
// tensor of the shown stages, as one panel per batch item and head, queries down
// and keys across. The three renderers draw the same panels, cells and scale.
//
// A cell is a value on the colour map (colormap.hpp), or marked: masked (the run's
// mask is false there, in the mask, masked, softmax and dropout stages), -inf, inf
// or NaN. One scale per tensor, so the panels of one tensor compare: weights on 0 .. 1
// (0 .. 1/(1-p) after dropout); scores, scaled and masked on -m .. m, m the largest
// |value| among the drawn finite cells that are not masked (a masked stage's fill,
// -1e9, does not squash it), so 0 is the middle colour; --vmin/--vmax replace the ends.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/colormap.hpp"
#include "attn/render/render_options.hpp"

namespace attn::heatmap {

/// The stages with a [.., Sq, Sk] tensor, in order: what the pictures can draw.
inline constexpr std::array<std::string_view, 7> drawable_stages{"scores", "scaled", "biased", "mask",
                                                                 "masked", "softmax", "dropout"};

/// Whether stage `name` has a tensor to draw.
bool drawable(std::string_view stage_name);

enum class cell_kind { value, masked, neg_inf, pos_inf, nan };
inline constexpr std::size_t cell_kinds = 5;

/// One grid: a batch item and a head, and the query rows and key columns drawn.
struct panel {
    std::size_t batch = 0;
    std::optional<std::size_t> head;   // empty for the mask [B,1,Sq,Sk]: the same for every head
    std::vector<std::size_t> queries;  // all of Sq, unless cropped or --row
    std::vector<std::size_t> keys;     // all of Sk, unless cropped
};

/// One drawn tensor: its panels and what they share.
struct tensor_heatmap {
    const stage* from = nullptr;
    const tensor* values = nullptr;  // [B,H,Sq,Sk]; [B,1,Sq,Sk] for the mask
    const tensor* mask = nullptr;    // [B,1,Sq,Sk], true = may attend; set where the stage applies it
    value_scale scale;               // weights 0 .. 1, else symmetric around 0, or --vmin .. --vmax
    std::vector<panel> panels;       // batch by batch, heads in order
    std::size_t panels_in_view = 0;  // before a max_panels cut: B·H, or fewer with --batch-index, --head
    std::array<bool, cell_kinds> present{};  // which kinds of cell the panels have

    /// values[batch, head, query, key] (query and key are the tensor's indices).
    float at(const panel& p, std::size_t query, std::size_t key) const;
    cell_kind kind(const panel& p, std::size_t query, std::size_t key) const;
    bool has(cell_kind k) const { return present[static_cast<std::size_t>(k)]; }
    bool boolean() const { return values->type == element_type::boolean; }
    std::size_t query_count() const { return values->values.shape()[2]; }  // Sq
    std::size_t key_count() const { return values->values.shape()[3]; }    // Sk
    /// "softmax.weights", as npz names it.
    std::string name() const;
};

/// "batch 0, head 1"; "batch 0 (every head)" for the mask.
std::string place(const panel& p);

/// "softmax.weights — batch 0, head 1".
std::string title(const tensor_heatmap& h, const panel& p);

/// "queries 0–47 of 512, keys 0–47 of 512", or "query 3 of 5" with --row; empty
/// when the panel shows the whole [Sq,Sk] plane.
std::string crop_note(const tensor_heatmap& h, const panel& p);

/// "16 of 32 panels: batch 0–1", or empty when every panel in view is drawn.
std::string panels_note(const tensor_heatmap& h);

/// The tensors to draw: the [.., Sq, Sk] tensors of the stages `options` shows,
/// their panels limited to options.batch_index, options.head and options.row, and
/// unless options.full, to the first `max_panels` of them, each axis cut to its first
/// `max_side` entries. Throws usage_error when batch_index, head or row is beyond the run,
/// or when options.vmin or vmax, given alone, leaves a tensor's scale empty.
std::vector<tensor_heatmap> collect(const trace& t, const render_options& options, std::size_t max_side,
                                    std::size_t max_panels = static_cast<std::size_t>(-1));
/// The heatmaps point into the trace: it must outlive them.
std::vector<tensor_heatmap> collect(const trace&& t, const render_options& options, std::size_t max_side,
                                    std::size_t max_panels = static_cast<std::size_t>(-1)) = delete;

/// A value for a legend, a tooltip or a cell: fixed with `digits` decimals, or
/// scientific when that would hide it (|v| >= 1e5, or nonzero below 10^-digits);
/// "-inf", "inf", "nan", "true"/"false" for a boolean tensor.
std::string number_text(float v, int digits, bool boolean = false);

/// What a marked cell is called in legends: "masked", "-inf", "inf", "NaN".
std::string_view kind_name(cell_kind k);

}  // namespace attn::heatmap
