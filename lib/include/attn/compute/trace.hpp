#pragma once
// The result of a run: the ordered, named stages of multi-head attention and
// the tensors each one holds (CLI.md, "The stages").
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/tensor.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// What a stage is called, where it stands and what happened in it: the one
/// place these strings are written down (CLI.md's table).
struct stage_info {
    std::string_view name;     // "scores": the key in JSON and the --stage name
    int step;                  // 1..15, the position in CLI.md's table
    std::string_view title;    // what happened, in words
    std::string_view formula;  // what happened, in symbols
};

inline constexpr std::array<stage_info, 15> stage_table{{
    {"input", 1, "the token embeddings", "x = torch.randn(B,Sq,Din); x_kv = torch.randn(B,Sk,Dkv) if cross"},
    {"params", 2, "weights in nn.Linear layout [out, in]", "y = x·Wᵀ + b"},
    {"projections", 3, "queries, keys and values", "Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v"},
    {"view", 4, "split the last axis into heads (no data moves)", "[B,S,D] -> [B,S,H,dk]"},
    {"transpose", 5, "heads become a batch axis", "[B,S,H,dk] -> [B,H,S,dk]"},
    {"scores", 6, "every query against every key, per head", "Q·Kᵀ"},
    {"scaled", 7, "scores scaled by the square root of the head width", "Q·Kᵀ / √dk"},
    {"mask", 8, "where each query may attend (true = may attend)", "mask[b,0,i,j]: may query i attend key j?"},
    {"masked", 9, "scaled scores with the fill value where the mask is false", "masked_fill(mask == false, fill)"},
    {"softmax", 10, "attention weights: softmax over the key axis (last)", "softmax(masked or scaled, dim=-1)"},
    {"dropout", 11, "weights after dropout (training mode only)", "weights · keep / (1 - p)"},
    {"context", 12, "each query's weighted sum of the values", "weights·V"},
    {"merge", 13, "transpose back: heads next to each other per position", "[B,H,Sq,dk] -> [B,Sq,H,dk]"},
    {"concat", 14, "heads side by side again", "[B,Sq,H,dk] -> [B,Sq,D]"},
    {"output", 15, "the output projection", "out = concat·W_oᵀ + b_o"},
}};

/// The tensors a stage can hold, in the order it holds them (CLI.md's table): the
/// other way round, which stage to ask for when a user names a tensor (--stage weights).
/// A run may leave some out: x_kv without cross-attention, the biases without them.
struct stage_tensors {
    std::string_view stage;                    // a name in stage_table
    std::array<std::string_view, 8> tensors;   // "" after the last
};

inline constexpr std::array<stage_tensors, 15> stage_tensor_table{{
    {"input", {"x", "x_kv"}},
    {"params", {"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"}},
    {"projections", {"q", "k", "v"}},
    {"view", {"q", "k", "v"}},
    {"transpose", {"q", "k", "v"}},
    {"scores", {"scores"}},
    {"scaled", {"scaled"}},
    {"mask", {"mask"}},
    {"masked", {"masked"}},
    {"softmax", {"weights"}},
    {"dropout", {"weights", "keep"}},
    {"context", {"context"}},
    {"merge", {"context"}},
    {"concat", {"concat"}},
    {"output", {"out"}},
}};

/// The entry of stage_table called `name`, or nullptr.
const stage_info* find_stage_info(std::string_view name);

/// The entry of stage_table numbered `step` (1 input .. 15 output), or nullptr.
const stage_info* find_stage_info(int step);

/// The stages that can hold a tensor called `tensor`, in stage order
/// ("weights": softmax and dropout); empty when no stage has such a tensor.
std::vector<const stage_info*> stages_holding(std::string_view tensor);

/// The valid stage names in order, joined with ", " (for error messages).
std::string stage_names_list();

/// Whether compute_trace(c, ...) produces the stage called `name`: input and
/// params are absent when the run starts at the projections (--q --k --v),
/// mask and masked need a mask, dropout training mode, output the output projection.
bool stage_in_run(const config& c, std::string_view name);

struct stage {
    const stage_info* info = nullptr;  // points into stage_table
    std::string formula;               // info->formula as this run computes it (stage_formula)
    std::vector<tensor> tensors;

    std::string_view name() const { return info->name; }
    /// The tensor called `tensor_name`; throws attn::error if there is none.
    const tensor& at(std::string_view tensor_name) const;
};

struct trace {
    config cfg;
    std::vector<stage> stages;          // in stage_table order; absent stages are skipped
    attn::warning_list warnings;  // for stderr and next to their stage, e.g. rows with no allowed key

    /// The warnings about the stage called `name`, in order.
    std::vector<const warning*> warnings_of(std::string_view name) const;

    /// The stage called `name`, or nullptr when it is absent from this run.
    const stage* find(std::string_view name) const;
};

}  // namespace attn
