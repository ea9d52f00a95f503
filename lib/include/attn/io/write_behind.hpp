#pragma once
// Writing a large file without filling memory with it: the kernel is asked to write each
// window of the file to disk as soon as it is written, and the window two back, on disk
// by then, is dropped from the page cache.
//
// Without it a dump of several GiB sits in the page cache as dirty pages until the kernel
// gets to them: it evicts other files' cache, and every page of it is memory the kernel
// must find first (on a virtual machine that hands freed memory back to its host, a fresh
// page costs a fault in the host: a 1.1 GiB write then took 2-3 s instead of 0.3 s).
// With it the file's cache stays at about three windows, its pages reused window after
// window, and the writer waits for the disk only when the disk is slower than it.
//
// fd_streambuf makes one once an output passes `start` bytes (small outputs are written
// as before), from the file's offset then; it does nothing but count for anything that
// is not a regular file (a pipe).
#include <cstdint>

namespace attn {

class write_behind {
public:
    static constexpr std::int64_t window = std::int64_t{32} << 20;
    static constexpr std::int64_t start = std::int64_t{64} << 20;

    /// For `fd`, at its current offset (a file opened for appending, `>>`, included).
    explicit write_behind(int fd);
    /// After `bytes` more were written at the end.
    void wrote(std::int64_t bytes);

private:
    int fd_ = -1;              // -1: not a regular file, nothing to do
    std::int64_t origin_ = 0;  // the file offset of the first byte written through this
    std::int64_t written_ = 0;
    std::int64_t flushed_ = 0;  // bytes from origin_ handed to the kernel to write
};

}  // namespace attn
