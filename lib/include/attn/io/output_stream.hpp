#pragma once
// Bytes to a file descriptor, with every failure reported: the one stream buffer every
// output of attn goes through (output_file's files, standard output).
//
// Any write(2) error (ENOSPC "No space left on device", EIO, EPIPE, ...) throws
// write_error at once, out of whatever `<<` or write() hit it, so a run stops at the
// first lost byte instead of computing on and exiting 0 with the output cut.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include "attn/compute/error.hpp"

namespace attn {

/// A write to an output that failed: "<what>: <strerror(code)>", e.g.
/// "--out t.npz: No space left on device" or "standard output: Broken pipe".
class write_error : public error {
public:
    write_error(const std::string& what, int code, int fd = -1);
    int code;  // the errno of the failed call
    int fd;    // the descriptor written to (STDOUT_FILENO: standard output), or -1
};

/// A std::streambuf that writes to `fd` (not owned) through a buffer, retrying short
/// writes and EINTR, and throwing write_error on any other failure. Blocks at least a
/// buffer long are written straight from the caller's memory. Past 1 MiB written, a
/// pipe is widened to 1 MiB when the kernel allows it.
class fd_streambuf : public std::streambuf {
public:
    fd_streambuf(int fd, std::string what, std::size_t buffer_bytes = 1 << 16);
    fd_streambuf(const fd_streambuf&) = delete;
    fd_streambuf& operator=(const fd_streambuf&) = delete;
    ~fd_streambuf() override;  // drops unwritten bytes: call flush_all() to keep them

    /// Writes out everything buffered; throws write_error.
    void flush_all();
    int fd() const { return fd_; }
    const std::string& what() const { return what_; }

protected:
    int_type overflow(int_type ch) override;
    std::streamsize xsputn(const char* bytes, std::streamsize size) override;
    int sync() override;

private:
    void write_pending();  // the buffer's bytes to write_all
    void write_all(const char* bytes, std::size_t size);
    int fd_;
    std::string what_;
    std::unique_ptr<char[]> buffer_;  // not zeroed: a small run touches only the pages it writes
    std::size_t buffer_size_;
    /// Past this many bytes a pipe is widened to 1 MiB (F_SETPIPE_SZ), so that the writer
    /// waits for its reader less often than with Linux's 64 KiB.
    static constexpr std::uint64_t pipe_widening = std::uint64_t{1} << 20;
    std::uint64_t written_ = 0;  // bytes handed to write_all
};

/// An ostream over an fd_streambuf, with exceptions(badbit) so that the streambuf's
/// write_error reaches the caller instead of only setting badbit.
class output_stream : public std::ostream {
public:
    output_stream(int fd, std::string what);
    /// Writes out everything buffered; throws write_error.
    void flush_all() { buffer_.flush_all(); }
    int fd() const { return buffer_.fd(); }

private:
    fd_streambuf buffer_;
};

}  // namespace attn
