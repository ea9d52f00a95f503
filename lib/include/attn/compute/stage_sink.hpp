#pragma once
// Where computed stages go, as soon as each is complete, and which stages a run
// computes (DESIGN.md, "Only what is shown, streamed").
//
// compute_stages hands each stage the plan shows to a stage_sink, in order:
//   begin(s)  the stage; its tensors are whole, or, for a [B,H,Sq,Sk] stage computed
//             in blocks of query rows (plane_layout::in_rows), shape_only (s.in_rows())
//   rows(...) only for a stage in rows: every row of its first tensor in row-major order
//             of the leading axes, then of the next tensor
//   end(s)    the stage is complete; the warnings found while computing it are known now
// Nothing else passes through: a sink that keeps a stage copies it (copies share
// storage, as PyTorch's tensors do), and says so in the plan (stage_plan::sink_keeps).
#include <cstddef>
#include <string>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

class stage_sink {
public:
    virtual ~stage_sink() = default;

    /// A stage, in order. `so_far` holds the run's config and the warnings known so far;
    /// its stages are whatever the sink keeps itself (compute_stages adds none).
    virtual void begin(const trace& so_far, const stage& s) = 0;
    /// `count` rows of the last axis (each `width` = shape.back() long), from row
    /// `first_row` of tensor `index` of the stage begun, counted over its leading axes
    /// in row-major order.
    virtual void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) = 0;
    /// The stage begun is complete.
    virtual void end(const trace& so_far, const stage& s) = 0;
};

/// A sink that keeps every stage it gets, whole (stages in rows are gathered into
/// storage of their own): the whole trace, as compute_trace returns it.
class trace_keeper : public stage_sink {
public:
    explicit trace_keeper(trace& into) : into_(into) {}
    void begin(const trace& so_far, const stage& s) override;
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) override;
    void end(const trace& so_far, const stage& s) override;

private:
    trace& into_;
    std::vector<xt::xarray<float>> gathered_;  // the tensors of a stage in rows
};

/// How the [B,H,Sq,Sk] stages are laid out while they are computed.
enum class plane_layout {
    whole_tensor,  // all (batch, head) planes at once: one tensor, each step applied to all of it
    in_rows,       // one block of query rows of one plane at a time, handed on in rows
};

/// What a run computes and hands on (memory.hpp's plan_memory chooses the layout).
struct stage_plan {
    stage_set shown = 0;  // the stages handed to the sink
    /// Whether the sink keeps the [B,H,Sq,Sk] tensors it is handed whole: then each such
    /// stage is computed into a tensor of its own; else one tensor is changed in place.
    bool sink_keeps = true;
    plane_layout layout = plane_layout::whole_tensor;
    std::size_t block_rows = 0;  // in_rows: query rows per block (0: the whole plane, Sq)
    /// in_rows: what some output shows of the [B,H,Sq,Sk] stages, by batch item, head and
    /// query (empty: all), and the query rows of context, merge, concat and output. The
    /// rows no output shows are not computed (q, k and v still are, whole), nor, unless
    /// context needs them, the planes; rows of context not computed are 0. Every row is
    /// computed with dropout (its draws are one stream over the whole tensor), when a
    /// block is a whole plane (its products are then PyTorch's to the bit) and with a
    /// --mistake.
    std::vector<bool> shown_batch, shown_head, shown_query;

    /// Every stage of the run.
    static stage_plan every_stage();
    /// The stages called `names` (stage_table's names); none given: every stage.
    static stage_plan of(const std::vector<std::string>& names);
    /// Whether a run of `c` computes every query row of the [B,H,Sq,Sk] stages and of
    /// context, or only shown_query's (context's others are 0). Every row when the planes
    /// are whole or a block is a whole plane (the products are then PyTorch's to the bit:
    /// a smaller one's may differ in a last bit), with dropout (its draws are one stream
    /// over the whole tensor), and with a --mistake (some read other rows:
    /// merge_without_transpose's concat row i mixes context rows). q and output are always
    /// computed whole: a product over fewer rows may differ from PyTorch's in a last bit,
    /// which the table would show.
    bool computes_every_query_row(const config& c) const;
    void show(stage_id id) { shown |= stage_bit(id); }
    bool shows(stage_id id) const { return (shown & stage_bit(id)) != 0; }
};

/// Computes the stages `plan` needs from `in` (as compute_trace) and hands the ones it
/// shows to `sink`, in order, each as soon as it is complete. Returns the warnings. `in`
/// is the run's own: x is let go once the projections are made (move it in).
warning_list compute_stages(const config& c, inputs in, const stage_plan& plan, stage_sink& sink);

}  // namespace attn
