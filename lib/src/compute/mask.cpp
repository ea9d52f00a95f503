#include "attn/compute/mask.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/compute/generator.hpp"

namespace attn {
namespace {

std::vector<std::size_t> mask_shape(std::int64_t batch, std::int64_t sq, std::int64_t sk) {
    return {static_cast<std::size_t>(batch), 1, static_cast<std::size_t>(sq), static_cast<std::size_t>(sk)};
}

/// A [B,1,Sq,Sk] mask of `rules` but their polarity, each row made by mask_rows.
xt::xarray<bool> rules_mask(mask_rules rules, std::int64_t batch) {
    xt::xarray<bool> mask(mask_shape(batch, rules.sq, rules.sk));
    rules.inverted = false;  // the whole mask's, build_mask's last step
    const mask_rows rows(rules);
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t i = 0; i < rules.sq; ++i)
            rows.row(static_cast<std::size_t>(b), static_cast<std::size_t>(i), mask.data() + (b * rules.sq + i) * rules.sk);
    return mask;
}

}  // namespace

xt::xarray<bool> mask_random(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::uint64_t seed, double keep) {
    // torch.rand(B,1,Sq,Sk) < keep: one uniform per element, compared in float32
    // as torch compares a float tensor with a Python float.
    const auto n = static_cast<std::size_t>(batch * sq * sk);
    std::vector<float> draws(n);
    torch_generator(seed).rand(draws.data(), n);
    xt::xarray<bool> mask(mask_shape(batch, sq, sk));
    const auto threshold = static_cast<float>(keep);
    for (std::size_t e = 0; e < n; ++e) mask.data()[e] = draws[e] < threshold;
    return mask;
}

mask_rules rules_of(const mask_spec& m, std::int64_t sq, std::int64_t sk, std::int64_t first_query) {
    mask_rules r;
    r.causal = m.causal, r.padding = m.padding, r.window = m.window;
    r.diagonal = m.causal_align == causal_alignment::lower_right ? sk - sq : 0;
    // no |i - j| is more than Sq + N + Sk: a wider --window is that
    r.window_size = m.window ? std::min(*m.window_size, sq + first_query + sk) : 0;
    r.lengths = &m.lengths;
    r.sq = sq, r.sk = sk, r.first_query = first_query;
    return r;
}

xt::xarray<bool> build_mask(const config& c, const mask_rules& rules, const xt::xarray<bool>* from_file) {
    const mask_spec& m = c.mask;
    xt::xarray<bool> mask = m.causal || m.padding || m.window
                                ? rules_mask(rules, c.batch)
                                : xt::xarray<bool>(mask_shape(c.batch, c.seq, c.kv_seq), true);
    if (m.random) mask = mask && mask_random(c.batch, c.seq, c.kv_seq, m.random_seed, m.random_keep);
    if (from_file) mask = mask && *from_file;
    if (rules.inverted) mask = xt::xarray<bool>(!mask);
    return mask;
}

xt::xarray<bool> build_mask(const config& c, const xt::xarray<bool>* from_file) {
    return build_mask(c, rules_of(c.mask, c.seq, c.kv_seq, first_query_position(c)), from_file);
}

bool mask_rows::make_all_of(const config& c) {
    const mask_spec& m = c.mask;
    return m.any() && !m.random && !m.from_file && !m.key_padding;
}

mask_rows::mask_rows(const mask_rules& rules) : rules_(rules) {}

mask_rows::mask_rows(const mask_spec& m, std::int64_t sq, std::int64_t sk, std::int64_t first_query)
    : rules_(rules_of(m, sq, sk, first_query)) {}

mask_rows::mask_rows(const xt::xarray<bool>& whole) : whole_(&whole) {
    rules_.sq = static_cast<std::int64_t>(whole.shape()[2]);
    rules_.sk = static_cast<std::int64_t>(whole.shape()[3]);
}

const bool* mask_rows::row(std::size_t b, std::size_t i, bool* scratch) const {
    const mask_rules& r = rules_;
    const auto width = static_cast<std::size_t>(r.sk);
    if (whole_ != nullptr) return whole_->data() + (b * static_cast<std::size_t>(r.sq) + i) * width;
    const auto q = static_cast<std::int64_t>(i);
    const std::int64_t at = q + r.first_query;  // the query's position among the keys' (a decoding step: N + i)
    const std::int64_t length = r.padding ? (*r.lengths)[b] : 0;
    for (std::int64_t j = 0; j < r.sk; ++j) {
        const bool causal_ok = j <= q + r.diagonal, padding_ok = (r.padding_on_queries ? at : j) < length,
                   window_ok = std::llabs(at - j) <= r.window_size;
        const bool allowed = r.any_of ? (r.causal && causal_ok) || (r.padding && padding_ok) || (r.window && window_ok)
                                      : (!r.causal || causal_ok) && (!r.padding || padding_ok) && (!r.window || window_ok);
        scratch[j] = allowed != r.inverted;
    }
    return scratch;
}

