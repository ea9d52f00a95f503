// The [B,H,Sq,Sk] stages a block of query rows at a time (plane_chain.hpp).
#include "attn/compute/plane_chain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "attn/compute/linalg.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/positions.hpp"
#include "attn/compute/threads.hpp"

namespace attn {
namespace {

/// Room for one row of a mask made by its rules (one per thread).
struct made_row {
    std::unique_ptr<bool[]> keys;
    std::size_t size = 0;
};

/// mask[b, 0, i, :] [W]: query i's allowed keys.
const bool* mask_row(const plane_chain& chain, std::size_t b, std::size_t i, made_row& made) {
    if (made.size < chain.width) {
        made.keys.reset(new bool[chain.width]);
        made.size = chain.width;
    }
    return chain.mask->row(b, i, made.keys.get());
}

/// Row r of the block from its source, when it has one: the step then works in place on it.
void copy_source_row(const plane_block& block, std::ptrdiff_t r, std::size_t width) {
    if (block.source == nullptr) return;
    const std::size_t at = static_cast<std::size_t>(r) * width;
    std::copy(block.source + at, block.source + at + width, block.data + at);
}

bool has_allowed_key(const bool* allowed, std::size_t width) {
    return std::find(allowed, allowed + width, true) != allowed + width;
}

/// The mistakes made in place of softmax's row step.
bool softmax_mistake(mistake m) {
    return m == mistake::masked_after_softmax || m == mistake::nan_replaced || m == mistake::log_softmax ||
           m == mistake::sigmoid_instead_of_softmax;
}

/// One row [W] of weights as softmax mistake `m` makes it from the logits in `row`, in place;
/// `allowed` is the row's mask (null without one).
void mistaken_softmax_row(mistake m, float* row, std::size_t width, const bool* allowed) {
    switch (m) {
        case mistake::log_softmax: {  // torch.log_softmax: x - max - log(sum(exp(x - max)))
            float top = -std::numeric_limits<float>::infinity();
            for (std::size_t j = 0; j < width; ++j) top = std::max(top, row[j]);
            float sum = 0.0f;
            for (std::size_t j = 0; j < width; ++j) sum += std::exp(row[j] - top);
            const float log_sum = std::log(sum);
            for (std::size_t j = 0; j < width; ++j) row[j] = row[j] - top - log_sum;
            return;
        }
        case mistake::sigmoid_instead_of_softmax:  // torch.sigmoid: each score on its own, rows sum to anything
            for (std::size_t j = 0; j < width; ++j) row[j] = 1.0f / (1.0f + std::exp(-row[j]));
            return;
        case mistake::nan_replaced:  // torch.nan_to_num(softmax(...)): a fully masked row 0, not NaN
            softmax_rows(row, 1, width);
            for (std::size_t j = 0; j < width; ++j)
                if (std::isnan(row[j])) row[j] = 0.0f;
            return;
        case mistake::masked_after_softmax:  // softmax(scaled).masked_fill(mask == 0, 0): rows sum to less than 1
            softmax_rows(row, 1, width);
            if (allowed != nullptr)
                for (std::size_t j = 0; j < width; ++j)
                    if (!allowed[j]) row[j] = 0.0f;
            return;
        default: return;
    }
}

}  // namespace

plane_chain make_plane_chain(const config& c, const tensor& q, const tensor& k, const tensor* v,
                             const mask_rows* mask) {
    plane_chain chain;
    chain.cfg = &c;
    const bool swapped = c.mistake == mistake::q_k_swapped;
    chain.rows_of = swapped ? &k : &q;
    chain.columns_of = swapped ? &q : &k;
    chain.values = v;
    chain.mask = mask;
    chain.batch = q.values.shape()[0];
    chain.heads = q.values.shape()[1];
    chain.rows = chain.rows_of->values.shape()[2];
    chain.width = chain.columns_of->values.shape()[2];
    return chain;
}

void block_scores(const plane_chain& chain, const plane_block& block) {
    thread_local std::vector<float> row_scratch, column_scratch;
    const tensor& a = *chain.rows_of;
    const tensor& b = *chain.columns_of;
    const std::size_t head_dim = a.values.shape()[3];
    const float* a_rows = row_major_rows(a, block.batch, block.head, block.first_row, block.rows, row_scratch);
    const float* b_plane = row_major_rows(b, block.batch, block.head, 0, chain.width, column_scratch);
    bmm_rows(a_rows, b_plane, block.data, block.rows, chain.width, head_dim, true, chain.rows);
}

void block_scale(const plane_chain& chain, const plane_block& block) {
    const float divisor = chain.divisor;
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(block.rows * chain.width);
    const float* in = block.input();
    float* x = block.data;
    if (chain.cfg->mistake == mistake::scale_multiplied) {  // --mistake: scores * math.sqrt(dk)
#pragma omp parallel for if (n >= static_cast<std::ptrdiff_t>(parallel_elements))
        for (std::ptrdiff_t e = 0; e < n; ++e) x[e] = in[e] * divisor;
        return;
    }
#pragma omp parallel for if (n >= static_cast<std::ptrdiff_t>(parallel_elements))
    for (std::ptrdiff_t e = 0; e < n; ++e) x[e] = in[e] / divisor;
}

void block_bias(const plane_chain& chain, const plane_block& block) {
    const float slope = chain.alibi_slopes[block.head];
    const std::size_t width = chain.width;
    const float* in = block.input();
    for (std::size_t r = 0; r < block.rows; ++r) {
        const auto i = chain.first_query_position + static_cast<std::int64_t>(block.first_row + r);
        for (std::size_t j = 0; j < width; ++j)
            block.data[r * width + j] = in[r * width + j] + alibi_bias_at(slope, i, static_cast<std::int64_t>(j));
    }
}

void block_mask(const plane_chain& chain, const plane_block& block, weak_fill_finding* finding) {
    const std::size_t width = chain.width;
    const mistake m = chain.cfg->mistake;
    if (m == mistake::mask_not_applied || m == mistake::masked_after_softmax) {  // --mistake: masked = scaled
        for (std::size_t r = 0; r < block.rows; ++r) copy_source_row(block, static_cast<std::ptrdiff_t>(r), width);
        return;
    }
    const float fill = chain.fill;
    const std::ptrdiff_t rows = static_cast<std::ptrdiff_t>(block.rows);
#pragma omp parallel if (block.rows * width >= parallel_elements)
    {
        weak_fill_finding mine;
        std::vector<float> weights;  // one masked row's softmax, for the finding
        made_row made;               // room for a mask row made by its rules
#pragma omp for
        for (std::ptrdiff_t r = 0; r < rows; ++r) {
            const std::size_t i = block.first_row + static_cast<std::size_t>(r);
            float* row = block.data + static_cast<std::size_t>(r) * width;
            copy_source_row(block, r, width);
            const bool* allowed = mask_row(chain, block.batch, i, made);
            const bool inspect = finding != nullptr && has_allowed_key(allowed, width);
            for (std::size_t j = 0; j < width; ++j) {
                if (allowed[j]) {
                    if (inspect) {
                        mine.low = std::min(mine.low, row[j]);
                        mine.high = std::max(mine.high, row[j]);
                    }
                } else {
                    row[j] = fill;
                }
            }
            if (!inspect) continue;
            weights.assign(row, row + width);
            softmax_rows(weights.data(), 1, width);  // the row's weights, as block_softmax gives them
            weak_fill_finding here;
            for (std::size_t j = 0; j < width; ++j)
                if (!allowed[j] && weights[j] > here.worst) {
                    here.worst = weights[j];
                    here.at[0] = block.batch, here.at[1] = block.head, here.at[2] = i, here.at[3] = j;
                }
            mine.merge(here);
        }
        if (finding != nullptr) {
#pragma omp critical(attn_weak_fill)
            finding->merge(mine);
        }
    }
}

void block_softmax(const plane_chain& chain, const plane_block& block) {
    // --safe-softmax is torch._safe_softmax: a row of -inf only (every key masked with the
    // fill -inf, which validate() requires of it) becomes 0 instead of NaN
    const config& c = *chain.cfg;
    const auto softmax = c.safe_softmax ? safe_softmax_rows : softmax_rows;
    const std::size_t width = chain.width;
    const std::ptrdiff_t rows = static_cast<std::ptrdiff_t>(block.rows);
#pragma omp parallel for if (block.rows * width >= parallel_elements)
    for (std::ptrdiff_t r = 0; r < rows; ++r) {
        float* row = block.data + static_cast<std::size_t>(r) * width;
        copy_source_row(block, r, width);
        if (softmax_mistake(c.mistake)) {  // --mistake log_softmax, masked_after_softmax, ...
            thread_local made_row made;    // room for a mask row made by its rules
            const std::size_t i = block.first_row + static_cast<std::size_t>(r);
            mistaken_softmax_row(c.mistake, row, width,
                                 chain.mask != nullptr ? mask_row(chain, block.batch, i, made) : nullptr);
            continue;
        }
        softmax(row, 1, width);
    }
}

void keep_from_draws(float* draws, std::size_t count, double p) {
    // a float tensor compared with a Python float: the scalar becomes float32
    const auto threshold = static_cast<float>(1.0 - p);
    for (std::size_t e = 0; e < count; ++e) draws[e] = draws[e] < threshold ? 1.0f : 0.0f;
}

void block_dropout(const plane_chain& chain, const plane_block& block, const float* draws, float* keep_out) {
    // aten: noise = keep.float().div_(1 - p); out = weights * noise (p == 1: weights * 0)
    // (--mistake dropout_not_rescaled: weights * keep; dropout_keep_inverted: weights * ~keep / (1 - p))
    const double p = chain.cfg->dropout.p;
    const mistake m = chain.cfg->mistake;
    const float scale = m == mistake::dropout_not_rescaled ? 1.0f : p >= 1.0 ? 0.0f : 1.0f / static_cast<float>(1.0 - p);
    const bool inverted = m == mistake::dropout_keep_inverted;
    const auto threshold = static_cast<float>(1.0 - p);
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(block.rows * chain.width);
    const float* in = block.input();
    float* x = block.data;
#pragma omp parallel for if (n >= static_cast<std::ptrdiff_t>(parallel_elements))
    for (std::ptrdiff_t e = 0; e < n; ++e) {
        const bool keep = draws[e] < threshold;
        x[e] = in[e] * (keep != inverted ? scale : 0.0f);
        if (keep_out != nullptr) keep_out[e] = keep ? 1.0f : 0.0f;
    }
}

void block_context(const plane_chain& chain, const plane_block& block, float* context) {
    thread_local std::vector<float> value_scratch;
    const tensor& v = *chain.values;
    const std::size_t head_dim = v.values.shape()[3];
    const float* v_plane = row_major_rows(v, block.batch, block.head, 0, chain.width, value_scratch);
    float* out = context + ((block.batch * chain.heads + block.head) * chain.rows + block.first_row) * head_dim;
    if (chain.cfg->mistake == mistake::weights_transposed) {
        // --mistake weights_transposed: weights.transpose(-2, -1) @ v, on the whole plane (Sq == Sk;
        // plan_memory keeps the tensor whole for this), transposed into a contiguous copy as matmul does
        thread_local std::vector<float> transposed;
        const std::size_t w = chain.width;
        transposed.resize(w * w);
        for (std::size_t i = 0; i < w; ++i)
            for (std::size_t j = 0; j < w; ++j) transposed[j * w + i] = block.data[i * w + j];
        bmm_rows(transposed.data(), v_plane, out, w, head_dim, w, false, chain.rows);
        return;
    }
    bmm_rows(block.data, v_plane, out, block.rows, head_dim, chain.width, false, chain.rows);
}

}  // namespace attn
