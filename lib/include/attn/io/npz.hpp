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
#include <vector>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// Reads every array of an .npz, keyed by member name without ".npy" ("w_q").
/// Members stored with np.savez and np.savez_compressed both work. Members of a
/// string dtype ("<U…") are not tensors: they go into `texts` when it is given
/// (one string each), else they are skipped; so are members whose names do not end
/// in .npy (np.load gives those as raw bytes).
/// Archives of 4 GiB or more are refused: Debian's minizip 1.1 misreads their zip64
/// sizes on 64-bit machines (write_npz writes them correctly, and NumPy reads them).
/// When `wanted` is given, only the members it accepts (by name, "input.x") are read;
/// the others are skipped unread (a replay needs 4 stages of a dump, not its 15).
/// Errors: "<what>: cannot open: No such file or directory",
/// "<what>: truncated (not a complete zip archive)", "<what>: not an .npz file (not a
/// zip archive)", and a member's errors named after it: "<what>: w_q: unsupported dtype ...".
/// Nothing is inflated before its member is known to be wanted, and a member's bytes
/// (as its .npy header declares them) come out of `budget` before it is inflated; a
/// member whose .npy header needs other than the bytes the zip directory says it holds
/// is an error.
std::map<std::string, loaded_tensor> read_npz(const std::string& path, const std::string& what,
                                              std::map<std::string, std::string>* texts = nullptr,
                                              const std::function<bool(const std::string&)>& wanted = {},
                                              read_budget* budget = nullptr);

/// The names of the .npy members of an .npz (without ".npy"), from its zip directory
/// alone: nothing is inflated.
std::vector<std::string> npz_array_names(const std::string& path, const std::string& what);

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

/// Writes `members` as an .npz to `out` (npz_writer.hpp: no seeking, so a pipe or a
/// device works): members in the given order, stored uncompressed as np.savez does,
/// streamed from the caller's buffers; zip64 for a member of 4 GiB or more. Every
/// member gets the fixed date 1980-01-01, so equal inputs give equal files. Every
/// member is checked (a name, once; data) before a byte is written. Errors name
/// `what` ("--out t.npz").
void write_npz(std::ostream& out, const std::string& what, const std::vector<npz_member>& members);

/// The same at `path`, whole or not at all (output_file.hpp).
void write_npz(const std::string& path, const std::string& what, const std::vector<npz_member>& members);

}  // namespace attn
