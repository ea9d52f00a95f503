// Per-tensor statistics, a row at a time (tensor_stats.hpp).
#include "attn/compute/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "attn/compute/threads.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

stats_kind stats_kind_of(stage_id id, std::string_view tensor_name) {
    if ((id == stage_id::softmax || id == stage_id::dropout) && tensor_name == "weights") return stats_kind::weights;
    if ((id == stage_id::scores && tensor_name == "scores") || (id == stage_id::scaled && tensor_name == "scaled"))
        return stats_kind::scores;
    return stats_kind::plain;
}

stats_accumulator::stats_accumulator(stats_kind kind, tensor_shape shape, double head_dim) {
    s_.kind = kind;
    s_.head_dim = head_dim;
    s_.count = std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());  // [] holds 1
    width_ = shape.empty() ? 1 : shape.back();
    if (kind != stats_kind::weights) return;
    s_.row_shape.assign(shape.begin(), shape.empty() ? shape.end() : shape.end() - 1);
    const std::size_t rows = width_ == 0 ? 0 : s_.count / width_;
    s_.entropy.assign(rows, tensor_stats::nan);
    s_.largest.assign(rows, std::numeric_limits<float>::quiet_NaN());
    s_.largest_key.assign(rows, -1);
    positive_.assign(rows, 0);
}

namespace {

/// What one row contributes: its finite values' count, mean, M2 (two passes), extremes and
/// counts; for weights its entropy, largest weight, key and keys above 0.
struct row_summary {
    std::size_t n = 0, zeros = 0, nans = 0, pos_infs = 0, neg_infs = 0;
    double mean = 0, m2 = 0, min = tensor_stats::nan, max = tensor_stats::nan;
    double entropy = 0;
    float largest = std::numeric_limits<float>::quiet_NaN();
    std::int64_t key = -1;
    std::uint32_t positive = 0;
};

row_summary summarise_row(const float* data, std::size_t width, bool weights) {
    row_summary r;
    double sum = 0;
    for (std::size_t j = 0; j < width; ++j) {
        const float v = data[j];
        if (std::isnan(v)) {
            ++r.nans;
        } else if (std::isinf(v)) {
            ++(v > 0 ? r.pos_infs : r.neg_infs);
        } else {
            ++r.n;
            sum += v;
            if (v == 0.0f) ++r.zeros;
            if (!(v >= r.min)) r.min = v;  // the first replaces NaN
            if (!(v <= r.max)) r.max = v;
        }
    }
    if (r.n > 0) {
        r.mean = sum / static_cast<double>(r.n);
        for (std::size_t j = 0; j < width; ++j)
            if (std::isfinite(data[j])) r.m2 += (data[j] - r.mean) * (data[j] - r.mean);
    }
    if (!weights || width == 0) return r;
    // -Σ p·ln p (0·ln 0 = 0), and max(dim=-1): a NaN wins, the first of equals
    r.largest = data[0];
    r.key = 0;
    for (std::size_t j = 0; j < width; ++j) {
        const double p = data[j];
        if (p > 0) ++r.positive;
        if (!(p == 0)) r.entropy -= p * std::log(p);  // a NaN or a negative weight: NaN
        if (std::isnan(r.largest)) continue;
        if (std::isnan(data[j]) || data[j] > r.largest) {
            r.largest = data[j];
            r.key = static_cast<std::int64_t>(j);
        }
    }
    return r;
}

}  // namespace

