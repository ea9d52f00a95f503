#pragma once
// Every output of attn goes through an fd_streambuf, which reports every write(2)
// failure (ENOSPC, EIO, EPIPE, ...) as a write_error at once, so a run stops at the
// first lost byte instead of exiting 0 with the output cut. An --out file is an
// output_file, written without ever damaging what is there. Made before any
// computation, it resolves the path, refuses what cannot be written, and opens:
//
//   what the path is               how it is written
//   a new name, or a regular file  into a temporary `.attn-XXXXXX` in the same folder,
//                                  then renamed over the target: the target is whole
//                                  or untouched. An existing file keeps its mode bits
//                                  (and, for root, its owner).
//   a regular file with other      the same temporary first, then copied into the file
//   hard links                     in place, as cp does, so every name still shows it
//   a symbolic link                followed to its final target, written as above;
//                                  a dangling link is an error
//   a device, FIFO                 written straight to (a socket: an error)
//   /dev/stdout, /dev/fd/N, ...    that descriptor written to, not opened again
//   a directory, a name ending /   an error ("is a directory")
//   a read-only file (no w bit)    an error, "Permission denied", even for root
//
// A file written into a folder_without_links (a hand-out folder, which its student may
// write into) is always a new file made there and renamed into place, both relative to the
// folder's descriptor: a link, FIFO, device or hard-linked file planted at its name is
// replaced, never followed, opened or written into. A directory is an error, and so is a
// read-only file, as for every --out: attn never replaces a file its owner made read-only.
//
// The temporary is listed in temporary_files.hpp, so that a signal removes it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <ostream>
#include <streambuf>
#include <string>

#include <sys/stat.h>
#include <sys/types.h>

#include "attn/compute/error.hpp"
#include "attn/io/folder_without_links.hpp"

namespace attn {

/// A write that failed: "<what>: <strerror(code)>", e.g. "--out t.npz: No space left
/// on device" or "standard output: Broken pipe".
class write_error : public error {
public:
    write_error(const std::string& what, int code, int fd = -1);
    int code;  // the errno of the failed call
    int fd;    // the descriptor written to (STDOUT_FILENO: standard output), or -1
};

/// A std::streambuf that writes to `fd` (not owned) through a buffer, retrying short
/// writes and EINTR and throwing write_error on any other failure. Blocks at least a
/// buffer long go straight from the caller's memory. Past 1 MiB written, a pipe is
/// widened to 1 MiB (F_SETPIPE_SZ) when the kernel allows, so the writer waits less.
class fd_streambuf : public std::streambuf {
public:
    fd_streambuf(int fd, std::string what, std::size_t buffer_bytes = 1 << 16);
    fd_streambuf(const fd_streambuf&) = delete;
    fd_streambuf& operator=(const fd_streambuf&) = delete;

    /// Writes out everything buffered (the destructor drops it); throws write_error.
    void flush_all();

protected:
    int_type overflow(int_type ch) override;
    std::streamsize xsputn(const char* bytes, std::streamsize size) override;
    int sync() override;

private:
    void write_all(const char* bytes, std::size_t size);
    int fd_;
    std::string what_;
    std::unique_ptr<char[]> buffer_;  // not zeroed: a small run touches only the pages it writes
    std::size_t buffer_size_;
    std::uint64_t written_ = 0;       // bytes handed to write_all
};

/// An ostream over an fd_streambuf, with exceptions(badbit) so that write_error
/// reaches the caller instead of only setting badbit.
class output_stream : public std::ostream {
public:
    output_stream(int fd, std::string what);
    void flush_all() { buffer_.flush_all(); }

private:
    fd_streambuf buffer_;
};

class output_file {
public:
    /// How the target is written (see the table above).
    enum class method { replace, copy_into_linked, straight };

    /// Resolves and opens `path`; errors name `what` ("--out t.json").
    output_file(const std::string& path, const std::string& what);
    /// Opens `name` (one component, no '/') in `folder`, a fresh file whatever is there (see above).
    output_file(const folder_without_links& folder, const std::string& name, const std::string& what);
    ~output_file();  // without commit(): the temporary is removed, the target is as it was
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    /// The stream to write to: errors throw write_error.
    std::ostream& stream() { return *stream_; }
    /// Makes the output the target's: flush, close, then rename or copy. Throws
    /// write_error or attn::error; after a failure the target is as it was (for a
    /// straight write, what was written stays written).
    void commit();

    method how() const { return method_; }
    /// The file written in the end: `path`, or where its symbolic links lead.
    const std::string& target() const { return target_; }
    /// The temporary file beside the target ("" for a straight write).
    const std::string& temporary() const { return temporary_; }

private:
    void open_temporary(const struct ::stat* existing);
    void open_temporary_in_folder(const std::string& folder_path);
    void copy_temporary_into_target();
    void discard() noexcept;

    std::string what_;
    std::string target_;
    method method_ = method::replace;
    std::string temporary_;
    int folder_fd_;        // AT_FDCWD: target_ and temporary_ are paths; else names in this folder (not owned)
    int fd_ = -1;          // the temporary file, or the target for a straight write
    bool owns_fd_ = true;  // false for a descriptor named by the path (/dev/stdout): left open
    int target_fd_ = -1;   // copy_into_linked: the target, opened at once to check it may be written
    int slot_ = -1;        // the temporary's slot in temporary_files
    std::unique_ptr<output_stream> stream_;
};

/// Calls write(stream) on the output_file for `path` and commits it: `path` is whole
/// or as it was, and errors name `what` (e.g. "--out out.json").
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write);

}  // namespace attn
