#pragma once
// The JSON reader behind --input x.json, --params p.json and the other .json flags:
// nested arrays as `json.dump(tensor.tolist())` writes them, Python's bare NaN and
// Infinity included. tensor_file.hpp reads the files; this parses their text.
//
// Most files take a fast reader; anything it does not know (an escape, null, a
// syntax error) goes to nlohmann's parser, whose messages are precise.
#include <map>
#include <string>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// The JSON readers on text already in memory (what read_tensor_file and
/// read_json_tensors read from a .json file).
///   numbers -> float32; "nan", "inf", "-inf" (any case; also "+inf", "Infinity",
///   "-Infinity", "NaN") and Python's bare NaN, Infinity, -Infinity -> non-finite;
///   true/false -> a boolean tensor (all leaves must then be booleans);
///   a bare number -> a 0-d tensor.
/// Syntax errors give the line and column: "<what>: line 3, column 14: ...".
/// Ragged, empty, null, object or other string elements give their index path:
/// "<what>: ragged nested arrays: element [1] has 3 entries, element [0] has 4".
/// With a `budget`, each tensor's float32 bytes are taken from it, and a parse stops with
/// "<what>: ... more than --max-memory allows" as soon as its values would not fit.
loaded_tensor parse_json_tensor(const std::string& text, const std::string& what, read_budget* budget = nullptr);
std::map<std::string, loaded_tensor> parse_json_tensors(const std::string& text, const std::string& what,
                                                        read_budget* budget = nullptr);

}  // namespace attn
