#pragma once
// Per-tensor statistics (attn trace --stats), accumulated over rows as a stage comes
// (stage_sink.hpp: a [B,H,Sq,Sk] stage may come a block of rows at a time and never be
// held whole), in double.
//
//   every tensor   min, max, mean and std over its finite values (std as torch.std, the
//                  unbiased one: divided by n - 1), and the counts of zeros, NaN, inf, -inf;
//   scores, scaled var = std², next to dk (Var(q·k) = dk·Var(q)·Var(k) for independent
//                  zero-mean entries, so var/dk ≈ 1 for scores, var ≈ 1 for scaled, when q
//                  and k have unit variance);
//   weights        (softmax.weights, dropout.weights) per row [B,H,Sq]: the entropy
//                  -Σ p·ln p in nats (0·ln 0 = 0; NaN when the row holds a NaN), and the
//                  largest weight with its key, as weights.max(dim=-1) (a NaN wins, the first
//                  of equals); over the rows: the mean entropy and the mean of ln(keys with a
//                  weight above 0), a uniform row's entropy over the same keys, both over the
//                  rows whose entropy is finite and that have a weight above 0.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "attn/compute/stage_sink.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/compute/tensor.hpp"

namespace attn {

/// Which statistics a tensor gets besides every tensor's.
enum class stats_kind {
    plain,
    scores,   // scores.scores, scaled.scaled: the variance against dk
    weights,  // softmax.weights, dropout.weights: each row's entropy and largest weight
};

/// The kind of tensor `tensor_name` of stage `id`.
stats_kind stats_kind_of(stage_id id, std::string_view tensor_name);

struct tensor_stats {
    static constexpr double nan = std::numeric_limits<double>::quiet_NaN();

    stats_kind kind = stats_kind::plain;
    std::size_t count = 0;   // elements
    std::size_t finite = 0;  // of them finite: what min, max, mean and std are over
    double min = nan, max = nan, mean = nan;
    double std = nan;  // torch.std (unbiased, n - 1); NaN with fewer than 2 finite values
    std::size_t zeros = 0, nans = 0, pos_infs = 0, neg_infs = 0;

    // scores
    double head_dim = 0;  // dk
    double var() const { return std * std; }

    // weights: per row, over the leading axes [B,H,Sq] in row-major order
    tensor_shape row_shape;
    std::vector<double> entropy;      // nats
    std::vector<float> largest;       // the row's largest weight
    std::vector<std::int64_t> largest_key;  // its key (-1 in a row of no keys)
    double mean_entropy = nan;
    double uniform_entropy = nan;  // the mean of ln(keys with a weight above 0)
    std::size_t rows_in_means = 0;
};

/// Statistics of a tensor of `shape` whose rows (its last axis) come in any order, each once.
class stats_accumulator {
public:
    stats_accumulator(stats_kind kind, tensor_shape shape, double head_dim = 0);
    /// `count` rows from row `first_row` (counted over the leading axes), one after another at `data`.
    void add_rows(std::size_t first_row, std::size_t count, const float* data);
    tensor_stats result() const;

private:
    tensor_stats s_;
    std::size_t width_ = 0;
    double mean_ = 0, m2_ = 0;  // the mean and M2 of the finite values so far, merged a row at a time (Chan et al.)
    std::vector<std::uint32_t> positive_;  // weights: each row's keys above 0
};

/// The statistics of a whole tensor (any strides), read a row at a time.
tensor_stats stats_of(const tensor& t, stats_kind kind, double head_dim = 0);

/// The statistics of each tensor of a stage, as it comes: a sink that only reads. A whole
/// stage's are complete at begin(); a stage in rows has tensor i's once its last row came.
class stage_stats : public stage_sink {
public:
    void begin(const trace& so_far, const stage& s) override;
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) override;
    void end(const trace&, const stage&) override {}

    /// Tensor `index`'s statistics of the stage begun last.
    tensor_stats of(std::size_t index) const { return accumulators_.at(index).result(); }

private:
    std::vector<stats_accumulator> accumulators_;
};

}  // namespace attn
