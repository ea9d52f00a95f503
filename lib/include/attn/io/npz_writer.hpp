#pragma once
// Writing an .npz (a zip of stored .npy members) to a stream, one member at a time,
// without seeking: to a file, a pipe, a device or standard output alike, with no
// temporary file. A streamed run adds each stage's tensors as the stage is computed.
//
// A whole member (add) has its CRC-32 computed from its bytes before they are written,
// so its local header is complete, as np.savez writes them. A member that comes in
// pieces (begin_array, write, end_array: a stage handed on a block of rows at a time)
// has a local header that says "CRC and sizes follow the data" (general purpose flag
// bit 3) and a data descriptor after its bytes, as Python's zipfile writes to a pipe.
// The central directory follows the last member. zip64 records are written where a
// size or offset needs them (a member, an archive or a directory of 4 GiB or more, or
// 65535 members or more).
#include <cstdint>
#include <memory>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "attn/io/npz.hpp"

namespace attn {

class npz_writer {
public:
    /// Where lent arrays' elements start (begin_array's data_alignment): a page.
    static constexpr std::size_t page_alignment = 4096;

    /// Writes to `out`; errors name `what` ("--out t.npz").
    npz_writer(std::ostream& out, std::string what);

    /// Throws attn::error, before writing anything, if `m` cannot be a member: no
    /// name, a name already added, a tensor without data.
    void check(const npz_member& m) const;
    /// Appends one member (check()ed first).
    void add(const npz_member& m);
    /// Appends one array in pieces: its header now, then write() its elements in C order,
    /// `count` at a time, then end_array() once all of `shape`'s elements are written.
    /// With `data_alignment` (a power of two up to 32768), the local header's extra field is padded so
    /// that the elements start at a multiple of it from the archive's start: a lent array
    /// in a file can then be written from its own pages (O_DIRECT, background_writer.hpp).
    void begin_array(const std::string& name, const std::vector<std::size_t>& shape, bool boolean,
                     std::size_t data_alignment = 1);
    void write(const float* values, std::size_t count);
    /// As write, for a float32 array's elements that stay unchanged until give_back(owner):
    /// lent to the stream (write_lent, output_stream.hpp) instead of copied. Their CRC-32
    /// is computed by the stream's writer as it copies them, and the data descriptor made
    /// when it has it.
    void write_lent(const float* values, std::size_t count, std::shared_ptr<const void> owner);
    /// Returns once the stream holds nothing lent of `owner`.
    void give_back(const void* owner);
    void end_array();
    /// Writes the central directory: the archive is complete. Add nothing after.
    void finish();

private:
    struct entry {
        std::string name;        // "softmax.weights.npy"
        std::uint32_t crc = 0;
        std::uint64_t size = 0;  // stored: the same compressed and not
        std::uint64_t offset = 0;
        bool descriptor = false;  // CRC and sizes after the data (flag bit 3)
        // with lent elements: the CRC-32 as the output's writer computes it while copying
        // them (final once they are copied: settle)
        std::shared_ptr<std::uint32_t> crc_later;
    };
    void put(const std::string& bytes);
    void put_local_header(const entry& e, std::size_t padding = 0, std::size_t alignment = 1);
    void claim(const std::string& name);
    void check_write(std::size_t count) const;

    std::ostream& out_;
    std::string what_;
    std::vector<entry> entries_;
    std::set<std::string> names_;
    std::uint64_t written_ = 0;
    // the array begin_array opened: its entry, running CRC-32, type and elements still due
    entry open_;
    bool open_boolean_ = false;
    std::uint64_t open_remaining_ = 0;
    bool is_open_ = false;
};

}  // namespace attn
