#include "attn/io/write_behind.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn {

write_behind::write_behind(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    const off_t at = lseek(fd, 0, SEEK_CUR);
    if (at < 0) return;
    fd_ = fd;
    origin_ = at;
}

void write_behind::wrote(std::int64_t bytes) {
    written_ += bytes;
    if (fd_ < 0) return;
    // Each whole window written: start its writeback, then wait for the one two back
    // (its writeback started a window ago) and drop it from the cache. The calls are
    // advice: a file system that ignores them (tmpfs) is written as before.
    while (written_ - flushed_ >= window) {
        sync_file_range(fd_, origin_ + flushed_, window, SYNC_FILE_RANGE_WRITE);
        flushed_ += window;
        const std::int64_t old = flushed_ - 3 * window;
        if (old < 0) continue;
        sync_file_range(fd_, origin_ + old, window,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
        posix_fadvise(fd_, origin_ + old, window, POSIX_FADV_DONTNEED);
    }
}

}  // namespace attn
