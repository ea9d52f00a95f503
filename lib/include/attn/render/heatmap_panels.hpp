#pragma once
// What the pictures draw (--format heatmap, svg, png, html): every [B,H,Sq,Sk]
// tensor of the shown stages, as one panel per batch item and head, queries down
// and keys across; and the position tables: the sinusoidal pe [S,Din] (positions
// down, input features across) and rope's cos and sin [Sq,dk] (positions down, the
// head's dims across), one panel each, the same for every batch item and head.
// The three renderers draw the same panels, cells and scale.
//
// A cell is a value on the colour map (colormap.hpp), or marked: masked (the run's
// mask is false there, in the mask, masked, softmax and dropout stages), -inf, inf
// or NaN. One scale per tensor, so the panels of one tensor compare: weights on 0 .. 1
// (0 .. 1/(1-p) after dropout); the position tables, sines and cosines, on -1 .. 1;
// scores, scaled, masked, biased and alibi's bias on -m .. m, m the largest |value|
// among the drawn finite cells that are not masked (a masked stage's fill, -1e9, does
// not squash it); so 0 is the middle colour of every signed tensor. --vmin/--vmax
// replace the ends.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/trace.hpp"
#include "attn/render/colormap.hpp"
#include "attn/render/render_options.hpp"
#include "attn/render/stage_views.hpp"

namespace attn::heatmap {

/// Whether stage `id` has a tensor to draw (stage_views.hpp): positions (pe [S,Din]), rope (cos
/// and sin [Sq,dk]), alibi (the bias [1,H,Sq,Sk]), the mask and the [B,H,Sq,Sk] stages.
constexpr bool drawable(stage_id id) { return view_of(id).drawn; }

/// "scores, scaled, mask, masked, softmax": the drawable stages a run of `c` has, in order, for a
/// message; with no run, every drawable stage.
std::string drawable_stages_text(const config& c);
std::string drawable_stages_text();

/// What a grid's rows or columns are, in the words of its labels.
struct axis {
    std::string_view label;  // beside the grid: "query i", "position"
    std::string_view one;    // one index: "query 3", "position 3"
    std::string_view many;   // a run of them: "queries 0–31 of 50"
};
inline constexpr axis query_axis{"query i", "query", "queries"};
inline constexpr axis key_axis{"key j", "key", "keys"};
inline constexpr axis position_axis{"position", "position", "positions"};
inline constexpr axis feature_axis{"feature", "feature", "features"};  // pe's columns: the input's features
inline constexpr axis head_dim_axis{"head dim", "dim", "dims"};        // cos and sin's columns: a head's dk

enum class cell_kind { value, masked, neg_inf, pos_inf, nan };
inline constexpr std::size_t cell_kinds = 5;

/// One grid: a batch item and a head, and the rows (queries, or a table's positions) and
/// columns (keys, or a table's features) drawn, as indices into the tensor.
struct panel {
    std::size_t batch = 0;             // the index in the tensor's batch axis (0 when every_batch)
    std::optional<std::size_t> head;   // empty for the mask [B,1,Sq,Sk] and a table: the same for every head
    bool every_batch = false;          // a table, or alibi's bias [1,H,Sq,Sk]: the same for every batch item
    std::vector<std::size_t> queries;  // rows: all of Sq (S), unless cropped or --row
    std::vector<std::size_t> keys;     // columns: all of Sk (Din, dk), unless cropped
};

/// One drawn tensor: its panels and what they share.
struct tensor_heatmap {
    const stage* from = nullptr;
    const tensor* values = nullptr;  // [B,H,Sq,Sk]; [B,1,Sq,Sk] the mask, [1,H,Sq,Sk] the bias; a table [S,F]
    const tensor* mask = nullptr;    // [B,1,Sq,Sk], true = may attend; set where the stage applies it
    value_scale scale;               // weights 0 .. 1, tables -1 .. 1, else symmetric around 0, or --vmin .. --vmax
    axis rows = query_axis, columns = key_axis;  // a table: position_axis, and feature_axis or head_dim_axis
    std::size_t first_row = 0;       // the number row 0 is labelled with: its position (N for rope with --past N)
    std::vector<panel> panels;       // batch by batch, heads in order
    std::size_t panels_in_view = 0;  // before a max_panels cut: B·H, or fewer with --batch-index, --head
    std::array<bool, cell_kinds> present{};  // which kinds of cell the panels have

    /// values[batch, head, query, key], or a table's values[query, key] (the tensor's indices).
    float at(const panel& p, std::size_t query, std::size_t key) const;
    cell_kind kind(const panel& p, std::size_t query, std::size_t key) const;
    bool has(cell_kind k) const { return present[static_cast<std::size_t>(k)]; }
    bool boolean() const { return values->type == element_type::boolean; }
    bool table() const { return values->values.dimension() == 2; }  // a position table [S,F]
    std::size_t query_count() const { return values->values.shape()[values->values.dimension() - 2]; }  // Sq, S
    std::size_t key_count() const { return values->values.shape()[values->values.dimension() - 1]; }    // Sk, F
    /// The number a row is labelled with: `row` + first_row.
    std::size_t row_number(std::size_t row) const { return row + first_row; }
    /// --tokens with --vocab: the tokens of the query rows and key columns (run_sources::token_labels,
    /// escaped), drawn instead of their numbers; empty: numbers.
    std::vector<std::string> row_labels, column_labels;
    /// A row's or column's label: its token, else its number.
    std::string row_text(std::size_t row) const {
        return row < row_labels.size() ? row_labels[row] : std::to_string(row_number(row));
    }
    std::string column_text(std::size_t column) const {
        return column < column_labels.size() ? column_labels[column] : std::to_string(column);
    }
    /// "softmax.weights", as npz names it.
    std::string name() const;
};

/// --stats: "stats: min ..." of h's whole tensor, drawn or not (render_stats.hpp's stats_line).
std::string stats_text(const config& c, const tensor_heatmap& h, const render_options& options);

/// "batch 0, head 1"; "batch 0 (every head)" for the mask; "head 1 (every batch item)"
/// for the bias; "every batch item and head" for a table.
std::string place(const panel& p);

/// "softmax.weights — batch 0, head 1".
std::string title(const tensor_heatmap& h, const panel& p);

/// "queries 0–47 of 512, keys 0–47 of 512", or "query 3 of 5" with --row
/// ("positions 0–127 of 200, features 0–127 of 512" for a table, its rows numbered from
/// first_row: "positions 3–130 of 3–514"); empty when the panel shows the whole grid.
std::string crop_note(const tensor_heatmap& h, const panel& p);

/// "16 of 32 panels: batch 0–1" ("heads 0–15" for the bias, the same for every batch
/// item), or empty when every panel in view is drawn.
std::string panels_note(const tensor_heatmap& h);

/// "batch 0–1", "batch 0", "heads 0–7": the panels of `h` drawn (for the notes of a cut).
std::string panels_span(const tensor_heatmap& h);

/// The tensors to draw: the [.., Sq, Sk] tensors and the position tables of the stages
/// `options` shows, their panels limited to options.batch_index, options.head and
/// options.row (a table's rows only when they are the queries' positions, seq), and
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
