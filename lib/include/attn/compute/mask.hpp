#pragma once
// Attention masks, all of shape [B,1,Sq,Sk] (one mask per batch item, shared by
// every head), true = the query may attend the key. This is the polarity of
// torch.tril(ones) in seed notebook 000; triu(diagonal=1) in 003 is the opposite.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// Query i may attend keys j <= i (torch.tril(torch.ones(Sq, Sk))), or, aligned
/// lower-right, keys j <= i + Sk - Sq (torch.tril(torch.ones(Sq, Sk), diagonal=Sk - Sq)).
xt::xarray<bool> mask_causal(std::int64_t batch, std::int64_t sq, std::int64_t sk,
                             causal_alignment align = causal_alignment::upper_left);
/// Batch item b may attend keys j < lengths[b]; the keys after are padding.
xt::xarray<bool> mask_padding(const std::vector<std::int64_t>& lengths, std::int64_t sq, std::int64_t sk);
/// Query i may attend keys j with |i - j| <= window (local attention).
xt::xarray<bool> mask_window(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::int64_t window);
/// torch.manual_seed(seed); torch.rand(B,1,Sq,Sk) < keep.
xt::xarray<bool> mask_random(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::uint64_t seed, double keep);

/// The AND of every mask `c.mask` asks for and of `from_file` ([B,1,Sq,Sk],
/// --mask-file) when given; call only when c.mask.any().
xt::xarray<bool> build_mask(const config& c, const xt::xarray<bool>* from_file = nullptr);

/// A mask [B,1,Sq,Sk] a query row at a time: read from a whole mask, or made from the
/// rules alone (--mask causal, padding, window: most runs), so that a run that does not
/// show the mask stage never holds [B,1,Sq,Sk] (1 GiB at Sq = Sk = 32768). The rules are
/// written here once; mask_causal, mask_padding, mask_window and build_mask make their
/// rows with it. A random mask (its draws are one stream over the whole mask), a mask
/// file, --key-padding-mask and a mask --mistake mask_inverted inverts are built whole.
class mask_rows {
public:
    /// Whether the rules make all of c's mask (c.mask.any() and nothing but rules).
    static bool make_all_of(const config& c);
    /// Made from the rules of `m` (its causal, padding and window parts) for Sq queries, Sk keys.
    mask_rows(const mask_spec& m, std::int64_t sq, std::int64_t sk);
    /// Read from `whole` [B,1,Sq,Sk], which must outlive this.
    explicit mask_rows(const xt::xarray<bool>& whole);
    /// Query i of batch item b: Sk bools, whether it may attend each key; in the whole
    /// mask, or made into `scratch` (room for Sk).
    const bool* row(std::size_t b, std::size_t i, bool* scratch) const;

private:
    const xt::xarray<bool>* whole_ = nullptr;
    const mask_spec* rules_ = nullptr;
    std::int64_t sq_, sk_;
};

/// Warnings about the rows of `mask` in which no key may be attended (on the softmax
/// stage): one per row when there are few ("batch 1, query 3: no key may be attended, so
/// its weights are NaN (fill -inf)"), else one that names them as ranges.
void warn_empty_rows(const mask_rows& mask, const config& c, warning_list& out);

/// Parses --mask: "none" or kinds joined by '+' ("causal+padding"). Sets the
/// kind flags of `spec` and leaves its other fields alone; throws usage_error
/// naming --mask for an unknown or repeated kind.
void parse_mask_kinds(std::string_view text, mask_spec& spec);

/// The inverse of parse_mask_kinds: "none" or "causal+padding".
std::string mask_kinds_to_string(const mask_spec& spec);

}  // namespace attn
