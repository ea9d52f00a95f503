#pragma once
// How much memory a trace will take, known before anything is allocated, so
// that impossible sizes get an error instead of an allocation failure.
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

/// The bytes each stage of compute_trace(c, ...) will hold, in stage order. Storage
/// shared by several stages counts once, where it is made: the view, transpose and merge
/// stages hold none of their own.
std::vector<stage_bytes> estimate_stage_bytes(const config& c);

/// What a run holds for a while beside its stages: dropout's boolean keep mask
/// [B,H,Sq,Sk] while the dropout stage is made from it.
std::uint64_t estimate_transient_bytes(const config& c);

/// Everything a run holds at its peak: the inputs plus every stage, plus the
/// transient buffers. The program itself (code, libraries, OpenBLAS's buffers, about
/// 10 MiB) is not counted; tests/memory_peaks.cpp checks this against measured peaks.
std::uint64_t estimate_total_bytes(const config& c);

/// Throws attn::error naming the largest stages and their sizes when the run
/// would need more than `limit_bytes`.
void check_memory(const config& c, std::uint64_t limit_bytes);

/// As check_memory, for the leanest run of `c` there is (one stage streamed, one query row
/// at a time): checked before any size is derived from the flags (a mask file expanded to
/// [B,1,Sq,Sk]), when the run's plan is not known yet. plan_memory checks the real plan.
void check_least_memory(const config& c, std::uint64_t limit_bytes);

/// What a run of `plan` holds at its peak. A sink that `keeps` holds every stage it is
/// shown (and the run every stage it needs, as the whole trace does: estimate_total_bytes
/// for every stage); a streaming sink holds none, so the run holds the inputs, q k v,
/// the mask, context and after, and for the [B,H,Sq,Sk] stages one shared tensor
/// (whole_tensor; one more with dropout's keep) or one
/// block of rows (in_rows).
std::uint64_t estimate_plan_bytes(const config& c, const stage_plan& plan, bool keeps);

/// Chooses plan.layout and plan.block_rows so that the run fits in `limit_bytes`, and
/// throws as check_memory does when it cannot. A keeping sink gets whole tensors. A
/// streaming one gets the [B,H,Sq,Sk] stages in rows, a whole plane per block, when it
/// is shown at most one of them (and no --mistake softmax_axis, which needs them whole);
/// else whole tensors when they fit, else rows. Rows come in blocks of the whole plane
/// unless that does not fit, then of as many rows as fit; `block_rows` > 0 forces blocks
/// of that many rows (--block-rows, for tests). Sets plan.sink_keeps to `keeps`.
void plan_memory(const config& c, stage_plan& plan, bool keeps, std::uint64_t limit_bytes, std::size_t block_rows = 0);

/// 1536 -> "1.5 KiB", 3221225472 -> "3.0 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace attn
