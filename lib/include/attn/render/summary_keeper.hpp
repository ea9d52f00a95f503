#pragma once
// The stage sink of the table and torch formats: every stage kept for printing at the
// end, but a large tensor only in the rows those formats print.
//
// They print a tensor of more than 1000 elements summarised, as PyTorch prints it: the
// first and last 3 indices of each axis (edgeitems), or the part --batch-index, --head
// and --row pick. So of softmax [1,16,8192,8192] they print 1·6·6 = 36 rows of 8192
// keys, and the run need not hold its 4 GiB. Each [B,H,Sq,Sk] tensor that is summarised
// (1 MiB or more) is kept in memory reserved at its whole size (mmap with
// MAP_NORESERVE) of which only the printed rows are written: the kernel gives memory
// to the pages written and no other, and the renderers read the tensor as a whole one.
// Rows nobody prints read as 0 (and are never read: tests/render/test_summary_keeper.cpp
// holds the text to what the whole trace prints).
//
// Stages come whole (copied into the reserved memory when summarised; else kept, sharing
// storage, but for the [B,H,Sq,Sk] tensors, copied: the run reuses their storage in
// place) or in rows.
#include <cstddef>
#include <memory>
#include <vector>

#include "attn/compute/stage_sink.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// The indices of each leading axis of `t` (its shape alone is read) that the table and
/// torch print with `options`: printed[axis][index]; every index of an axis printed whole.
std::vector<std::vector<bool>> printed_indices(const tensor& t, const render_options& options);

/// The rows of the [B,H,Sq,Sk] stages and the query rows of context, merge, concat and
/// output that the table and torch print of a run of `c` with `options`: what plan's
/// shown_batch, shown_head and shown_query say (empty: every one).
void show_printed_rows_only(const config& c, const render_options& options, stage_plan& plan);

class summary_keeper : public stage_sink {
public:
    /// Keeps the stages in `into`, for printing with `options` (its views and --full);
    /// tensors of `part_from` elements or more (1 MiB) in part (tests: any size).
    summary_keeper(trace& into, const render_options& options, std::size_t part_from = std::size_t{1} << 18);
    ~summary_keeper() override;
    summary_keeper(const summary_keeper&) = delete;
    summary_keeper& operator=(const summary_keeper&) = delete;

    void begin(const trace& so_far, const stage& s) override;
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) override;
    void end(const trace& so_far, const stage& s) override;

private:
    void begin_rows(const stage& s);
    class reserved_floats;
    /// Which rows (over every axis but the last, in row-major order) a tensor's printing reads.
    struct printed_rows {
        std::vector<std::size_t> shape;           // the tensor's leading axes
        std::vector<std::vector<bool>> per_axis;  // printed[axis][index]
        bool all = true;                          // not summarised: every row is read
        bool contains(std::size_t row) const;
    };
    printed_rows rows_printed(const tensor& t) const;
    bool keeps_in_part(const tensor& t, const printed_rows& rows) const;
    float* reserve(std::size_t count);

    trace& into_;
    const render_options& options_;
    std::size_t part_from_;
    std::vector<std::unique_ptr<reserved_floats>> memory_;
    stage begun_;                       // the stage coming in rows: its tensors' shapes
    std::vector<printed_rows> printed_;  // per tensor of begun_
    std::vector<float*> written_;        // per tensor of begun_: where its rows go
};

}  // namespace attn
