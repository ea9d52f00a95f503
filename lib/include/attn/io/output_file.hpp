#pragma once
// Where an output file goes, and writing it without ever damaging what is there.
//
// prepare_output(path) runs before any computation: it resolves the path, refuses
// what cannot be written (so a long run does not end in "cannot write"), and opens:
//
//   what `path` is                 how it is written
//   a new name, or a regular file  into a temporary `.attn-XXXXXX` in the same folder,
//                                  then renamed over the target: the target is whole
//                                  or untouched (no fsync: output_file.cpp says why).
//                                  An existing file keeps its permission bits (and,
//                                  for root, its owner).
//   a regular file with other      the same temporary first, then copied into the file
//   hard links                     in place, as cp does, so every name still shows it
//   a symbolic link                followed to its final target, which is written as
//                                  above; a dangling link is an error
//   a device, FIFO                 opened and written straight to, never replaced
//                                  (a socket cannot be opened: an error)
//   /dev/stdout, /dev/fd/N, ...    that descriptor written to (not opened again), whatever
//                                  it is: a closed pipe there is stdout's closed pipe
//   a directory, or a name         an error ("is a directory")
//   ending in '/'
//   a read-only file (no w bit)    an error, "Permission denied", even for root
//
// The temporary file's name is short and fixed in length, so any valid name works
// as a target, and it is listed in temporary_files.hpp so that a signal removes it.
// Every write error, at commit too (close, rename), throws: write_error for
// the bytes ("--out t.npz: No space left on device"), attn::error otherwise.
#include <functional>
#include <memory>
#include <ostream>
#include <string>

#include <sys/stat.h>
#include <sys/types.h>

#include "attn/io/output_stream.hpp"

namespace attn {

class output_file {
public:
    /// How the target is written (see the table above).
    enum class method { replace, copy_into_linked, straight };

    /// Resolves and opens `path`; errors name `what` ("--out t.json").
    output_file(const std::string& path, const std::string& what);
    ~output_file();  // without commit(): the temporary file is removed, the target is as it was
    output_file(const output_file&) = delete;
    output_file& operator=(const output_file&) = delete;

    /// The stream to write to (an output_stream: errors throw write_error).
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
    void copy_temporary_into_target();
    void discard() noexcept;

    std::string what_;
    std::string target_;
    method method_ = method::replace;
    std::string temporary_;
    int fd_ = -1;         // the temporary file, or the target for a straight write
    bool owns_fd_ = true; // false for a descriptor named by the path (/dev/stdout): left open
    int target_fd_ = -1;  // copy_into_linked: the target, opened at once to check it may be written
    int slot_ = -1;       // the temporary's slot in temporary_files
    bool committed_ = false;
    std::unique_ptr<output_stream> stream_;
};

/// Resolves `path` and opens it for writing (output_file's constructor): call it once
/// the flags are valid and before computing anything.
std::unique_ptr<output_file> prepare_output(const std::string& path, const std::string& what);

/// Calls write(stream) on the output_file for `path` and commits it. If write throws
/// or any byte cannot be written, `path` is left as it was, no temporary file stays,
/// and attn::error names `what` (e.g. "--out out.json") and the reason.
void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write);

}  // namespace attn
