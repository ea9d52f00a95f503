#pragma once
// NumPy's .npy format (numpy.lib.format): a magic string, a version, a header
// that is a Python dict literal, then the raw array bytes in C order:
//   \x93NUMPY 1 0 <len:u16> {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n <data>
//
// Reads versions 1.0, 2.0 and 3.0 of <f2 <f4 <f8, |b1, <i1..<i8, <u1..<u8 (|i1 |u1
// too) as float32, as np.asarray(a, np.float32) does. Writes version 1.0 of <f4, |b1
// and single strings <U, byte for byte as NumPy 1.24's np.save. A reader works on a
// byte_source, so a file and an .npz member share it, and a corrupt header never
// causes an allocation larger than the bytes really there. Errors start "<what>: ".
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// Copies up to `size` next bytes into `buffer`; returns how many (0 at the end).
using byte_source = std::function<std::size_t(char* buffer, std::size_t size)>;

/// Takes the next `size` bytes; throws attn::error if they cannot be written.
using byte_sink = std::function<void(const char* bytes, std::size_t size)>;

/// What a .npy header says.
struct npy_header {
    std::string descr;               // the dtype as NumPy writes it: "<f4", "|b1", "<U12"
    std::vector<std::size_t> shape;  // [] for a 0-d array
    std::size_t elements = 1;        // the product of shape
    std::uint64_t data_bytes = 0;    // the bytes that follow the header (all of them)
    std::uint64_t array_bytes = 0;   // the bytes the shape and dtype need (<= data_bytes)
    bool text = false;               // descr is a little-endian unicode string "<U…"
};

/// Reads and checks the header of the `size` bytes of `source`: magic, version, dict
/// syntax, C order, a dtype attn reads (or "<U"), and that the data is all there.
npy_header read_npy_header(const byte_source& source, std::uint64_t size, const std::string& what);

/// The data after a header, as float32; its bytes are taken from `budget` before any allocation.
loaded_tensor read_npy_data(const npy_header& header, const byte_source& source, const std::string& what,
                            read_budget* budget = nullptr);

/// The one string after a "<U" header, as UTF-8. Its bytes (4 a character, a bound of the
/// UTF-8) are taken from `budget` before any is read.
std::string read_npy_text(const npy_header& header, const byte_source& source, const std::string& what,
                          read_budget* budget = nullptr);

/// A whole .npy: header, then data (a "<U" string is an unsupported dtype here).
loaded_tensor read_npy(const byte_source& source, std::uint64_t size, const std::string& what,
                       read_budget* budget = nullptr);
loaded_tensor parse_npy(const void* bytes, std::size_t size, const std::string& what, read_budget* budget = nullptr);
/// A file that is not a regular one (a FIFO) is read whole first, up to max_stream_bytes.
loaded_tensor read_npy_file(const std::string& path, const std::string& what, read_budget* budget = nullptr);

/// The header of the .npy file `path` alone, its data not read (an answer's shape is
/// checked before its data: a header may declare gigabytes); nullopt for a file that is
/// not a regular one (a FIFO: its bytes cannot be read twice). Errors as read_npy_header's.
std::optional<npy_header> read_npy_file_header(const std::string& path, const std::string& what);

/// The .npy bytes of a float32 tensor ("<f4"), or of booleans ("|b1": 1 where the value
/// is not 0); `data` holds shape's product of values in C order. The header is NumPy
/// 1.24's, padded so that the data starts at a multiple of 64 bytes.
void write_npy(const float* data, const std::vector<std::size_t>& shape, bool boolean, const byte_sink& sink);
std::uint64_t npy_size(const std::vector<std::size_t>& shape, bool boolean);  // the bytes write_npy writes

/// write_npy in pieces: the header alone, then the elements, `count` at a time, in C order.
std::string npy_header_bytes(const std::vector<std::size_t>& shape, bool boolean);
void write_npy_elements(const float* data, std::size_t count, bool boolean, const byte_sink& sink);

/// A 0-d unicode array ("<U…", UTF-32LE) holding `utf8`, as np.save(f, np.array(s)).
void write_npy_text(const std::string& utf8, const byte_sink& sink);

}  // namespace attn
