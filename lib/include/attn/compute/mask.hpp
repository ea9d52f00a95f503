#pragma once
// Attention masks [B,1,Sq,Sk] (one per batch item, shared by every head), true = the query
// may attend the key: torch.tril(ones)'s polarity, not triu(diagonal=1)'s.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// torch.manual_seed(seed); torch.rand(B,1,Sq,Sk) < keep.
xt::xarray<bool> mask_random(std::int64_t batch, std::int64_t sq, std::int64_t sk, std::uint64_t seed, double keep);

/// The rules of a mask [B,1,Sq,Sk] as knobs, each PyTorch's own: query i (the token at position
/// first_query + i) may attend key j when the kinds on allow it, joined by AND (or OR).
struct mask_rules {
    bool causal = false, padding = false, window = false;  // the kinds applied
    std::int64_t diagonal = 0;       // causal: j <= i + diagonal (torch.tril's diagonal: 0 upper-left, Sk - Sq lower-right)
    std::int64_t window_size = 0;    // window: |first_query + i - j| <= window_size
    bool padding_on_queries = false; // padding: first_query + i < length instead of j < length
    bool any_of = false;             // the kinds joined by OR instead of AND
    bool inverted = false;           // the polarity flipped: true = may NOT attend (of the whole mask)
    const std::vector<std::int64_t>* lengths = nullptr;  // padding: one length per batch item
    std::int64_t sq = 0, sk = 0, first_query = 0;
};

/// The rules `m` gives for Sq queries from position first_query and Sk keys: its kinds, causal's
/// alignment as a diagonal, the window no wider than Sq + first_query + Sk (so +1 cannot wrap).
mask_rules rules_of(const mask_spec& m, std::int64_t sq, std::int64_t sk, std::int64_t first_query = 0);

/// The AND of every mask `c.mask` asks for, the rules' kinds by `rules` (rules_of, or a run's
/// steps'), and of `from_file` ([B,1,Sq,Sk], --mask-file) when given; call only when c.mask.any().
xt::xarray<bool> build_mask(const config& c, const mask_rules& rules, const xt::xarray<bool>* from_file = nullptr);
/// The same with c's own rules (rules_of).
xt::xarray<bool> build_mask(const config& c, const xt::xarray<bool>* from_file = nullptr);

/// A mask [B,1,Sq,Sk] a query row at a time: read from a whole mask, or made from the rules
/// (written here once; mask_rules says them), so that a run need not hold [B,1,Sq,Sk]. A
/// random mask, a mask file and --key-padding-mask are built whole.
class mask_rows {
public:
    /// Whether the rules make all of c's mask (c.mask.any() and nothing but rules).
    static bool make_all_of(const config& c);
    /// Made from `rules`.
    explicit mask_rows(const mask_rules& rules);
    /// Made from the rules of `m` (rules_of).
    mask_rows(const mask_spec& m, std::int64_t sq, std::int64_t sk, std::int64_t first_query = 0);
    /// Read from `whole` [B,1,Sq,Sk], which must outlive this.
    explicit mask_rows(const xt::xarray<bool>& whole);
    /// Query i of batch item b: Sk bools, in the whole mask or made into `scratch` (room for Sk).
    const bool* row(std::size_t b, std::size_t i, bool* scratch) const;

private:
    const xt::xarray<bool>* whole_ = nullptr;
    mask_rules rules_;
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
