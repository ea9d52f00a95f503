#pragma once
// An answer's file, for attn check and attn exercise check: .npy (np.save), .json (nested
// lists, tensor.tolist()) or .npz (np.savez: its only array, or the one named as
// --format npz dumps name the stage's tensor, "softmax.weights"). Its shape is read from
// the .npy header, or the member's .npy header inside the zip, before any of its data is
// read or inflated: an answer of a count no run makes is reported from that alone.
#include <optional>
#include <string>
#include <vector>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// The answer's shape from its header (.npy, .npz), nothing of its data read; std::nullopt
/// for a .json answer. `stage` and `tensor` ("softmax", "weights" or "" for the stage's
/// first) choose an .npz's member. Errors: the readers', and "<what>: which array? it
/// holds 3 (a, b, c); keep one (np.savez("a.npz", t)) or name it softmax.weights, as
/// --format npz dumps do".
std::optional<std::vector<std::size_t>> answer_file_shape(const std::string& path, const std::string& what,
                                                          const std::string& stage, const std::string& tensor);

/// The answer itself, within `budget`: only the chosen member of an .npz is inflated.
loaded_tensor read_answer_file(const std::string& path, const std::string& what, const std::string& stage,
                               const std::string& tensor, read_budget* budget);

}  // namespace attn
