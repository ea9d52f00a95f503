#include "attn/io/background_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/io/output_stream.hpp"

namespace attn {

background_writer::background_writer(int fd, std::string what, write_behind& behind)
    : fd_(fd), what_(std::move(what)), behind_(behind), buffers_(buffer_count + lent_buffers) {
    struct stat st {};
    const int flags = fcntl(fd, F_GETFL);
    const off_t at = lseek(fd, 0, SEEK_CUR);
    direct_ = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flags >= 0 && (flags & O_APPEND) == 0 && at >= 0;
    offset_ = direct_ ? static_cast<std::uint64_t>(at) : 0;
    for (std::size_t i = 0; i < buffers_.size(); ++i) {  // only the pages used get touched
        buffers_[i].bytes = static_cast<char*>(std::aligned_alloc(page, buffer_bytes));
        if (buffers_[i].bytes == nullptr) {
            for (buffer& b : buffers_) std::free(b.bytes);
            throw std::bad_alloc();
        }
        (i < buffer_count ? free_ : lent_free_).push_back(i);
    }
    copier_ = std::thread([this] { copy_jobs(); });
    writer_ = std::thread([this] { write_jobs(); });
}

background_writer::~background_writer() {
    std::deque<job> dropped;  // their owners let go of outside the lock
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        dropped.swap(jobs_);
    }
    changed_.notify_all();
    copier_.join();
    writer_.join();
    for (buffer& b : buffers_) std::free(b.bytes);
}

void background_writer::throw_if_failed() {
    if (failed_ != 0) throw write_error(what_, failed_, fd_);
}

void background_writer::write(const char* bytes, std::size_t size) {
    while (size > 0) {
        if (filling_ == none) {
            std::unique_lock<std::mutex> lock(mutex_);
            changed_.wait(lock, [&] { return !free_.empty() || failed_ != 0; });
            throw_if_failed();
            take_free_buffer();
        }
        buffer& b = buffers_[filling_];
        const std::size_t n = std::min(size, buffer_bytes - b.skew - b.used);
        std::memcpy(b.bytes + b.skew + b.used, bytes, n);
        b.used += n;
        bytes += n;
        size -= n;
        if (b.skew + b.used == buffer_bytes) submit();
    }
}

void background_writer::take_free_buffer() {
    filling_ = free_.front();
    free_.pop_front();
    buffers_[filling_].skew = offset_ % page;
    buffers_[filling_].used = 0;
}

void background_writer::submit() {
    std::lock_guard<std::mutex> lock(mutex_);
    throw_if_failed();
    if (filling_ == none) return;
    if (buffers_[filling_].used == 0) {  // nothing in it: back to the free ones (its skew may go stale)
        free_.push_front(filling_);
    } else {
        offset_ += buffers_[filling_].used;
        jobs_.push_back(job{filling_, nullptr, 0, 0, nullptr, {}, {}});
        changed_.notify_all();
    }
    filling_ = none;
}

void background_writer::hand_over(job j) {
    submit();  // the bytes before these
    std::lock_guard<std::mutex> lock(mutex_);
    j.offset = offset_;
    offset_ += j.size;
    jobs_.push_back(std::move(j));
    changed_.notify_all();
}

void background_writer::lend(const char* bytes, std::size_t size, std::shared_ptr<const void> owner,
                             copied_piece copied) {
    hand_over(job{none, bytes, size, 0, std::move(owner), std::move(copied), {}});
}

void background_writer::write_later(std::size_t size, std::function<void(char*)> make) {
    if (size > buffer_bytes - page) throw std::length_error("background_writer::write_later: more than a buffer");
    hand_over(job{none, nullptr, size, 0, nullptr, {}, std::move(make)});
}

void background_writer::settle() {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return (jobs_.empty() && !copying_) || failed_ != 0; });
}

bool background_writer::holds(const void* owner) const {
    if ((copying_ && lending_ == owner) || (writing_ && writing_owner_ == owner)) return true;
    return std::any_of(jobs_.begin(), jobs_.end(), [&](const job& j) { return j.owner.get() == owner; }) ||
           std::any_of(to_write_.begin(), to_write_.end(), [&](const piece& p) { return p.owner.get() == owner; });
}

void background_writer::give_back(const void* owner) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return !holds(owner); });
}

void background_writer::drain() {
    submit();
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] {
        return (jobs_.empty() && !copying_ && to_write_.empty() && !writing_) || failed_ != 0;
    });
    throw_if_failed();
}

int background_writer::write_plain(const char* bytes, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd_, bytes, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        bytes += n;
        size -= static_cast<std::size_t>(n);
        behind_.wrote(n);
    }
    return 0;
}

/// Whole pages from a page-aligned address to a page-aligned offset, with O_DIRECT on
/// the descriptor only meanwhile (it is shared: `attn > f` in a script's block).
int background_writer::write_direct(const char* bytes, std::size_t size) {
    const int flags = fcntl(fd_, F_GETFL);
    if (flags < 0 || fcntl(fd_, F_SETFL, flags | O_DIRECT) != 0) {
        direct_ = false;
        return write_plain(bytes, size);
    }
    std::size_t done = 0;
    int code = 0;
    while (done < size) {
        const ssize_t n = ::write(fd_, bytes + done, size - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EINVAL && done == 0) {  // this file system takes no O_DIRECT
            direct_ = false;
            break;
        }
        if (n <= 0) {
            code = n < 0 ? errno : EIO;
            break;
        }
        done += static_cast<std::size_t>(n);
        behind_.wrote(n);  // which keeps counting: it drops the first, cached, pages too
        if (done % page != 0) break;  // a short write off a page: the rest through the cache
    }
    fcntl(fd_, F_SETFL, flags);
    if (code != 0) return code;
    return write_plain(bytes + done, size - done);
}

