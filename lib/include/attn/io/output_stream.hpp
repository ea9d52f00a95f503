#pragma once
// Bytes to a file descriptor, with every failure reported: an ostream over an fd whose
// writes, flushes and close never fail silently.
//
// Any write(2) error (ENOSPC "No space left on device", EIO, EPIPE, ...) throws
// write_error at once, out of whatever `<<` or write() hit it, so a run stops at the
// first lost byte instead of computing on and exiting 0 with the output cut.
#include <cstddef>
#include <functional>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/io/background_writer.hpp"
#include "attn/io/write_behind.hpp"

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
/// writes and EINTR, and throwing write_error on any other failure. Past its first
/// write_behind::start bytes, an output that is not a device is written on a thread of its own
/// (background_writer.hpp), and a regular file written behind (write_behind.hpp); past
/// 1 MiB, a pipe is widened.
class fd_streambuf : public std::streambuf {
public:
    fd_streambuf(int fd, std::string what, std::size_t buffer_bytes = 1 << 16);
    fd_streambuf(const fd_streambuf&) = delete;
    fd_streambuf& operator=(const fd_streambuf&) = delete;
    ~fd_streambuf() override;  // drops unwritten bytes: call flush_all() to keep them

    /// Writes out everything buffered and waits until it is written; throws write_error.
    void flush_all();
    /// Writes `size` bytes as sputn would, but lends them to the background writer when
    /// there is one (background_writer::lend): `owner` is held, and the bytes must not
    /// change, until give_back(owner). Otherwise writes them now. `copied` sees every
    /// piece, then or now.
    void lend(const char* bytes, std::size_t size, std::shared_ptr<const void> owner,
              background_writer::copied_piece copied = {});
    /// `size` bytes that `make` fills once everything before them is copied (at once
    /// without a background writer).
    void write_later(std::size_t size, std::function<void(char*)> make);
    /// Returns once nothing lent of `owner` is held.
    void give_back(const void* owner);
    /// Returns once everything handed over is copied (background_writer::settle).
    void settle();
    int fd() const { return fd_; }
    const std::string& what() const { return what_; }

protected:
    int_type overflow(int_type ch) override;
    std::streamsize xsputn(const char* bytes, std::streamsize size) override;
    int sync() override;

private:
    void write_pending();  // the buffer's bytes to write_all
    void write_all(const char* bytes, std::size_t size);
    void count_written(std::size_t size);  // and start what a large output or a pipe gets
    void write_now(const char* bytes, std::size_t size);
    int fd_;
    std::string what_;
    std::unique_ptr<char[]> buffer_;  // not zeroed: a small run touches only the pages it writes
    std::size_t buffer_size_;
    void start_writing_large();
    static constexpr std::uint64_t large_output = write_behind::start;
    /// Past this many bytes a pipe is widened to 1 MiB (F_SETPIPE_SZ) when it can be: the
    /// writer then waits for the reader a sixteenth as often as with Linux's 64 KiB.
    static constexpr std::uint64_t pipe_widening = std::uint64_t{1} << 20;
    std::uint64_t written_ = 0;  // bytes handed to write_all
    // once written_ passes large_output, unless fd_ is a device (checked then, so that a
    // small run pays no system call for them)
    std::unique_ptr<write_behind> behind_;
    std::unique_ptr<background_writer> background_;
};

/// out.write(bytes, size), lent (fd_streambuf::lend) when `out` writes through an
/// fd_streambuf: for large blocks that stay unchanged until give_back(out, owner).
/// `copied` sees every piece of them, now or once copied.
void write_lent(std::ostream& out, const char* bytes, std::size_t size, std::shared_ptr<const void> owner,
                background_writer::copied_piece copied = {});
/// `size` bytes that `make` fills once everything written before them is copied
/// (fd_streambuf::write_later), or now.
void write_later(std::ostream& out, std::size_t size, const std::function<void(char*)>& make);
/// Returns once `out` holds nothing lent of `owner` (at once for any other stream).
void give_back(std::ostream& out, const void* owner);
/// Returns once everything written to `out` so far is copied (at once for any other stream).
void settle(std::ostream& out);

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
