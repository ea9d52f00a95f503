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

/// The whole trace as one JSON document (stages filtered by options.stages).
void render_json(const trace& t, const render_options& options, std::ostream& out);

/// One line of JSON lines: the stage object with its "name" added, then '\n'.
/// `t` is the trace so far (for the warnings about `s`); `explain` adds "explain".
void render_json_line(const trace& t, const stage& s, std::ostream& out, bool explain = false);

/// The config block of the JSON document.
nlohmann::ordered_json config_to_json(const config& c);

}  // namespace attn
