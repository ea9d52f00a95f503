#pragma once
// How the renderers show each stage: one row per stage, in stage_id order. These are render/'s
// facts (compute/ does not know the pictures or the bars), so they live here and not in
// stage_table; one_row_per_stage makes a new stage fail to build until it has its row here.
#include <array>

#include "attn/compute/stage_table.hpp"

namespace attn {

struct stage_view {
    stage_id id;
    /// It has a tensor the pictures draw (heatmap_panels.hpp): a [B,H,Sq,Sk] plane, alibi's
    /// bias [1,H,Sq,Sk], the mask [B,1,Sq,Sk], or a position table (pe [S,Din]; cos, sin [Sq,dk]).
    bool drawn;
    /// --row Q draws its query row as bars (render_row.hpp): the scores and the weights.
    bool row_bars;
};

// clang-format off
inline constexpr std::array<stage_view, stage_count> stage_views{{
    //                       drawn  row_bars
    {stage_id::embed,        false, false},
    {stage_id::input,        false, false},
    {stage_id::params,       false, false},
    {stage_id::norm,         false, false},
    {stage_id::positions,    true,  false},
    {stage_id::projections,  false, false},
    {stage_id::view,         false, false},
    {stage_id::transpose,    false, false},
    {stage_id::rope,         true,  false},
    {stage_id::cache,        false, false},
    {stage_id::append,       false, false},
    {stage_id::repeat_kv,    false, false},
    {stage_id::scores,       true,  true},
    {stage_id::scaled,       true,  true},
    {stage_id::alibi,        true,  false},
    {stage_id::biased,       true,  true},
    {stage_id::mask,         true,  false},
    {stage_id::masked,       true,  true},
    {stage_id::softmax,      true,  true},
    {stage_id::dropout,      true,  true},
    {stage_id::context,      false, false},
    {stage_id::flash,        false, false},
    {stage_id::merge,        false, false},
    {stage_id::concat,       false, false},
    {stage_id::output,       false, false},
    {stage_id::residual,     false, false},
    {stage_id::mlp_norm,     false, false},
    {stage_id::mlp,          false, false},
    {stage_id::block,        false, false},
}};
// clang-format on
static_assert(one_row_per_stage(stage_views));

constexpr const stage_view& view_of(stage_id id) { return stage_views[static_cast<std::size_t>(id)]; }

}  // namespace attn
