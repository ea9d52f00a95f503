#pragma once
// Which stages a run computes, and where each goes as soon as it is complete (DESIGN.md,
// "Only what is shown, streamed"). A sink that keeps a stage copies it (copies share storage).
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

    /// A stage, in order: its tensors whole, or shape_only when it comes in rows (s.in_rows()).
    /// `so_far` holds the config and the warnings known so far (no stages).
    virtual void begin(const trace& so_far, const stage& s) = 0;
    /// A stage in rows: `count` rows of the last axis from row `first_row` of tensor `index`,
    /// counted over the leading axes in row-major order; every row of a tensor, then the next.
    virtual void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) = 0;
    /// The stage begun is complete; the warnings found while computing it are known now.
    virtual void end(const trace& so_far, const stage& s) = 0;
};

/// A sink that keeps every stage whole (rows gathered into storage of their own): the trace.
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
    /// Whether the sink keeps the [B,H,Sq,Sk] tensors it is handed: then each is computed into
    /// a tensor of its own; else one tensor is changed in place.
    bool sink_keeps = true;
    plane_layout layout = plane_layout::whole_tensor;
    std::size_t block_rows = 0;  // in_rows: query rows per block (0: the whole plane, Sq)
    /// in_rows: the batch items, heads and query rows some output shows (empty: all). The
    /// others are not computed, unless computes_every_query_row; rows of context not computed are 0.
    std::vector<bool> shown_batch, shown_head, shown_query;
    /// --stats: each shown weights tensor keeps per-row statistics to the end (tensor_stats.hpp),
    /// which the memory plan counts.
    bool row_statistics = false;

    /// Every stage of the run.
    static stage_plan every_stage();
    /// The stages called `names` (stage_table's names); none given: every stage.
    static stage_plan of(const std::vector<std::string>& names);
    /// The stages of `shown` (stage_bit); 0: every stage.
    static stage_plan of(stage_set shown);
    /// Whether a run of `c` computes every query row of the [B,H,Sq,Sk] stages and context, not
    /// only shown_query's: with whole planes or blocks of a whole plane (a smaller block's
    /// products may differ in a last bit), with dropout (its draws are one stream), with flash (it
    /// compares every row of context with its own) and with a
    /// --mistake (some read other rows). q and output are always computed whole.
    bool computes_every_query_row(const config& c) const;
    void show(stage_id id) { shown |= stage_bit(id); }
    bool shows(stage_id id) const { return (shown & stage_bit(id)) != 0; }
};

/// Computes the stages `plan` needs from `in` (moved in: x is let go after the projections)
/// and hands those it shows to `sink`, in order, each as soon as it is complete. Returns the warnings.
warning_list compute_stages(const config& c, inputs in, const stage_plan& plan, stage_sink& sink);

}  // namespace attn
