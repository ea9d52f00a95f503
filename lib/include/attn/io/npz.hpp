#pragma once
// NumPy's .npz archives: a zip of .npy members (np.savez stores them,
// np.savez_compressed deflates them), read with minizip, written by npz_writer.
//
// Python reads what write_npz writes with
//   z = np.load("trace.npz"); z["softmax.weights"]; json.loads(str(z["config"]))
// (a text member is a 0-d unicode array, so np.load needs no allow_pickle).
#include <cstddef>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// Every array of an .npz (stored or deflated), keyed by member name without ".npy".
/// Members of a string dtype ("<U…") go into `texts` when given, else are skipped,
/// as are members not named *.npy. With `wanted`, only the members it accepts
/// ("input.x") are inflated. A member's bytes, as its .npy header declares them, come
/// out of `budget` before it is inflated. Archives of 4 GiB or more are refused:
/// Debian's minizip 1.1 misreads zip64 sizes on 64-bit machines. Errors:
/// "<what>: truncated (not a complete zip archive)", "<what>: not an .npz file (not a
/// zip archive)", and a member's named after it: "<what>: w_q: unsupported dtype ...".
std::map<std::string, loaded_tensor> read_npz(const std::string& path, const std::string& what,
                                              std::map<std::string, std::string>* texts = nullptr,
                                              const std::function<bool(const std::string&)>& wanted = {},
                                              read_budget* budget = nullptr);

/// The names of the .npy members of an .npz (without ".npy"), from its zip directory
/// alone: nothing is inflated.
std::vector<std::string> npz_array_names(const std::string& path, const std::string& what);

/// The names and shapes of the .npy members of an .npz, in the zip directory's order, from
/// their .npy headers: only the headers are inflated (a member's shape is checked before its
/// data, which may be a zip bomb). Errors as read_npz's.
std::vector<std::pair<std::string, std::vector<std::size_t>>> npz_array_shapes(const std::string& path,
                                                                              const std::string& what);

/// One array (or text) of an .npz to write.
struct npz_member {
    std::string name;                 // without ".npy", e.g. "softmax.weights"
    std::vector<std::size_t> shape;   // [] for a 0-d array
    const float* data = nullptr;      // the product of shape values, C order; not copied
    bool boolean = false;             // write "|b1" (1 where the value is not 0), else "<f4"
    bool is_text = false;             // write `text` as a 0-d "<U…" array instead of data
    std::string text;                 // UTF-8, when is_text

    static npz_member tensor(std::string name, std::vector<std::size_t> shape, const float* data, bool boolean = false);
    static npz_member text_member(std::string name, std::string utf8);
};

/// Writes `members` as an .npz to `out` with npz_writer, each stored as np.savez does,
/// dated 1980-01-01 so that equal inputs give equal files. Every member is checked (a
/// name, once; data) before a byte is written. Errors name `what` ("--out t.npz").
void write_npz(std::ostream& out, const std::string& what, const std::vector<npz_member>& members);

/// The same at `path`, whole or not at all (output_file.hpp).
void write_npz(const std::string& path, const std::string& what, const std::vector<npz_member>& members);

}  // namespace attn