void parse_mask_kinds(std::string_view text, mask_spec& spec) {
    spec.causal = spec.padding = spec.window = spec.random = false;
    if (text == "none") return;
    const std::string expected = "expected none, or causal, padding, window, random joined by '+'";
    if (text.empty()) throw usage_error("--mask is empty (" + expected + ")");
    std::size_t start = 0;
    while (true) {
        const std::size_t plus = text.find('+', start);
        const std::string_view kind = text.substr(start, plus == std::string_view::npos ? plus : plus - start);
        bool* flag = kind == "causal"  ? &spec.causal
                     : kind == "padding" ? &spec.padding
                     : kind == "window"  ? &spec.window
                     : kind == "random"  ? &spec.random
                                         : nullptr;
        if (flag == nullptr)
            throw usage_error("--mask " + std::string(text) + ": unknown kind '" + std::string(kind) + "' (" +
                              expected + ")");
        if (*flag) throw usage_error("--mask " + std::string(text) + ": '" + std::string(kind) + "' is given twice");
        *flag = true;
        if (plus == std::string_view::npos) break;
        start = plus + 1;
    }
}

std::string mask_kinds_to_string(const mask_spec& spec) {
    std::string text;
    const auto add = [&](bool on, const char* kind) {
        if (on) text += (text.empty() ? "" : "+") + std::string(kind);
    };
    add(spec.causal, "causal");
    add(spec.padding, "padding");
    add(spec.window, "window");
    add(spec.random, "random");
    return text.empty() ? "none" : text;
}

namespace {

// Up to this many rows with no allowed key get a warning each; more get one that lists them.
constexpr std::size_t rows_named_one_by_one = 3;

/// The (batch, query) rows of the mask [B,1,Sq,Sk] in which no key may be attended.
std::vector<std::pair<std::size_t, std::size_t>> empty_rows(const config& c, const mask_rows& mask) {
    const auto batch = static_cast<std::size_t>(c.batch), sq = static_cast<std::size_t>(c.seq),
               sk = static_cast<std::size_t>(c.kv_seq);
    std::vector<std::pair<std::size_t, std::size_t>> rows;
    const std::unique_ptr<bool[]> scratch(new bool[std::max<std::size_t>(sk, 1)]);
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* row = mask.row(b, i, scratch.get());
            if (std::find(row, row + sk, true) == row + sk) rows.emplace_back(b, i);
        }
    return rows;
}

}  // namespace

// "batch 1, query 3: no key may be attended, so its weights are NaN (fill -inf)" for a few
// rows; for more, one warning naming the first eight runs ("batch 1 queries 0..3, batch 2 query 5").
void warn_empty_rows(const mask_rows& mask, const config& c, warning_list& out) {
    const auto rows = empty_rows(c, mask);
    if (rows.empty()) return;
    // what softmax makes of such a row: 0 with --safe-softmax, else NaN for -inf, uniform for a finite
    // fill (and then weights·V averages every value: the row's context is the mean of V)
    const std::string becomes = c.safe_softmax ? "0 (--safe-softmax)"
                                : std::isinf(c.fill) ? "NaN (fill " + fill_text(c) + ")"
                                                     : "uniform (fill " + fill_text(c) + "), and its context is the plain mean of V";
    if (rows.size() <= rows_named_one_by_one) {
        for (const auto& [b, i] : rows)
            out.push_back({"softmax", "batch " + std::to_string(b) + ", query " + std::to_string(i) +
                                          ": no key may be attended, so its weights are " + becomes});
        return;
    }
    std::string names;
    std::size_t runs = 0;
    for (std::size_t k = 0; k < rows.size();) {
        std::size_t last = k;  // rows[k..last]: consecutive queries of one batch item
        while (last + 1 < rows.size() && rows[last + 1].first == rows[k].first &&
               rows[last + 1].second == rows[last].second + 1)
            ++last;
        if (++runs <= 8) {
            const std::string first = std::to_string(rows[k].second);
            names += (runs > 1 ? ", batch " : "batch ") + std::to_string(rows[k].first) +
                     (last == k ? " query " + first : " queries " + first + ".." + std::to_string(rows[last].second));
        }
        k = last + 1;
    }
    if (runs > 8) names += ", ... (" + std::to_string(rows.size()) + " rows in all)";
    out.push_back({"softmax", "no key may be attended in " + names + ": their weights are " +
                                  (c.safe_softmax       ? std::string("0 (--safe-softmax)")
                                   : std::isinf(c.fill) ? std::string("NaN (the fill is -inf; PyTorch gives NaN too)")
                                                        : "uniform (the fill " + fill_text(c) +
                                                              " is finite), and their context is the plain mean of V")});
}

}  // namespace attn
