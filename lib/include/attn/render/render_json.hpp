#pragma once
// --format json and --format jsonl (CLI.md, "JSON").
//
//   { "format": "attn.trace/1", "config": {...},
//     "stages": { "input": { "step": 1, "title": ..., "formula": ..., ["warnings": [...],]
//                            ["explain": {"words", "shapes", "einsum", "torch", "memory", "why"},]
//                            "tensors": { "x": { "shape": [...], "dims": [...],
//                                                "dtype": "float32", "data": [[...]] } } }, ... },
//     "warnings": [...] }
//
// `data` nests like tensor.tolist(); numbers are float32 written with the
// fewest digits that read back to the same float; "-inf", "inf" and "nan" are
// strings; masks are true/false.
#include <ostream>

#include <nlohmann/json.hpp>

#include "attn/render/render_options.hpp"
#include "attn/compute/trace.hpp"

namespace attn {

/// The whole trace as one JSON document (stages filtered by options.stages). With a
/// view (options.batch_index, head, row; selection.hpp) the document says so in
/// "selection": {"batch_index": 1, "head": 2}, after "config", and each tensor holds only
/// the selected part: "shape" is the part's (selected axes kept at size 1), with
/// "full_shape" and "index": {"batch": 1, "head": 2} added where a tensor was cut.
void render_json(const trace& t, const render_options& options, std::ostream& out);

/// One line of JSON lines: the stage object with its "name" added, then '\n'.
/// `t` is the trace so far (for the warnings about `s`).
void render_json_line(const trace& t, const stage& s, std::ostream& out);

/// The same, with the tensors cut to options' view as render_json cuts them, and
/// "explain" with options.explain.
void render_json_line(const trace& t, const stage& s, const render_options& options, std::ostream& out);

/// The "selection" block: the views options asks for ({"head": 2}), empty when none.
nlohmann::ordered_json selection_to_json(const render_options& options);

/// One tensor as the document writes it: {"shape", "dims", "dtype", "strides", "contiguous", "data"}.
void render_tensor_json(const tensor& t, std::ostream& out);

/// The config block of the JSON document.
nlohmann::ordered_json config_to_json(const config& c);

}  // namespace attn
