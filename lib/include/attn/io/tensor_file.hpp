#pragma once
// Tensors read from the files users give (--input, --q, --params, --mask-file, ...):
// JSON nested arrays as `json.dump(tensor.tolist())` writes them (json_tensor.hpp
// parses the text), or NumPy .npy (npy.hpp).
//
// Every value becomes float32, as torch.tensor(list) and np.asarray(a, np.float32)
// make it: a double beyond float range (1e39) becomes ±inf, integers round to the
// nearest float. Booleans become 0/1 and mark the tensor `boolean`.
// Every error is one attn::error line that starts with the caller's `what`
// ("--input x.json") and says what is wrong and where.
#include <cstddef>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attn {

/// One tensor from a file.
struct loaded_tensor {
    std::vector<std::size_t> shape;              // [] for a single number (0-d)
    xt::xarray<float> values;                    // row-major, of `shape`
    bool boolean = false;                        // the file held booleans (stored as 0/1)
    std::size_t non_finite = 0;                  // how many values are NaN or ±inf
    std::vector<std::size_t> first_non_finite;   // the index of the first one, if any
};

/// Reads one tensor; the extension picks the reader: .npy (NumPy) or .json
/// (nested arrays). Errors: "<what>: cannot open: No such file or directory",
/// "<what>: unknown file type '.txt'; expected .json (nested arrays) or .npy (NumPy)",
/// and the readers' errors (json_tensor.hpp, npy.hpp).
loaded_tensor read_tensor_file(const std::string& path, const std::string& what);

/// Reads a JSON object of named tensors, {"w_q": [[...]], "b_q": [...], ...}
/// (keys in file order are not kept: the map sorts them). Errors name the key:
/// "<what>: w_q: ragged nested arrays: ...".
std::map<std::string, loaded_tensor> read_json_tensors(const std::string& path, const std::string& what);

/// A double as float32, as torch.tensor(list) and NumPy's astype make it on IEEE
/// hardware: rounded to nearest; from the halfway point above FLT_MAX on, ±inf (1e39 -> inf).
float to_float32(double d);

/// Fills t.non_finite and t.first_non_finite from t.values (the readers call it).
void count_non_finite(loaded_tensor& t);

/// Opens `path` for reading ("rb"), or throws "<what>: cannot open: <reason>"
/// (a directory too: "Is a directory").
using input_file = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
input_file open_input_file(const std::string& path, const std::string& what);

/// The whole file as text, or "<what>: cannot open: ..." / "<what>: cannot read: ...".
std::string read_text_file(const std::string& path, const std::string& what);

/// `text` with control characters written as \u000a etc., so a name or a value
/// quoted from a file keeps a message on one line.
std::string printable_text(const std::string& text);

/// "[2,3]": a shape or an index as the messages write it ("[]" for none).
std::string tensor_index_text(const std::vector<std::size_t>& shape_or_index);

/// "[0][1][3]": an element's index as the messages write it, like Python's t[0][1][3].
std::string element_index_text(const std::vector<std::size_t>& index);

/// The index of flat element `flat` in a C-order tensor of `shape`.
std::vector<std::size_t> unravel_index(std::size_t flat, const std::vector<std::size_t>& shape);

/// ".json" of "dir/x.JSON", lower-cased; "" when the name has none ("x", ".hidden").
std::string file_extension(const std::string& path);

}  // namespace attn
