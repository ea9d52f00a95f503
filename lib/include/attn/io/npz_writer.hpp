#pragma once
// Writing an .npz (a zip of stored .npy members) to a stream, one member at a time,
// without seeking: to a file, a pipe, a device or standard output alike, with no
// temporary file. A streamed run adds each stage's tensors as the stage is computed.
//
// Each member's CRC-32 is computed from its bytes before they are written, so every
// local header is complete (no data descriptors), as np.savez writes them; the
// central directory follows the last member. zip64 records are written where a size
// or offset needs them (a member, an archive or a directory of 4 GiB or more, or
// 65535 members or more).
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
    /// Writes the central directory: the archive is complete. Add nothing after.
    void finish();

private:
    struct entry {
        std::string name;        // "softmax.weights.npy"
        std::uint32_t crc = 0;
        std::uint64_t size = 0;  // stored: the same compressed and not
        std::uint64_t offset = 0;
    };
    void put(const std::string& bytes);

    std::ostream& out_;
    std::string what_;
    std::vector<entry> entries_;
    std::set<std::string> names_;
    std::uint64_t written_ = 0;
};

}  // namespace attn