void stats_accumulator::add_rows(std::size_t first_row, std::size_t count, const float* data) {
    // each row summarised on its own (on every core for a large block), then merged in row
    // order: the same numbers for any thread count
    const bool weights = s_.kind == stats_kind::weights;
    std::vector<row_summary> summaries(count);
#pragma omp parallel for if (count * width_ >= parallel_elements && count > 1)
    for (std::ptrdiff_t r = 0; r < static_cast<std::ptrdiff_t>(count); ++r)
        summaries[static_cast<std::size_t>(r)] = summarise_row(data + static_cast<std::size_t>(r) * width_, width_, weights);
    for (std::size_t r = 0; r < count; ++r) {
        const row_summary& row = summaries[r];
        s_.zeros += row.zeros;
        s_.nans += row.nans;
        s_.pos_infs += row.pos_infs;
        s_.neg_infs += row.neg_infs;
        if (!(row.min >= s_.min)) s_.min = row.min;
        if (!(row.max <= s_.max)) s_.max = row.max;
        if (row.n > 0) {  // Chan et al.: the running mean and M2 with the row's
            const double before = static_cast<double>(s_.finite), added = static_cast<double>(row.n), all = before + added;
            const double delta = row.mean - mean_;
            mean_ += delta * added / all;
            m2_ += row.m2 + delta * delta * before * added / all;
            s_.finite += row.n;
        }
        if (!weights) continue;
        const std::size_t at = first_row + r;
        s_.entropy[at] = row.entropy;
        s_.largest[at] = row.largest;
        s_.largest_key[at] = row.key;
        positive_[at] = row.positive;
    }
}

tensor_stats stats_accumulator::result() const {
    tensor_stats s = s_;
    if (s.finite > 0) s.mean = mean_;
    if (s.finite > 1) s.std = std::sqrt(m2_ / static_cast<double>(s.finite - 1));
    if (s.kind != stats_kind::weights) return s;
    double entropy = 0, uniform = 0;
    for (std::size_t r = 0; r < s.entropy.size(); ++r) {
        if (!std::isfinite(s.entropy[r]) || positive_[r] == 0) continue;
        entropy += s.entropy[r];
        uniform += std::log(static_cast<double>(positive_[r]));
        ++s.rows_in_means;
    }
    if (s.rows_in_means > 0) {
        s.mean_entropy = entropy / static_cast<double>(s.rows_in_means);
        s.uniform_entropy = uniform / static_cast<double>(s.rows_in_means);
    }
    return s;
}

namespace {

/// Every row of `t` into `acc`, in row-major order: all at once from its storage when it is
/// contiguous, else a row at a time (a view's rows gathered by its strides).
void add_whole_tensor(stats_accumulator& acc, const tensor& t) {
    if (t.values.size() == 0) return;
    const tensor_shape shape(t.values.shape().begin(), t.values.shape().end());
    const std::size_t width = shape.empty() ? 1 : shape.back(), rows = t.values.size() / width;
    const float* storage = t.storage->data();
    if (t.contiguous()) return acc.add_rows(0, rows, storage + t.offset);
    const std::size_t rank = shape.size();
    std::vector<float> row(width);
    for (std::size_t r = 0; r < rows; ++r) {
        std::ptrdiff_t at = static_cast<std::ptrdiff_t>(t.offset);
        std::size_t rest = r;
        for (std::size_t a = rank - 1; a-- > 0;) {
            at += static_cast<std::ptrdiff_t>(rest % shape[a]) * t.strides[a];
            rest /= shape[a];
        }
        for (std::size_t j = 0; j < width; ++j) row[j] = storage[at + static_cast<std::ptrdiff_t>(j) * t.strides[rank - 1]];
        acc.add_rows(r, 1, row.data());
    }
}

}  // namespace

tensor_stats stats_of(const tensor& t, stats_kind kind, double head_dim) {
    stats_accumulator acc(kind, tensor_shape(t.values.shape().begin(), t.values.shape().end()), head_dim);
    add_whole_tensor(acc, t);
    return acc.result();
}

void stage_stats::begin(const trace& so_far, const stage& s) {
    accumulators_.clear();
    const double head_dim = static_cast<double>(so_far.cfg.head_dim());
    for (const tensor& t : s.tensors) {
        accumulators_.emplace_back(stats_kind_of(s.id(), t.name),
                                   tensor_shape(t.values.shape().begin(), t.values.shape().end()), head_dim);
        if (!s.in_rows()) add_whole_tensor(accumulators_.back(), t);
    }
}

void stage_stats::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) {
    if (index < accumulators_.size()) accumulators_[index].add_rows(first_row, count, data);
}

}  // namespace attn
