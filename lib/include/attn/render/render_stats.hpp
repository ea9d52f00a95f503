#pragma once
// How --stats shows a tensor's statistics (compute/tensor_stats.hpp) in each format:
//   a line of text   "stats: min -2.1 max 1.9 mean 0.01 std 0.98 (n-1) over 40 finite of 40 values;
//                    zeros 0, nan 0, inf 0, -inf 0" and, for scores and scaled, the variance next
//                    to dk; for weights the mean entropy next to a uniform row's (table, torch,
//                    html, heatmap, svg, png);
//   a row's text     "H 0.6931 max 0.5000 @key 1" (the table, after each printed row of weights);
//   JSON             {"count","finite","min","max","mean","std","zeros","nan","inf","neg_inf",
//                    scores: "var","head_dim","var_over_head_dim"; weights: "entropy", "max_weight",
//                    "max_key" nested [B,H,Sq], "mean_entropy", "uniform_entropy", "rows_in_means"};
//                    numbers JSON cannot hold as "nan", "inf", "-inf" (CLI.md);
//   npz members      "stats.<stage>.<tensor>.<stat>": float32, 0-d, or [B,H,Sq] for a per-row one.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/compute/tensor_stats.hpp"

namespace attn {

/// "stats: min ... ; var ... ; entropy ..." in one line, numbers with `precision` digits.
std::string stats_line(const tensor_stats& s, std::string_view stage_name, int precision);

/// Row `row` of a weights tensor (over its leading axes): "H 0.6931 max 0.5000 @key 1".
std::string row_stats_text(const tensor_stats& s, std::size_t row, int precision);

/// The "stats" object of a tensor in the JSON document.
nlohmann::ordered_json stats_json(const tensor_stats& s);

/// The arrays of an npz's "stats.<stage>.<tensor>." members: (stat, shape, values).
struct stats_array {
    std::string stat;
    std::vector<std::size_t> shape;  // [] for one number
    std::vector<float> values;
};
std::vector<stats_array> stats_arrays(const tensor_stats& s);

}  // namespace attn
