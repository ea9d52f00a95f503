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
// A large block that stays as it is for a while (a stage the computation only reads
// next, or no longer needs) can be lent instead of copied, and is then written from
// where it lies: with O_DIRECT when it lies within its pages as it will in the file
// (the disk reads the stage's own pages), else (a pipe, a file system without
// O_DIRECT) with plain writes. Only its partial first and last pages, or a block that
// does not lie as the file does, are copied into two buffers of a second thread, the
// copier, which also hands every piece to the lender's `copied` (an npz's CRC-32) while
// the first thread writes. The owner is let go once its bytes are written. The caller
// goes on computing meanwhile, and gets the memory back (give_back) before it changes
// it. A lent 256 MiB stage is then written while the next one is computed, where a copy
// would wait for the disk once the buffers were full, and costs no memcpy.
//
// A failed write is kept and thrown (write_error, as a direct write would) by the next
// call from the caller's thread: a run still stops within a buffer of the first lost byte.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attn/io/write_behind.hpp"

namespace attn {

class background_writer {
public:
    static constexpr std::size_t buffer_bytes = std::size_t{8} << 20;
    static constexpr std::size_t buffer_count = 8;  // 64 MiB in all, and two more for lent bytes
    static constexpr std::size_t lent_buffers = 2;
    static constexpr std::size_t page = 4096;        // O_DIRECT's alignment (a multiple of any sector)

    /// The memory an output of about `output_bytes` holds in a writer (the memory
    /// estimate counts it): its buffers once the output passes write_behind::start, and
    /// the two for lent bytes when the output `lends` (their pages are touched only then).
    static constexpr std::uint64_t bytes_for(std::uint64_t output_bytes, bool lends) {
        if (output_bytes <= static_cast<std::uint64_t>(write_behind::start)) return 0;
        return (buffer_count + (lends ? lent_buffers : 0)) * buffer_bytes;
    }

    /// Writes to `fd` (not owned), telling `behind` (owned by the caller) what it wrote.
    background_writer(int fd, std::string what, write_behind& behind);
    ~background_writer();  // drops what is not written yet: call drain() to keep it
    background_writer(const background_writer&) = delete;
    background_writer& operator=(const background_writer&) = delete;

    /// Copies `bytes` to be written; waits only when every buffer is full.
    void write(const char* bytes, std::size_t size);
    /// Called on each piece of lent bytes by the copier, in order (a copied piece while it
    /// is in the cache).
    using copied_piece = std::function<void(const char* piece, std::size_t size)>;
    /// Writes `bytes` after everything handed over so far, without copying them now: when
    /// their turn comes they are written from where they lie (or copied, see above),
    /// `copied` sees every piece, and `owner` is let go once they are written. They must
    /// not change until then (give_back). Returns at once.
    void lend(const char* bytes, std::size_t size, std::shared_ptr<const void> owner, copied_piece copied = {});
    /// Writes `size` bytes (at most a buffer's) that `make` fills when their turn comes:
    /// after `copied` has seen the bytes before them (an npz's data descriptor, with the
    /// CRC-32 that `copied` computed).
    void write_later(std::size_t size, std::function<void(char* bytes)> make);
    /// Returns once nothing lent of `owner` is held: written and let go (or dropped after
    /// a failed write).
    void give_back(const void* owner);
    /// Returns once the copier is through everything handed over (every `copied` and
    /// `make` call done).
    void settle();
    /// Hands over the buffer being filled, without waiting for it to be written.
    void submit();
    /// Everything handed over written; throws write_error if a write failed.
    void drain();
    /// The lent bytes written so far from where they lay, not copied (for tests).
    std::uint64_t bytes_written_in_place() const { return in_place_; }

private:
    struct buffer {
        char* bytes = nullptr;  // buffer_bytes, page-aligned
        std::size_t skew = 0;   // where the data starts: its file offset's place in a page
        std::size_t used = 0;   // bytes of data from skew on
    };
    /// What comes next in the output: a full buffer, lent bytes, or bytes made later.
    struct job {
        std::size_t buffer = none;  // an index into buffers_, or none: lent or made bytes
        const char* bytes = nullptr;
        std::size_t size = 0;
        std::uint64_t offset = 0;  // the file offset of the first byte
        std::shared_ptr<const void> owner;
        copied_piece copied;
        std::function<void(char*)> make;  // set: `size` bytes made by it, nothing lent
    };
    /// What the writer writes next: a buffer, or lent bytes from where they lie.
    struct piece {
        std::size_t buffer = none;  // an index into buffers_, or none: lent bytes
        const char* bytes = nullptr;
        std::size_t size = 0;
        std::shared_ptr<const void> owner;  // of lent bytes: let go once written
    };
    static constexpr std::size_t none = static_cast<std::size_t>(-1);
    void hand_over(job j);  // lent or made bytes after what is handed over so far, at offset_
    void copy_jobs();   // the copier's thread: jobs_ to to_write_, lent bytes passed on or copied
    void pass_lent(job& j, std::unique_lock<std::mutex>& lock);
    bool copy_lent(job& j, std::size_t from, std::size_t count, std::unique_lock<std::mutex>& lock);
    void make_later(job& j, std::unique_lock<std::mutex>& lock);
    std::size_t take_lent_buffer(std::unique_lock<std::mutex>& lock);  // none when stopping or failed
    void write_jobs();  // the writer's thread: to_write_ to fd_
    int write_out(const buffer& b);        // 0 or an errno
    int write_in_place(const piece& p);    // lent bytes: 0 or an errno
    int write_plain(const char* bytes, std::size_t size);
    int write_direct(const char* bytes, std::size_t size);
    void take_free_buffer();               // with mutex_ held
    void throw_if_failed();                // with mutex_ held
    bool holds(const void* owner) const;   // with mutex_ held

    int fd_;
    std::string what_;
    write_behind& behind_;
    std::atomic<bool> direct_{false};  // O_DIRECT may be tried: a regular file, not appended to
    std::atomic<std::uint64_t> in_place_{0};
    std::uint64_t offset_ = 0;    // the file offset of the next byte handed over
    std::vector<buffer> buffers_;          // buffer_count for write(), then lent_buffers for lent bytes
    std::deque<std::size_t> free_, lent_free_;  // indices into buffers_, of either kind
    std::deque<job> jobs_;                 // handed over, in file order
    std::deque<piece> to_write_;           // ready to write, in file order
    std::size_t filling_ = none;           // the buffer write() copies into, if any
    bool copying_ = false;                 // the copier is on a job taken from jobs_
    const void* lending_ = nullptr;        // the owner of the lent bytes it is copying
    bool writing_ = false;                 // the writer is writing a piece taken from to_write_
    const void* writing_owner_ = nullptr;  // the owner of the lent bytes it is writing
    bool stopping_ = false;
    int failed_ = 0;                       // the errno of the first failed write
    std::mutex mutex_;
    std::condition_variable changed_;
    std::thread copier_, writer_;
};

}  // namespace attn
