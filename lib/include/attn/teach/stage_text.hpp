#pragma once
// What each stage says about itself in this run: stage_table's formula,
// rewritten so that it is true of the run (a file instead of torch.randn,
// no "+ b_q" without the bias, the fill the user typed, ...).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_table.hpp"

namespace attn {

/// A number as the texts write it: up to four decimals, no trailing zeros (1.4142, 2, 0.5).
std::string short_number(double v);

/// A number as Python code writes it, reading back as the same double: the fewest digits,
/// a float always (10000.0, 1e-30, 1e+30, never 0 nor an integer past int64), float('inf').
std::string python_number(double v);

/// The fill as a Python expression that gives the run's fill: float('-inf'), or the fill as
/// typed (-1e9) unless Python would read it as an integer past int64 (then python_number).
std::string python_fill(const config& c);

/// The stage softmax reads in a run of `c`: "masked", else "biased" (ALiBi), else "scaled".
const char* softmax_input(const config& c);

/// The norm's eps as config.json would write it: "1e-05".
std::string short_eps(const config& c);

/// A norm of `x` over its last axis of `width`, as PyTorch code writes it: F.layer_norm with
/// `weight` and `bias`, or Hugging Face's LlamaRMSNorm, weight * (x * torch.rsqrt(...)).
/// The norm stage's, mlp_norm's and block's lines (--explain, --format py).
std::string torch_norm_line(norm_kind norm, const std::string& x, const std::string& weight, const std::string& bias,
                            std::int64_t width, float eps);

/// The title of stage `name` for a run of `c`: the stage table's ("scores scaled by
/// the square root of the head width"), or under --mistake, on the stages the
/// mistake changes, what the run does there instead (mistake_title).
std::string stage_title(const config& c, std::string_view name);

/// The formula line of stage `name` for a run of `c`, e.g. for masked with
/// --fill -1e9: "masked = scaled.masked_fill(mask == false, -1e9)".
std::string stage_formula(const config& c, std::string_view name);

/// "Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v" (the biases only with
/// c.qkv_bias); without the ᵀ or the biases, as the mistakes that leave them out.
std::string projections_formula(const config& c, bool transposed = true, bool bias = true);

/// One line of a run's description: a label ("sizes") and its text.
struct run_line {
    std::string label;
    std::string text;
};

/// The run in three lines, four with dropout (--format table prints them on top):
///   run      self-attention: Q, K, V from x; seed 24; no output projection
///   sizes    B=2  Sq=5  Sk=5  Din=8  D=8  H=4  dk=2  √dk=1.4142
///   mask     causal, fill -inf
///   dropout  p=0.5, training mode: stage 11, keep drawn with --dropout-seed 0
/// With `seed_secret` (an exercise made with a class secret) the seed is not printed.
std::vector<run_line> run_summary(const config& c, bool seed_secret = false);

/// Where the tensors of stage `id` came from in a model's file (run_sources::weight_sources): for
/// params {"w_q", "h.1.attn.c_attn.weight[:, 0:16]ᵀ (Conv1D stores [in, out])"}, ...; for norm
/// {"weight", "h.1.ln_1.weight"}, ...; empty for other stages and attn's own runs.
std::vector<run_line> stage_sources(const config& c, stage_id id);

/// Why stage `id` is not in a run of `c`, e.g. for dropout in eval mode:
/// "eval mode (--dropout acts only with --train), so the weights go on unchanged".
/// Written for mask, masked and dropout; empty for the others.
std::string stage_absence(const config& c, stage_id id);

}  // namespace attn
