#include "attn/compute/mask.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/mistake.hpp"

namespace attn {
namespace {

using shape4 = std::vector<std::size_t>;

shape4 mask_shape(std::int64_t batch, std::int64_t sq, std::int64_t sk) {
    return {static_cast<std::size_t>(batch), 1, static_cast<std::size_t>(sq), static_cast<std::size_t>(sk)};
}

/// A [B,1,Sq,Sk] mask whose entry (b, i, j) is allowed(b, i, j).
template <class Rule>
xt::xarray<bool> make_mask(std::int64_t batch, std::int64_t sq, std::int64_t sk, Rule allowed) {
    xt::xarray<bool> mask(mask_shape(batch, sq, sk));
    bool* out = mask.data();
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t i = 0; i < sq; ++i)
            for (std::int64_t j = 0; j < sk; ++j) *out++ = allowed(b, i, j);
    return mask;
}

}  // namespace

xt::xarray<bool> mask_causal(std::int64_t batch, std::int64_t sq, std::int64_t sk, causal_alignment align) {
    // the diagonal of torch.tril: 0 upper-left; Sk - Sq lower-right, so the last query meets the last key
    const std::int64_t diagonal = align == causal_alignment::lower_right ? sk - sq : 0;
    return make_mask(batch, sq, sk,
                     [diagonal](std::int64_t, std::int64_t i, std::int64_t j) { return j <= i + diagonal; });
}

xt::xarray<bool> mask_padding(const std::vector<std::int64_t>& lengths, std::int64_t sq, std::int64_t sk) {
    const auto batch = static_cast<std::int64_t>(lengths.size());
    return make_mask(batch, sq, sk, [&](std::int64_t b, std::int64_t, std::int64_t j) { return j < lengths[b]; });
}

xt::xarray<bool> mask_window(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::int64_t window) {
    return make_mask(batch, sq, sk,
                     [window](std::int64_t, std::int64_t i, std::int64_t j) { return std::llabs(i - j) <= window; });
}

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

xt::xarray<bool> build_mask(const config& c, const xt::xarray<bool>* from_file) {
    const mask_spec& m = c.mask;
    xt::xarray<bool> mask(mask_shape(c.batch, c.seq, c.kv_seq), true);
    if (m.causal) mask = mask && mask_causal(c.batch, c.seq, c.kv_seq, m.causal_align);
    if (m.padding) mask = mask && mask_padding(m.lengths, c.seq, c.kv_seq);
    if (m.window) mask = mask && mask_window(c.batch, c.seq, c.kv_seq, *m.window_size);
    if (m.random) mask = mask && mask_random(c.batch, c.seq, c.kv_seq, m.random_seed, m.random_keep);
    if (from_file) mask = mask && *from_file;
    return mask;
}

bool mask_rows::make_all_of(const config& c) {
    const mask_spec& m = c.mask;
    return m.any() && !m.random && !m.from_file && !m.key_padding && c.mistake != mistake::mask_inverted;
}

mask_rows::mask_rows(const config& c) : spec_(&c.mask), sq_(c.seq), sk_(c.kv_seq) {}

void mask_rows::row(std::size_t b, std::size_t i, bool* out) const {
    const mask_spec& m = *spec_;
    const auto q = static_cast<std::int64_t>(i);
    const std::int64_t diagonal = m.causal_align == causal_alignment::lower_right ? sk_ - sq_ : 0;  // as mask_causal
    for (std::int64_t j = 0; j < sk_; ++j)
        out[j] = (!m.causal || j <= q + diagonal) && (!m.padding || j < m.lengths[b]) &&
                 (!m.window || std::llabs(q - j) <= *m.window_size);
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

}  // namespace attn
