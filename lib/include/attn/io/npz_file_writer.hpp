#pragma once
// An .npz written by name with minizip, an array at a time and each array in pieces:
// what a stage handed on in rows (stage_sink.hpp) needs, since each member's size is
// known up front but its bytes come a block of rows at a time. (npz_writer.hpp writes
// whole members to a stream; the program copies this file to its output.)
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace attn {

/// Writes an .npz at `path` (opened directly: atomicity is the caller's) an array at a
/// time, each in pieces: begin_array with the shape, write the elements in C order,
/// end_array. Arrays are stored uncompressed as np.savez stores them, zip64 when one
/// reaches 4 GiB, dated 1980-01-01. Errors name `what`.
class npz_file_writer {
public:
    npz_file_writer(const std::string& path, const std::string& what);
    ~npz_file_writer();  // closes an archive close() was not called for (after an error)
    npz_file_writer(const npz_file_writer&) = delete;
    npz_file_writer& operator=(const npz_file_writer&) = delete;

    void begin_array(const std::string& name, const std::vector<std::size_t>& shape, bool boolean);
    void write(const float* values, std::size_t count);  // `count` more elements of the open array
    void end_array();                                    // all of shape's elements written
    /// A 0-d unicode array (write_npy_text) called `name`.
    void text(const std::string& name, const std::string& utf8);
    void close();

private:
    void open_member(const std::string& name, std::uint64_t bytes);
    void close_member();
    void put(const char* bytes, std::size_t size);

    std::string what_;
    void* zip_ = nullptr;  // minizip's zipFile
    std::set<std::string> names_;
    bool boolean_ = false;
    std::uint64_t remaining_ = 0;  // elements the open array still needs
};

}  // namespace attn
