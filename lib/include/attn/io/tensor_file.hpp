#pragma once
// Tensors read from the files users give (--input, --q, --params, --mask-file, ...):
// JSON nested arrays as `json.dump(tensor.tolist())` writes them (json_tensor.hpp),
// or NumPy .npy (npy.hpp). Every value becomes float32, as torch.tensor(list) makes
// it (1e39 -> inf); booleans become 0/1 and mark the tensor `boolean`. Every error
// is one attn::error line that starts with the caller's `what` ("--input x.json").
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "attn/compute/error.hpp"
#include "attn/text/printable_text.hpp"  // printable_text, quoted_field: how errors quote a name

namespace attn {

/// One tensor from a file.
struct loaded_tensor {
    std::vector<std::size_t> shape;             // [] for a single number (0-d)
    xt::xarray<float> values;                   // row-major, of `shape`
    bool boolean = false;                       // the file held booleans (stored as 0/1)
    std::size_t non_finite = 0;                 // how many values are NaN or ±inf
    std::vector<std::size_t> first_non_finite;  // the index of the first one, if any
};

/// What read_budget throws: a file or tensor larger than the bytes --max-memory leaves.
class over_budget : public error {
public:
    using error::error;
};

/// The bytes the tensors of a run may fill (--max-memory), shared by all its files.
/// Each reader takes a tensor's bytes as its header declares them (npy, npz) or as
/// the file's size bounds them (JSON) before it allocates anything.
class read_budget {
public:
    static constexpr std::uint64_t unlimited = std::numeric_limits<std::uint64_t>::max();

    explicit read_budget(std::uint64_t limit = unlimited) : limit_(limit), left_(limit) {}

    /// Takes `bytes` for `what`, which holds `holding` ("shape [2,3] of float32"), or
    /// throws over_budget "<what>: <holding> needs 4.0 GiB, more than the 100.0 MiB --max-memory
    /// allows (--max-memory none: no limit)".
    void take(std::uint64_t bytes, const std::string& what, const std::string& holding);
    /// Throws as take() would, without taking: for bytes held only while reading.
    void check(std::uint64_t bytes, const std::string& what, const std::string& holding) const;
    std::uint64_t left() const { return left_; }

private:
    std::uint64_t limit_;
    std::uint64_t left_;
};

/// What a safetensors header takes while it is parsed, at most, per byte of its text (measured:
/// a 5.6 MiB header of 100,000 entries peaked at 93 MB, 16.5 times): checked against the
/// budget before it is parsed.
constexpr std::uint64_t parsed_json_bytes_per_byte = 16;

/// The most a file that is not a regular one (a FIFO, /dev/zero) may give.
constexpr std::uint64_t max_stream_bytes = std::uint64_t(256) << 20;

/// One tensor, read by the extension's reader: .npy or .json. Errors: "<what>: cannot
/// open: No such file or directory", "<what>: unknown file type '.txt'; expected .json
/// (nested arrays) or .npy (NumPy)", and the readers' own.
loaded_tensor read_tensor_file(const std::string& path, const std::string& what, read_budget* budget = nullptr);

/// A JSON object of named tensors, {"w_q": [[...]], ...}; errors name the key.
std::map<std::string, loaded_tensor> read_json_tensors(const std::string& path, const std::string& what,
                                                       read_budget* budget = nullptr);

/// A double as float32 as torch.tensor(list) makes it: rounded to nearest, ±inf from
/// the halfway point above FLT_MAX on (1e39 -> inf).
float to_float32(double d);

/// An IEEE binary16 (float16, F16) as float32, exactly: subnormals, ±inf and NaN included.
float half_to_float(std::uint16_t bits);

/// A bfloat16 (BF16) as float32, exactly: its bits are float32's upper 16.
float bfloat16_to_float(std::uint16_t bits);

/// Fills t.non_finite and t.first_non_finite from t.values.
void count_non_finite(loaded_tensor& t);

/// `path` open for reading, or "<what>: cannot open: <reason>" (a directory: "Is a directory").
using input_file = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;
input_file open_input_file(const std::string& path, const std::string& what);

/// The whole file as text. A regular file's size is checked against `budget` first;
/// any other file is read up to max_stream_bytes ("<what>: not a regular file, and
/// it gives more than 256.0 MiB").
std::string read_text_file(const std::string& path, const std::string& what, const read_budget* budget = nullptr);
/// The same of a file already open (a FIFO whose writer has left cannot be opened again).
std::string read_open_file(std::FILE* file, const std::string& what, const read_budget* budget = nullptr);

/// The same, at most `limit` bytes: "<what>: larger than <about>" for a larger regular file,
/// "<what>: gives more than <about>" for a stream (`about`: "1 MiB; a config.json is a few kB");
/// and within `budget` when it leaves less (over_budget, as read_open_file).
std::string read_bounded_text(const std::string& path, const std::string& what, std::uint64_t limit,
                              const std::string& about, const read_budget* budget = nullptr);

/// The index of flat element `flat` in a C-order tensor of `shape`.
std::vector<std::size_t> unravel_index(std::size_t flat, const std::vector<std::size_t>& shape);

/// ".json" of "dir/x.JSON", lower-cased; "" when the name has none ("x", ".hidden").
std::string file_extension(const std::string& path);

}  // namespace attn
