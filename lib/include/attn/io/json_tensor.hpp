#pragma once
// The JSON readers on text in memory (what read_tensor_file and read_json_tensors
// read from a .json file): nested arrays as `json.dump(tensor.tolist())` writes them.
//   numbers -> float32; "nan", "inf", "-inf" (any case; also "+inf", "Infinity",
//   "NaN") and Python's bare NaN, Infinity, -Infinity -> non-finite; true/false -> a
//   boolean tensor (all leaves must then be booleans); a bare number -> a 0-d tensor.
// Most files take a fast reader; anything it does not know (an escape, null, a syntax
// error) goes to nlohmann's parser, whose messages are precise. Syntax errors give the
// line and column, "<what>: line 3, column 14: ...", other errors the index path:
// "<what>: ragged nested arrays: element [1] has 3 entries, element [0] has 4".
// With a `budget`, the tensors' float32 bytes are taken from it as the parse goes.
#include <map>
#include <string>

#include "attn/io/tensor_file.hpp"

namespace attn {

loaded_tensor parse_json_tensor(const std::string& text, const std::string& what, read_budget* budget = nullptr);
std::map<std::string, loaded_tensor> parse_json_tensors(const std::string& text, const std::string& what,
                                                        read_budget* budget = nullptr);

}  // namespace attn
