#pragma once
// How much memory a trace will take, known before anything is allocated, so
// that impossible sizes get an error instead of an allocation failure.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"

namespace attn {

struct stage_bytes {
    std::string_view stage;
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

/// 1536 -> "1.5 KiB", 3221225472 -> "3.0 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace attn