int background_writer::write_out(const buffer& b) {
    const char* data = b.bytes + b.skew;
    const std::size_t head = b.skew == 0 ? 0 : std::min(b.used, page - b.skew);  // to the next page
    const std::size_t pages = direct_ ? (b.used - head) / page * page : 0;
    if (const int code = write_plain(data, head)) return code;
    if (const int code = write_direct(data + head, pages)) return code;
    return write_plain(data + head + pages, b.used - head - pages);
}

/// Lent bytes from where they lie: whole pages with O_DIRECT (pass_lent lines them up).
int background_writer::write_in_place(const piece& p) {
    const int code = direct_ ? write_direct(p.bytes, p.size) : write_plain(p.bytes, p.size);
    if (code == 0) in_place_ += p.size;
    return code;
}

std::size_t background_writer::take_lent_buffer(std::unique_lock<std::mutex>& lock) {
    changed_.wait(lock, [&] { return stopping_ || failed_ != 0 || !lent_free_.empty(); });
    if (stopping_ || failed_ != 0) return none;  // nothing more is written
    const std::size_t index = lent_free_.front();
    lent_free_.pop_front();
    return index;
}

namespace {
constexpr std::size_t cache_piece = std::size_t{256} << 10;  // handed to `copied` a piece at a time
}  // namespace

/// Lent bytes [from, from + count) copied into the copier's buffers, `copied` called on
/// each piece from the copy; false when the writer stops or failed first.
bool background_writer::copy_lent(job& j, std::size_t from, std::size_t count, std::unique_lock<std::mutex>& lock) {
    for (std::size_t done = from; done < from + count;) {
        const std::size_t index = take_lent_buffer(lock);
        if (index == none) return false;
        buffer& b = buffers_[index];
        b.skew = (j.offset + done) % page;
        b.used = std::min(from + count - done, buffer_bytes - b.skew);  // a full buffer ends on a page
        lock.unlock();
        for (std::size_t at = 0; at < b.used; at += cache_piece) {
            const std::size_t n = std::min(cache_piece, b.used - at);
            std::memcpy(b.bytes + b.skew + at, j.bytes + done + at, n);
            if (j.copied) j.copied(b.bytes + b.skew + at, n);
        }
        lock.lock();
        done += b.used;
        to_write_.push_back(piece{index, nullptr, 0, nullptr});
        changed_.notify_all();
    }
    return true;
}

/// Lent bytes to the writer, written from where they lie: to a file with O_DIRECT, the
/// whole pages between a partial first and last page, which are copied, when the bytes
/// lie within their pages as they do in the file (else all are copied); anywhere else,
/// all of them. `copied` sees the pieces in order, read from where they lie meanwhile.
void background_writer::pass_lent(job& j, std::unique_lock<std::mutex>& lock) {
    const bool direct = direct_;  // read once: the writer may turn it off (EINVAL) meanwhile
    const std::size_t head = direct ? std::min(j.size, (page - j.offset % page) % page) : 0;
    const std::size_t pages = direct ? (j.size - head) / page * page : j.size;
    const bool lined_up = !direct || (reinterpret_cast<std::uintptr_t>(j.bytes) + head) % page == 0;
    if (!lined_up || pages == 0) {
        copy_lent(j, 0, j.size, lock);
        return;
    }
    if (!copy_lent(j, 0, head, lock)) return;
    to_write_.push_back(piece{none, j.bytes + head, pages, j.owner});
    changed_.notify_all();
    lock.unlock();
    if (j.copied)
        for (std::size_t at = 0; at < pages; at += cache_piece)
            j.copied(j.bytes + head + at, std::min(cache_piece, pages - at));
    lock.lock();
    copy_lent(j, head + pages, j.size - head - pages, lock);
}

void background_writer::make_later(job& j, std::unique_lock<std::mutex>& lock) {
    const std::size_t index = take_lent_buffer(lock);
    if (index == none) return;
    buffer& b = buffers_[index];
    b.skew = j.offset % page;
    b.used = j.size;  // write_later keeps it within the buffer
    lock.unlock();
    j.make(b.bytes + b.skew);
    lock.lock();
    to_write_.push_back(piece{index, nullptr, 0, nullptr});
    changed_.notify_all();
}

void background_writer::copy_jobs() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        job j = std::move(jobs_.front());
        jobs_.pop_front();
        if (j.buffer != none) {
            to_write_.push_back(piece{j.buffer, nullptr, 0, nullptr});
            changed_.notify_all();
            continue;
        }
        copying_ = true;
        lending_ = j.owner.get();
        if (j.make)
            make_later(j, lock);
        else
            pass_lent(j, lock);
        lock.unlock();
        j.owner.reset();  // before give_back can return: the owner's count is down by then
        j.copied = nullptr;
        j.make = nullptr;
        lock.lock();
        copying_ = false;
        lending_ = nullptr;
        changed_.notify_all();
    }
}

void background_writer::write_jobs() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stopping_ || !to_write_.empty(); });
        if (stopping_) return;
        piece p = std::move(to_write_.front());
        to_write_.pop_front();
        writing_ = true;
        writing_owner_ = p.owner.get();
        const bool write = failed_ == 0;  // nothing after a failure
        lock.unlock();
        const int code = !write ? 0 : p.buffer != none ? write_out(buffers_[p.buffer]) : write_in_place(p);
        p.owner.reset();  // before give_back can return: the owner's count is down by then
        lock.lock();
        writing_ = false;
        writing_owner_ = nullptr;
        if (code != 0 && failed_ == 0) failed_ = code;
        if (p.buffer != none) (p.buffer < buffer_count ? free_ : lent_free_).push_back(p.buffer);
        changed_.notify_all();
    }
}

}  // namespace attn
