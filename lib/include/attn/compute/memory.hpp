#pragma once
// How much memory a run will take, known before anything is allocated, so that impossible
// sizes get an error instead of an allocation failure.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_sink.hpp"

namespace attn {

struct stage_bytes {
    stage_id id;
    std::string_view stage;  // its name
    std::uint64_t bytes;  // saturates at UINT64_MAX instead of overflowing
};

/// The bytes each stage of compute_trace(c, ...) holds, in stage order. Shared storage counts
/// once, where it is made: view, transpose and merge hold none of their own.
std::vector<stage_bytes> estimate_stage_bytes(const config& c);

/// What a run holds for a while beside its stages: dropout's boolean keep mask [B,H,Sq,Sk].
std::uint64_t estimate_transient_bytes(const config& c);

/// Everything the whole trace holds at its peak: the inputs, every stage, the transient
/// buffers; not the program itself (about 10 MiB; tests/memory_peaks.cpp measures it).
std::uint64_t estimate_total_bytes(const config& c);

/// Throws attn::error naming the largest stages when the run needs more than `limit_bytes`.
void check_memory(const config& c, std::uint64_t limit_bytes);

/// Throws attn::error when what `attn mask` holds is more than `limit_bytes`: a row [Sk] of the
/// mask and its text in the four conventions (it writes a row at a time, whatever B and Sq
/// are), and the mask files as read [B,1,Sq,Sk]: "these sizes need 9.3 GiB but the limit is
/// 1.0 GiB (--max-memory); attn mask writes the mask [B,1,Sq,Sk] = [1,1,2,100000000] a row at
/// a time: a row of 100000000 keys in four conventions takes 9.3 GiB".
void check_mask_views_memory(const config& c, std::uint64_t limit_bytes);

/// As check_memory, for the leanest run of `c` (one stage streamed, a row at a time): checked
/// before the plan is known or any size derived from the flags; plan_memory checks the plan.
void check_least_memory(const config& c, std::uint64_t limit_bytes);

/// What a run of `plan` holds at its peak. With a sink that `keeps`, every stage it needs; with
/// a streaming one, the inputs, q k v, the mask, context and after, and of the [B,H,Sq,Sk]
/// stages one shared tensor (and dropout's keep) or one block of rows.
std::uint64_t estimate_plan_bytes(const config& c, const stage_plan& plan, bool keeps);

/// Chooses plan.layout and plan.block_rows so that the run fits in `limit_bytes`, or throws as
/// check_memory. A keeping sink (or --mistake softmax_axis) gets whole tensors; a streaming
/// one rows, a whole plane per block, when shown at most one [B,H,Sq,Sk] stage, else whole
/// tensors when they fit, else blocks of as many rows as fit. `block_rows` > 0 forces blocks
/// of that many rows (--block-rows, for tests). Sets plan.sink_keeps to `keeps`.
void plan_memory(const config& c, stage_plan& plan, bool keeps, std::uint64_t limit_bytes, std::size_t block_rows = 0);

/// 1536 -> "1.5 KiB", 3221225472 -> "3.0 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace attn
