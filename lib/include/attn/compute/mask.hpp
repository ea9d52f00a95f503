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

/// The mask of the rules alone (--mask causal, padding, window: most runs) a query row at
/// a time, so that a run that does not show the mask stage never holds [B,1,Sq,Sk]
/// (1 GiB at Sq = Sk = 32768). A random mask (its draws are one stream over the whole
/// mask), a mask file and --key-padding-mask are built whole (build_mask), and so is a
/// mask --mistake mask_inverted inverts.
class mask_rows {
public:
    /// Whether the rules make all of c's mask (c.mask.any() and nothing but rules).
    static bool make_all_of(const config& c);
    explicit mask_rows(const config& c);  // make_all_of(c) must hold
    /// out[j] = whether query i of batch item b may attend key j, for j < Sk: build_mask's
    /// row [b, 0, i, :].
    void row(std::size_t b, std::size_t i, bool* out) const;

private:
    const mask_spec* spec_;
    std::int64_t sq_, sk_;
};

/// Parses --mask: "none" or kinds joined by '+' ("causal+padding"). Sets the
/// kind flags of `spec` and leaves its other fields alone; throws usage_error
/// naming --mask for an unknown or repeated kind.
void parse_mask_kinds(std::string_view text, mask_spec& spec);

/// The inverse of parse_mask_kinds: "none" or "causal+padding".
std::string mask_kinds_to_string(const mask_spec& spec);

}  // namespace attn
