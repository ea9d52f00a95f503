#pragma once
// Warnings about settings that do nothing, or that would teach a bug, each
// tied to the stage it concerns (so it is printed there and on stderr).
#include <cmath>
#include <cstddef>

#include <xtensor/xarray.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/warning.hpp"

namespace attn {

/// What the config alone tells: --dropout without --train (eval mode: the
/// identity), --train without --dropout, a causal mask with Sq != Sk (which
/// alignment it uses, and the --causal-align for the other).
warning_list settings_advice(const config& c);

/// A finite fill that is not far below the scores lets masked keys keep
/// weight: warns with the largest such weight and where, when it is at least
/// 1e-6 in a row that has an allowed key.
/// mask [B,1,Sq,Sk], scaled and weights [B,H,Sq,Sk].
void weak_fill_advice(const config& c, const xt::xarray<bool>& mask, const xt::xarray<float>& scaled,
                      const xt::xarray<float>& weights, warning_list& out);

/// What weak_fill_advice looks for, gathered row by row (the plane chain does, a block
/// of rows at a time): the largest weight of a masked key in a row with an allowed key,
/// where it is, and the range of the allowed keys' scaled scores.
struct weak_fill_finding {
    float worst = 0.0f;
    float low = INFINITY, high = -INFINITY;
    std::size_t at[4] = {0, 0, 0, 0};  // batch, head, query, key of `worst`

    /// Takes `other`'s findings in: the larger worst, and on a tie the one first in
    /// (batch, query, head, key) order, as weak_fill_advice scans.
    void merge(const weak_fill_finding& other);
};

/// weak_fill_advice's warning from a finding, when its worst weight is at least 1e-6.
void weak_fill_warning(const config& c, const weak_fill_finding& f, warning_list& out);

}  // namespace attn
