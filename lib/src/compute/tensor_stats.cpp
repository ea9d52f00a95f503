// Per-tensor statistics, a row at a time (tensor_stats.hpp).
#include "attn/compute/tensor_stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

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
    s_.count = std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
    s_.count = shape.empty() ? 1 : s_.count;
    width_ = shape.empty() ? 1 : shape.back();
    if (kind != stats_kind::weights) return;
    s_.row_shape.assign(shape.begin(), shape.empty() ? shape.end() : shape.end() - 1);
    const std::size_t rows = width_ == 0 ? 0 : s_.count / width_;
    s_.entropy.assign(rows, tensor_stats::nan);
    s_.largest.assign(rows, std::numeric_limits<float>::quiet_NaN());
    s_.largest_key.assign(rows, -1);
    positive_.assign(rows, 0);
}

void stats_accumulator::add_rows(std::size_t first_row, std::size_t count, const float* data) {
    for (std::size_t r = 0; r < count; ++r) add_row(first_row + r, data + r * width_);
}

void stats_accumulator::add_row(std::size_t row, const float* data) {
    // the row's finite values: count, mean and M2 in two passes, then merged with the rows before
    std::size_t n = 0;
    double sum = 0;
    for (std::size_t j = 0; j < width_; ++j) {
        const float v = data[j];
        if (std::isnan(v)) {
            ++s_.nans;
        } else if (std::isinf(v)) {
            ++(v > 0 ? s_.pos_infs : s_.neg_infs);
        } else {
            ++n;
            sum += v;
            if (v == 0.0f) ++s_.zeros;
            if (!(v >= s_.min)) s_.min = v;  // the first replaces NaN
            if (!(v <= s_.max)) s_.max = v;
        }
    }
    if (n > 0) {
        const double row_mean = sum / static_cast<double>(n);
        double m2 = 0;
        for (std::size_t j = 0; j < width_; ++j)
            if (std::isfinite(data[j])) m2 += (data[j] - row_mean) * (data[j] - row_mean);
        const double before = static_cast<double>(s_.finite), added = static_cast<double>(n), all = before + added;
        const double delta = row_mean - sum_;
        sum_ += delta * added / all;  // the running mean
        m2_ += m2 + delta * delta * before * added / all;
        s_.finite += n;
    }
    if (s_.kind != stats_kind::weights) return;
    // -Σ p·ln p (0·ln 0 = 0), and max(dim=-1): a NaN wins, the first of equals
    double entropy = 0;
    float largest = width_ > 0 ? data[0] : std::numeric_limits<float>::quiet_NaN();
    std::int64_t key = width_ > 0 ? 0 : -1;
    std::uint32_t positive = 0;
    for (std::size_t j = 0; j < width_; ++j) {
        const double p = data[j];
        if (p > 0) {
            entropy -= p * std::log(p);
            ++positive;
        } else if (!(p == 0)) {
            entropy -= p * std::log(p);  // NaN, or (a negative weight) NaN too
        }
        if (std::isnan(largest)) continue;
        if (std::isnan(data[j]) || data[j] > largest) {
            largest = data[j];
            key = static_cast<std::int64_t>(j);
        }
    }
    s_.entropy[row] = entropy;
    s_.largest[row] = largest;
    s_.largest_key[row] = key;
    positive_[row] = positive;
}

tensor_stats stats_accumulator::result() const {
    tensor_stats s = s_;
    if (s.finite > 0) s.mean = sum_;
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

/// Every row of `t` (any strides) into `acc`, in row-major order.
void add_whole_tensor(stats_accumulator& acc, const tensor& t) {
    if (t.values.size() == 0) return;
    const tensor_shape shape(t.values.shape().begin(), t.values.shape().end());
    if (shape.empty()) {  // a lone value
        const float v = t.values();
        acc.add_rows(0, 1, &v);
        return;
    }
    const std::size_t width = shape.back(), rows = t.values.size() / width, rank = shape.size();
    const float* storage = t.storage->data();
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
