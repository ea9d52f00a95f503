#pragma once
// attn check's reading of an answer's structure for the [B,H,Sq,Sk] stages after the mask
// (masked, softmax, dropout): where it has weight (or a score) the run's mask forbids, where
// it has none the mask allows, which rows do not sum to 1. It says where a named mistake
// first shows, and names what no named mistake explains.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "attn/compute/trace.hpp"
#include "attn/teach/check.hpp"

#include <xtensor/xarray.hpp>

namespace attn {

/// A departure from the run's structure: a diagnosis id (CLI.md) and one sentence with
/// the fix that names the first place it shows ("query 0 → key 1 (batch 0, head 0)").
struct structure_finding {
    std::string id;       // planes_transposed, weight_where_masked, zero_where_allowed or rows_not_normalized
    std::string message;
    std::string where;    // the first place, as a phrase: "query 0 → key 1 (batch 0, head 0) has
                          // weight 0.31 where the causal mask forbids it"
};

/// Whether stage `stage` is one this file reads: masked, softmax or dropout.
bool structure_readable(std::string_view stage);

/// The first departure of `answer` (the shape of `expected`, stage `stage` of the right run
/// `right`) from the run's structure, in the order: each [Sq,Sk] plane transposed (Sq == Sk),
/// weight or a score where the mask forbids,
/// none where it allows (and the run has some), then (softmax only) a row of finite weights
/// not summing to 1 within 1e-3. nullopt when the run has no mask stage to compare with
/// and every row sums to 1, or when the stage is not readable.
std::optional<structure_finding> read_structure(const trace& right, std::string_view stage,
                                                const xt::xarray<float>& answer, const xt::xarray<float>& expected,
                                                const check_tolerance& tol);

}  // namespace attn
