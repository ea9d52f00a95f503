#pragma once
// Hugging Face's .safetensors (the format of the safetensors README, which checkpoints
// on the Hub use):
//   <N: u64 little-endian> <N bytes of JSON header> <data buffer>
//   header: {"w_q": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}, ...,
//            "__metadata__": {"format": "pt"}}           (optional, strings to strings)
// data_offsets are [begin, end) in the data buffer, which the tensors must cover
// exactly: no overlaps, no holes, nothing after the last one (the spec's rule against
// polyglot files). The header is checked whole before any tensor is read: a size past
// the file or past the format's 100 MB, JSON that is not an object of entries, a
// missing or mistyped field, a negative or fractional number, a range out of the data
// or of another length than shape · itemsize, a shape whose size overflows, a name
// given twice. Each is one attn::error line "<what>: ..." (names from the file
// escaped with printable_text), raised before anything larger than the header is
// allocated. A file that is not a regular one (a FIFO) is read whole first, up to
// max_stream_bytes.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// One tensor a .safetensors header declares.
struct safetensors_entry {
    std::string name;                // as the file spells it ("h.0.attn.c_attn.weight")
    std::string dtype;               // as the file spells it: "F32", "BF16", "I64", ...
    std::vector<std::size_t> shape;  // [] for a scalar
    std::uint64_t begin, end;        // data_offsets, relative to the data buffer
};

/// A .safetensors header, read once (read_safetensors_header) and used for every read after.
struct safetensors_header {
    std::vector<safetensors_entry> entries;  // in the header's order
    std::map<std::string, std::string> metadata;
    std::uint64_t data_start = 0;  // 8 + N
    std::uint64_t data_bytes = 0;  // the file's bytes after the header
    std::uint64_t file_bytes = 0;  // the whole file's: a later read checks it has not changed
};

/// The format's own limit on the header (the safetensors crate's MAX_HEADER_SIZE).
constexpr std::uint64_t max_safetensors_header_bytes = 100'000'000;

/// The tensors a .safetensors file holds, from its header alone (nothing else is read),
/// in the header's order. Every check above applies, dtypes attn cannot read included.
/// The header's size is checked against `budget` before it is read.
std::vector<safetensors_entry> safetensors_index(const std::string& path, const std::string& what,
                                                 const read_budget* budget = nullptr);

/// The header of the file at `path`, checked whole as safetensors_index, its size against
/// `budget` before it is read. The reads below that take it parse no header again (a
/// 67 MB header is parsed once); they refuse a file whose size has changed since.
safetensors_header read_safetensors_header(const std::string& path, const std::string& what,
                                           const read_budget* budget = nullptr);

/// Every tensor `wanted` accepts (all when empty), F32, F16 and BF16 as float32 (exactly:
/// F16 subnormals, inf, NaN; BF16 = the upper 16 bits), F64 rounded with to_float32, in a
/// map by name, each one's bytes taken from `budget` before it is read. Only the wanted
/// tensors' bytes are read (each is sought: a checkpoint can be many GB and we want one
/// layer). A wanted tensor of another dtype is refused, "<what>: <name>: dtype I64; attn
/// reads F32, F16, BF16 and F64"; an unwanted one is not (a checkpoint's bool buffers).
std::map<std::string, loaded_tensor> read_safetensors(const std::string& path, const std::string& what,
                                                      const std::function<bool(const std::string&)>& wanted = {},
                                                      read_budget* budget = nullptr);

/// The same with the header read before.
std::map<std::string, loaded_tensor> read_safetensors(const std::string& path, const std::string& what,
                                                      const safetensors_header& header,
                                                      const std::function<bool(const std::string&)>& wanted,
                                                      read_budget* budget = nullptr);

/// Rows `rows` of the tensor `name` (its first axis; a row may come more than once), as
/// float32 [rows.size(), shape[1:]...]: only those rows' bytes are read, and the result's
/// bytes are taken from `budget` before any is (a model's token table, of which --tokens
/// wants a few rows). attn::error naming
/// the file and the tensor when it is missing, has no axes, a row is out of its range, or its
/// dtype is not one read_safetensors reads.
loaded_tensor read_safetensors_rows(const std::string& path, const std::string& what, const std::string& name,
                                    const std::vector<std::int64_t>& rows, read_budget* budget = nullptr);

/// The same with the header read before.
loaded_tensor read_safetensors_rows(const std::string& path, const std::string& what, const safetensors_header& header,
                                    const std::string& name, const std::vector<std::int64_t>& rows,
                                    read_budget* budget = nullptr);

/// The `__metadata__` strings of a .safetensors header ({"format": "pt"}); empty when it has none.
std::map<std::string, std::string> safetensors_metadata(const std::string& path, const std::string& what);

/// safetensors_index and read_safetensors of a file's bytes already in memory (a FIFO
/// read whole, the fuzzer, the tests).
std::vector<safetensors_entry> parse_safetensors_index(const void* bytes, std::size_t size, const std::string& what,
                                                       const read_budget* budget = nullptr);
std::map<std::string, loaded_tensor> parse_safetensors(const void* bytes, std::size_t size, const std::string& what,
                                                       const std::function<bool(const std::string&)>& wanted = {},
                                                       read_budget* budget = nullptr);

}  // namespace attn
