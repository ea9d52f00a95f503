#pragma once
// Writing an .npz (a zip of stored .npy members) to a stream one member at a time,
// without seeking: to a file, a pipe or standard output alike. A whole member (add)
// has its CRC-32 computed before its bytes are written, so its local header is
// complete, as np.savez writes it. A member in pieces (begin_array, write, end_array:
// a stage handed on a block of rows at a time) has a local header that says "CRC and
// sizes follow the data" (flag bit 3) and a data descriptor after its bytes, as
// Python's zipfile writes to a pipe. zip64 records are written where a size, an
// offset or the member count needs them.
#include <cstdint>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "attn/io/npz.hpp"

namespace attn {

class npz_writer {
public:
    /// Writes to `out`; errors name `what` ("--out t.npz").
    npz_writer(std::ostream& out, std::string what);

    /// Throws attn::error, before writing anything, if `m` cannot be a member: no
    /// name, a name already added, a tensor without data.
    void check(const npz_member& m) const;
    /// Appends one member (check()ed first).
    void add(const npz_member& m);
    /// Appends one array in pieces: its header now, then write() its elements in C order,
    /// `count` at a time, then end_array() once all of `shape`'s elements are written.
    void begin_array(const std::string& name, const std::vector<std::size_t>& shape, bool boolean);
    void write(const float* values, std::size_t count);
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
    };
    void put(const std::string& bytes);
    static void put_shared_fields(std::string& h, const entry& e, bool zip64, std::uint64_t size32);
    void put_local_header(const entry& e);
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
