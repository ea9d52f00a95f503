#pragma once
// Where computed stages go, as soon as each is complete, and which stages a run
// computes (DESIGN.md, "Only what is asked, streamed").
//
// compute_stages hands each planned stage to a stage_sink and forgets it once no
// later stage needs it. A sink that keeps a stage keeps its tensors (they share
// storage, as PyTorch's do); one that writes the stage out and returns lets the
// computation free that storage or reuse it in place: scores -> scaled -> masked ->
// softmax -> dropout then share one buffer.
//
// A sink may also hold a stage's storage for a while after stage_done returns, to write
// it out meanwhile (npz to a file lends it to the writer's thread): the computation
// asks for it back (give_back) before changing it in place, and may meanwhile compute
// the next stage into a second tensor (stage_plan::spare_plane).
//
// With bounded memory the [B,H,Sq,Sk] stages come in rows instead: stage_begin with
// tensors that have a shape and no elements (tensor_head), then stage_rows for every
// row of the first tensor in row-major order, then of the next, then stage_end.
#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

class stage_sink {
public:
    virtual ~stage_sink() = default;

    /// A complete stage. `so_far` holds the run's config and the warnings known so far;
    /// its stages are whatever the sink keeps itself (compute_stages adds none).
    virtual void stage_done(const trace& so_far, const stage& s) = 0;
    /// Returns once the sink holds `storage` only if it keeps it: a storage it held only
    /// to write it out is written (or copied) and let go.
    virtual void give_back(const tensor_storage& storage) { (void)storage; }
    /// Part of a large stage is complete: the first `ready` elements (row-major) of its
    /// first tensor, whose storage is final; the rest is still being computed. A sink may
    /// start writing them; stage_done(s) follows once the whole stage is complete.
    virtual void stage_partly_done(const trace& so_far, const stage& s, std::size_t ready) {
        (void)so_far, (void)s, (void)ready;
    }

    /// Whether the sink takes the [B,H,Sq,Sk] stages in rows (stage_begin, stage_rows,
    /// stage_end); a sink that does not gets every stage whole.
    virtual bool takes_rows() const { return false; }
    /// A stage whose tensors come in rows next: their shapes are known (tensor_head),
    /// their elements not yet.
    virtual void stage_begin(const trace& so_far, const stage& s);
    /// `count` rows of the last axis (each `width` = shape.back() long), from row
    /// `first_row` of tensor `index` of the stage begun, counted over its leading axes
    /// in row-major order; rows arrive in order, tensor after tensor.
    virtual void stage_rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows);
    /// The stage begun is complete; `so_far`'s warnings now include the ones found while
    /// computing it.
    virtual void stage_end(const trace& so_far, const stage& s);
};

/// A sink that keeps every stage it gets: the whole trace, as compute_trace returns it.
class trace_keeper : public stage_sink {
public:
    explicit trace_keeper(trace& into) : into_(into) {}
    void stage_done(const trace& so_far, const stage& s) override;

private:
    trace& into_;
};

/// How the [B,H,Sq,Sk] stages are laid out while they are computed.
enum class plane_layout {
    whole_tensor,  // all (batch, head) planes at once, one buffer shared in place by the stages
    in_rows,       // one block of query rows of one plane at a time, handed on in rows
};

/// What a run computes and hands on (memory.hpp's plan_memory chooses the layout).
struct stage_plan {
    std::array<bool, stage_table.size()> shown{};  // by step - 1: the stages handed to the sink
    plane_layout layout = plane_layout::whole_tensor;
    std::size_t block_rows = 0;  // in_rows: query rows per block (0: the whole plane, Sq)
    /// whole_tensor: more [B,H,Sq,Sk] tensors (at most this many), so that while the sink
    /// still writes out a stage or two (it holds their storage), the next is computed into
    /// another. Two let the chain reach softmax, and context start, while the sink still
    /// writes scaled and masked.
    std::size_t spare_planes = 0;
    /// What a sink that lends the stages it writes asks for (npz).
    static constexpr std::size_t lending_spare_planes = 2;

    /// Every stage of the run.
    static stage_plan every_stage();
    /// The stages called `names` (stage_table's names); none given: every stage.
    static stage_plan of(const std::vector<std::string>& names);
    /// Adds the stage called `name`.
    void show(std::string_view name);
    bool shows(std::string_view name) const;
};

/// The stages a run of `c` computes for `plan`: those it shows and every stage they
/// depend on (projections need input and params, masked needs scaled and mask, ...),
/// by step - 1. Stages the run does not have (stage_in_run) are false.
std::array<bool, stage_table.size()> stages_needed(const config& c, const stage_plan& plan);

/// Computes the stages `plan` needs from `in` (as compute_trace) and hands the ones it
/// shows to `sink`, in order, each as soon as it is complete. Returns the warnings.
warning_list compute_stages(const config& c, const inputs& in, const stage_plan& plan, stage_sink& sink);

}  // namespace attn
