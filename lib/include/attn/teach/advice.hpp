#pragma once
// Warnings about settings that do nothing, or that would teach a bug, each
// tied to the stage it concerns (so it is printed there and on stderr).
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

}  // namespace attn
