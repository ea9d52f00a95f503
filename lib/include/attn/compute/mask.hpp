#pragma once
// Attention masks [B,1,Sq,Sk] (one per batch item, shared by every head), true = the query
// may attend the key: torch.tril(ones)'s polarity, not triu(diagonal=1)'s.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// torch.manual_seed(seed); torch.rand(B,1,Sq,Sk) < keep.
xt::xarray<bool> mask_random(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::uint64_t seed, double keep);

/// The AND of every mask `c.mask` asks for and of `from_file` ([B,1,Sq,Sk],
/// --mask-file) when given; call only when c.mask.any().
xt::xarray<bool> build_mask(const config& c, const xt::xarray<bool>* from_file = nullptr);

/// A mask [B,1,Sq,Sk] a query row at a time: read from a whole mask, or made from the rules
/// (written here once; mask_spec says them), so that a run need not hold [B,1,Sq,Sk]. A
/// random mask, a mask file, --key-padding-mask and the mask stage's mistakes are built whole.
class mask_rows {
public:
    /// Whether the rules make all of c's mask (c.mask.any() and nothing but rules).
    static bool make_all_of(const config& c);
    /// Made from the rules of `m` for Sq queries, Sk keys; with a mask-rule mistake
    /// (changes_mask_rules), made in way `way` as that mistake makes it. Query i is the token at
    /// position first_query + i (first_query_position: N in a decoding step), which the window
    /// and padding_on_queries measure from; causal's own alignment says where its diagonal is.
    mask_rows(const mask_spec& m, std::int64_t sq, std::int64_t sk, mistake wrong = mistake::none, int way = 0,
              std::int64_t first_query = 0);
    /// Read from `whole` [B,1,Sq,Sk], which must outlive this.
    explicit mask_rows(const xt::xarray<bool>& whole);
    /// Query i of batch item b: Sk bools, in the whole mask or made into `scratch` (room for Sk).
    const bool* row(std::size_t b, std::size_t i, bool* scratch) const;

private:
    const xt::xarray<bool>* whole_ = nullptr;
    const mask_spec* rules_ = nullptr;
    mistake wrong_ = mistake::none;
    int way_ = 0;
    std::int64_t sq_, sk_;
    std::int64_t first_query_ = 0;
};

/// The softmax stage's warnings about rows of `mask` with no allowed key: one per row when
/// there are few, else one that names them as ranges.
void warn_empty_rows(const mask_rows& mask, const config& c, warning_list& out);

/// Parses --mask, "none" or kinds joined by '+' ("causal+padding"), into the kind flags of
/// `spec`; throws usage_error for an unknown or repeated kind.
void parse_mask_kinds(std::string_view text, mask_spec& spec);

/// The inverse: "none" or "causal+padding".
std::string mask_kinds_to_string(const mask_spec& spec);

}  // namespace attn
