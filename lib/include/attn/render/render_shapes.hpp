#pragma once
// `attn trace --shapes` and `--format dot`: the chain of shapes and strides of every stage
// (run_plan.hpp), nothing computed. A table of one line per stage (tensors of one layout
// share a line), JSON at the trace's own paths without "data", or a Graphviz graph.
#include <ostream>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/render/render_options.hpp"

namespace attn {

/// The run's header (print_run_header), then per stage options.shows: its number, name,
/// tensors, shape in letters and in this run's numbers, strides as t.stride() prints them,
/// and its memory ("view of projections, not contiguous", "copy of merge", "own"):
///    5  transpose  q k v  [B,H,Sq,dk] = [2,4,5,2]  (40, 2, 8, 1)  view of projections, not contiguous
void render_shapes_table(const config& c, const std::vector<planned_stage>& stages, const render_options& options,
                         std::ostream& out);

/// {"format": "attn.shapes/1", "config": {...}, "stages": {"view": {"step", "title",
///  "tensors": {"q": {"shape", "dims", "letters", "dtype", "strides", "contiguous", "memory",
///  ["view_of" | "copy_of"]}}}}}: the trace JSON's paths (.stages.S.tensors.T.strides) without
/// "data"; "memory" is "own", "view" or "copy".
void render_shapes_json(const config& c, const std::vector<planned_stage>& stages, const render_options& options,
                        std::ostream& out);

/// `--format dot`: the run's stages as a Graphviz digraph (dot's language), top to bottom in
/// the run's order: a box per stage (options.shows) with its number, name and each tensor's
/// shape in letters and numbers and its strides; an edge from each stage it reads (through
/// stages options.shows leaves out), dashed where its tensors are views of what came before
/// (no data moves), solid where they are computed or copied (labelled with the copy:
/// ".contiguous()", "torch.cat", "repeat_interleave"). With a --mistake, the stage whose step
/// it replaces is drawn red and says so; the layouts are the right computation's. With
/// options.graph each box links to "#stage-NAME", the html page's section of that stage.
void render_plan_dot(const config& c, const std::vector<planned_stage>& stages, const render_options& options,
                     std::ostream& out);

}  // namespace attn
