#pragma once
// --batch-index I, --head H, --row Q: the part of each tensor a view shows.
//
//   batch_index  the "batch" axis of every tensor that has one; index 0 of one of size 1:
//                alibi's bias [1,H,Sq,Sk] is broadcast over the items, the same for each;
//   head         the "head" axis, except a boolean one of size 1: the mask [B,1,Sq,Sk]
//                has no real head axis (it is broadcast over the heads), so it stays whole;
//   row          the query axis: "query" of the [B,H,Sq,Sk] planes and "seq", the
//                query-side sequence, of x, q, context, concat and out. Keys and values
//                ("key", "kv_seq") stay whole: a query attends over all of them.
//
// A selected axis is kept with size 1, as PyTorch's t[:, 1:2] keeps it, so the
// selected part nests as deep as the whole tensor and keeps its dimension names.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/tensor_stats.hpp"
#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"
#include "attn/render/torch_format.hpp"

namespace attn {

/// One axis a view restricts to a single index.
struct axis_pick {
    std::size_t axis;      // position in the tensor's shape
    std::string dim;       // its name: "batch", "head", "query" or "seq"
    std::size_t index;     // the index kept, counted in the whole tensor
};

/// Which part of one tensor the views select.
struct tensor_selection {
    std::vector<axis_pick> picks;    // in axis order; empty: the whole tensor
    std::vector<std::size_t> shape;  // the selected part's shape (a picked axis has size 1)

    bool whole() const { return picks.empty(); }
    /// The number of elements of the selected part.
    std::size_t size() const;
};

/// Whether options select anything (--batch-index, --head or --row given).
bool has_view(const render_options& options);

/// The part of `t` that options.batch_index, head and row select. Throws attn::error
/// when an index is outside its axis (the program checks the flags against the run first).
tensor_selection select_in(const tensor& t, const render_options& options);

/// The selected part as a tensor of its own (copied; name, dims and type kept),
/// the values PyTorch's t[1:2, 2:3] holds.
tensor selected_part(const tensor& t, const tensor_selection& s);

/// Of `count` rows from row `first_row` of a tensor of `shape` handed on in rows
/// (stage_sink.hpp; `data` holds them one after another), the ones `s` keeps, one after
/// another. Rows count over every axis but the last, which no view picks (the keys).
std::vector<float> kept_rows(const tensor_shape& shape, const tensor_selection& s, std::size_t first_row,
                             std::size_t count, const float* data);

/// The PyTorch indexing that takes the selected part: "[1:2, 2:3]", "[:, :, 3:4]"
/// (trailing whole axes left out); "" for the whole tensor.
std::string torch_index(const tensor_selection& s);

/// Whether print(t[...]) of the selected part summarises: more than 1000 elements,
/// unless options.full.
bool summarised(const tensor_selection& s, const render_options& options);

/// The printed elements of the selected part, as make_grid gives them for the part
/// itself, but on `t`'s storage: a picked axis shows its one index, counted in the
/// whole tensor (so labels keep the real indices), and has size 1 in `shape`.
element_grid make_grid(const tensor& t, const tensor_selection& s, const render_options& options);

/// What the table and torch print of `t` with `options`: make_grid over the part the
/// views select (`t`'s shape alone is read when it is shape_only).
element_grid printing_grid(const tensor& t, const render_options& options);

/// The rows of the [B,H,Sq,Sk] stages and the query rows of context, merge, concat and
/// output that the table and torch print of a run of `c` with `options` (printing_grid's
/// shown indices): what plan's shown_batch, shown_head and shown_query say (empty: every one).
void show_printed_rows_only(const config& c, const render_options& options, stage_plan& plan);

/// The stage sink under the table and torch formats: each stage options.shows, once it is
/// complete, is handed to print() with the printing_grid of each of its tensors. A stage
/// that comes whole is read where it is; one that comes in rows is kept in the rows its
/// grids print and no others (its grids are packed), for as long as print() takes.
class printing_sink : public stage_sink {
public:
    explicit printing_sink(const render_options& options) : options_(options) {}
    void begin(const trace& so_far, const stage& s) override;
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) override;
    void end(const trace& so_far, const stage& s) override;
    /// Every stage of a whole trace, in order, as if computed now.
    void print_all(const trace& t);

protected:
    /// Prints `s` (warnings in `so_far`), its tensors read through `grids`, one each.
    virtual void print(const trace& so_far, const stage& s, const std::vector<element_grid>& grids) = 0;
    /// With options.stats, in print(): the statistics of tensor `index` of the stage printed, over all its rows.
    tensor_stats stats_of(std::size_t index) const { return stats_.of(index); }
    const render_options& options_;

private:
    std::vector<tensor_shape> shapes_;      // a stage in rows: its tensors' shapes
    std::vector<element_grid> grids_;       // ... what is printed of them
    std::vector<std::vector<float>> kept_;  // ... and the rows printed
    stage_stats stats_;                     // with options.stats: of every row
};

}  // namespace attn
