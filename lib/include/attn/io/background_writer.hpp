#pragma once
// Writing a large output on a thread of its own, while the computation goes on.
//
// A write(2) of a large block costs the caller the kernel's copy of it into the page
// cache (about 0.4 s of CPU a GiB on the project's machine, as much as the CRC-32 and
// the softmax together) and, with write_behind, any wait for the disk. Handed to this
// writer instead, the block is copied into one of a few buffers it owns (memcpy,
// several times faster) and written by its thread, in order, while the caller computes.
//
// To a regular file, the whole pages of each buffer are written with O_DIRECT: the disk
// reads them from the buffer itself (DMA), with no copy through the page cache and
// almost no CPU (1.1 GiB: 0.1 s of system time instead of 0.4-3 s), and the file's
// pages do not crowd out other files' cache. The buffers are laid out so that each
// byte sits at the same offset within a page as in the file, so that, the first and
// last partial pages aside, every buffer is page-aligned. A file system that refuses
// O_DIRECT (EINVAL) is written through the page cache, behind (write_behind.hpp).
//
// A failed write is kept and thrown (write_error, as a direct write would) by the next
// call from the caller's thread: a run still stops within a buffer of the first lost byte.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attn/io/write_behind.hpp"

namespace attn {

class background_writer {
public:
    static constexpr std::size_t buffer_bytes = std::size_t{8} << 20;
    static constexpr std::size_t buffer_count = 8;  // 64 MiB in all
    static constexpr std::size_t page = 4096;        // O_DIRECT's alignment (a multiple of any sector)

    /// The memory an output of about `output_bytes` holds in a writer (the memory
    /// estimate counts it): its buffers once the output passes write_behind::start.
    static constexpr std::uint64_t bytes_for(std::uint64_t output_bytes) {
        return output_bytes > static_cast<std::uint64_t>(write_behind::start) ? buffer_count * buffer_bytes : 0;
    }

    /// Writes to `fd` (not owned), telling `behind` (owned by the caller) what it wrote.
    background_writer(int fd, std::string what, write_behind& behind);
    ~background_writer();  // drops what is not written yet: call drain() to keep it
    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Copies `bytes` to be written; waits only when every buffer is full.
    void write(const char* bytes, std::size_t size);
    /// Hands over the buffer being filled, without waiting for it to be written.
    void submit();
    /// Everything handed over written; throws write_error if a write failed.
    void drain();

private:
    struct buffer {
        char* bytes = nullptr;  // buffer_bytes, page-aligned
        std::size_t skew = 0;   // where the data starts: its file offset's place in a page
        std::size_t used = 0;   // bytes of data from skew on
    };
    void run();
    int write_out(const buffer& b);        // 0 or an errno
    int write_plain(const char* bytes, std::size_t size);
    int write_direct(const char* bytes, std::size_t size);
    void take_free_buffer();               // with mutex_ held
    void throw_if_failed();                // with mutex_ held

    int fd_;
    std::string what_;
    write_behind& behind_;
    bool direct_ = false;         // O_DIRECT may be tried: a regular file, not appended to
    std::uint64_t offset_ = 0;    // the file offset of the next byte handed over
    std::vector<buffer> buffers_;
    std::deque<std::size_t> free_, full_;  // indices into buffers_
    std::size_t filling_ = 0;              // the buffer write() copies into
    bool writing_ = false;                 // the thread is writing a buffer taken from full_
    bool stopping_ = false;
    int failed_ = 0;                       // the errno of the first failed write
    std::mutex mutex_;
    std::condition_variable changed_;
    std::thread thread_;
};

}  // namespace attn
