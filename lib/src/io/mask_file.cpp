#include "attn/io/mask_file.hpp"

#include "attn/compute/error.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

/// Below this an additive mask value removes the key (softmax gives it ~0 weight).
constexpr float additive_block_limit = -1e4f;

bool is_additive_block(float v) { return v <= additive_block_limit; }  // -inf, -1e9, torch.finfo.min

/// Every value is 0 or a large negative, and at least one is not 0: an additive mask.
bool looks_additive(const xt::xarray<float>& values) {
    bool some_negative = false;
    for (const float v : values) {
        if (v != 0.0f && !is_additive_block(v)) return false;
        some_negative = some_negative || v != 0.0f;
    }
    return some_negative;
}

}  // namespace

std::vector<bool> mask_keep_values(const loaded_tensor& t, mask_convention m, const std::string& what) {
    std::vector<bool> keep(t.values.size());
    for (std::size_t e = 0; e < t.values.size(); ++e) {
        const float v = t.values.data()[e];
        const auto where = [&] { return shortest_text(v) + " at " + element_index_text(unravel_index(e, t.shape)); };
        if (m == mask_convention::additive) {
            if (v != 0.0f && !is_additive_block(v))
                throw error(what + ": " + where() +
                            " is not 0 or a large negative (an additive mask holds 0 = may attend, -inf or "
                            "<= -1e4 = may not; other values are score biases, which attn does not apply)");
            keep[e] = v == 0.0f;
            continue;
        }
        if (v != 0.0f && v != 1.0f) {
            const std::string meaning = m == mask_convention::keep ? "true/1 = may attend, false/0 = may not"
                                                                   : "true/1 = may not attend, false/0 = may";
            throw error(what + ": " + where() + " is not 0 or 1 (read as --mask-convention " +
                        std::string(mask_convention_name(m)) + ": " + meaning + ")" +
                        (looks_additive(t.values)
                             ? "; it looks like an additive mask of 0 and -inf: give --mask-convention additive"
                             : ""));
        }
        keep[e] = (v == 1.0f) == (m == mask_convention::keep);
    }
    return keep;
}

xt::xarray<bool> expand_attn_mask(const std::vector<bool>& keep, const std::vector<std::size_t>& shape,
                                  std::size_t batch) {
    const std::size_t sq = shape[shape.size() - 2], sk = shape[shape.size() - 1], plane = sq * sk;
    const bool per_batch = shape.size() > 2 && shape[0] == batch && batch > 1;  // else one plane for all
    auto mask = xt::xarray<bool>::from_shape({batch, 1, sq, sk});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t e = 0; e < plane; ++e) mask.data()[b * plane + e] = keep[(per_batch ? b * plane : 0) + e];
    return mask;
}

xt::xarray<bool> expand_key_padding(const std::vector<bool>& keep, std::size_t batch, std::size_t sq,
                                    std::size_t sk) {
    auto mask = xt::xarray<bool>::from_shape({batch, 1, sq, sk});
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i)
            for (std::size_t j = 0; j < sk; ++j) mask.data()[(b * sq + i) * sk + j] = keep[b * sk + j];
    return mask;
}

void mask_convention_hints(const xt::xarray<bool>& keep, mask_convention read_as, bool key_padding,
                           const std::string& flag_and_file, warning_list& out) {
    if (read_as == mask_convention::additive) return;  // its values leave no doubt
    const std::size_t batch = keep.shape()[0], sq = keep.shape()[2], sk = keep.shape()[3];
    const auto at = [&](std::size_t b, std::size_t i, std::size_t j) { return keep.data()[(b * sq + i) * sk + j]; };
    bool some_kept = false, only_above_diagonal = true;
    std::size_t empty_b = 0, empty_i = 0, empty_rows = 0;
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            bool row_kept = false;
            for (std::size_t j = 0; j < sk; ++j) {
                if (!at(b, i, j)) continue;
                row_kept = some_kept = true;
                only_above_diagonal = only_above_diagonal && j > i;
            }
            if (!row_kept && empty_rows++ == 0) empty_b = b, empty_i = i;
        }
    if (key_padding) {
        if (empty_rows == 0) return;
        const std::string other = read_as == mask_convention::mha ? "keep" : "mha";
        out.push_back({"mask", flag_and_file + ": every key of batch " + std::to_string(empty_b) + " is padding (read as " +
                                   std::string(mask_convention_name(read_as)) + ": " +
                                   (read_as == mask_convention::mha ? "true = padded key" : "true = real token") +
                                   "); if your file marks the other way, give --mask-convention " + other});
        return;
    }
    const std::string other = read_as == mask_convention::keep ? "mha" : "keep";
    const std::string reading = read_as == mask_convention::keep ? "true = may attend" : "true = may NOT attend";
    if (some_kept && only_above_diagonal && sq > 1 && read_as == mask_convention::keep)
        out.push_back({"mask", flag_and_file + " is strictly upper-triangular: read as keep (" + reading +
                                   "), every query may attend only later keys. It looks like nn.MultiheadAttention's "
                                   "convention (torch.triu(..., diagonal=1).bool(), true = not allowed): give "
                                   "--mask-convention mha"});
    else if (empty_rows > 0)
        out.push_back({"mask", flag_and_file + " leaves " + std::to_string(empty_rows) + " row" +
                                   (empty_rows == 1 ? "" : "s") + " with no key to attend (the first: batch " +
                                   std::to_string(empty_b) + ", query " + std::to_string(empty_i) + ") read as " +
                                   std::string(mask_convention_name(read_as)) + " (" + reading +
                                   "); if your file marks the other way, give --mask-convention " + other});
}

}  // namespace attn
