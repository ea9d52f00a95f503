// The [B,H,Sq,Sk] stages a block of query rows at a time (plane_chain.hpp).
#include "attn/compute/plane_chain.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "attn/compute/linalg.hpp"
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
    const auto softmax = chain.safe_softmax ? safe_softmax_rows : softmax_rows;
    const std::size_t width = chain.width;
    const std::ptrdiff_t rows = static_cast<std::ptrdiff_t>(block.rows);
#pragma omp parallel for if (block.rows * width >= parallel_elements)
    for (std::ptrdiff_t r = 0; r < rows; ++r) {
        copy_source_row(block, r, width);
        softmax(block.data + static_cast<std::size_t>(r) * width, 1, width);
    }
}

void block_dropout(const plane_chain& chain, const plane_block& block, const float* draws, float* keep_out) {
    const dropout_scales scales = chain.dropout;
    const auto threshold = static_cast<float>(1.0 - chain.dropout_p);
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(block.rows * chain.width);
    const float* in = block.input();
    float* x = block.data;
#pragma omp parallel for if (n >= static_cast<std::ptrdiff_t>(parallel_elements))
    for (std::ptrdiff_t e = 0; e < n; ++e) {
        const bool keep = draws[e] < threshold;
        x[e] = in[e] * (keep ? scales.kept : scales.dropped);
        if (keep_out != nullptr) keep_out[e] = keep ? 1.0f : 0.0f;
    }
}

void block_context(const plane_chain& chain, const plane_block& block, float* context) {
    thread_local std::vector<float> value_scratch;
    const tensor& v = *chain.values;
    const std::size_t head_dim = v.values.shape()[3];
    const float* v_plane = row_major_rows(v, block.batch, block.head, 0, chain.width, value_scratch);
    float* out = context + ((block.batch * chain.heads + block.head) * chain.rows + block.first_row) * head_dim;
    bmm_rows(block.data, v_plane, out, block.rows, head_dim, chain.width, false, chain.rows);
}

}  // namespace

void for_each_plane(const plane_chain& chain, const rows_block& block,
                    const std::function<void(const plane_block&)>& fn, plane_product product) {
    const std::size_t plane_floats = block.rows * chain.width;
    const auto plane = [&](std::size_t i) {
        const std::size_t p = block.first_plane + i, at = i * plane_floats;
        return plane_block{p / chain.heads, p % chain.heads, block.first_row, block.rows, block.data + at,
                           block.source != nullptr ? block.source + at : nullptr};
    };
    const bool blas_threads = !blas_runs_on_one_thread(product.m, product.n, product.k);
    if (block.planes < 2 || thread_count() < 2 || block.planes * plane_floats < parallel_elements || blas_threads) {
        for (std::size_t i = 0; i < block.planes; ++i) fn(plane(i));
        return;
    }
    const blas_on_one_thread one;
#pragma omp parallel for schedule(dynamic)
    for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(block.planes); ++i) fn(plane(static_cast<std::size_t>(i)));
}

void scores_step(const plane_chain& chain, const rows_block& block) {
    for_each_plane(chain, block, [&](const plane_block& b) { block_scores(chain, b); },
                   {chain.rows, chain.width, chain.rows_of->values.shape()[3]});
}

void scale_step(const plane_chain& chain, const rows_block& block) {
    for_each_plane(chain, block, [&](const plane_block& b) { block_scale(chain, b); });
}

void bias_step(const plane_chain& chain, const rows_block& block) {
    for_each_plane(chain, block, [&](const plane_block& b) { block_bias(chain, b); });
}

void mask_step(const plane_chain& chain, const rows_block& block) {
    for_each_plane(chain, block, [&](const plane_block& b) { block_mask(chain, b, block.finding); });
}

void softmax_step(const plane_chain& chain, const rows_block& block) {
    for_each_plane(chain, block, [&](const plane_block& b) { block_softmax(chain, b); });
}

void dropout_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t plane_floats = block.rows * chain.width;
    for_each_plane(chain, block, [&](const plane_block& b) {
        const std::size_t at = (b.batch * chain.heads + b.head - block.first_plane) * plane_floats;
        block_dropout(chain, b, block.draws + at, block.keep != nullptr ? block.keep + at : nullptr);
    });
}

void context_step(const plane_chain& chain, const rows_block& block) {
    const std::size_t head_dim = chain.values->values.shape()[3];
    for_each_plane(chain, block, [&](const plane_block& b) { block_context(chain, b, block.context); },
                   {chain.rows, head_dim, chain.width});
}

dropout_scales reference_dropout_scales(double p) {
    return {p >= 1.0 ? 0.0f : 1.0f / static_cast<float>(1.0 - p), 0.0f};
}

void keep_from_draws(float* draws, std::size_t count, double p) {
    // a float tensor compared with a Python float: the scalar becomes float32
    const auto threshold = static_cast<float>(1.0 - p);
    for (std::size_t e = 0; e < count; ++e) draws[e] = draws[e] < threshold ? 1.0f : 0.0f;
}

}  // namespace attn
