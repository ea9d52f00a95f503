#include "attn/io/output_file.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/compute/error.hpp"
#include "attn/io/temporary_files.hpp"

namespace attn {
namespace {

/// Past this many bytes written, a pipe is widened to 1 MiB.
constexpr std::uint64_t pipe_widening = std::uint64_t{1} << 20;

/// A pipe's buffer made 1 MiB (the most an unprivileged process may ask for by default),
/// if `fd` is a pipe and the kernel agrees; anything else is left as it is.
void widen_if_pipe(int fd) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

std::string directory_of(const std::string& path) {
    const auto slash = path.find_last_of('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/// Where the symbolic link `path` points, as it is written in the link.
std::string link_text(const std::string& path) {
    std::vector<char> text(PATH_MAX + 1);
    const ssize_t n = readlink(path.c_str(), text.data(), PATH_MAX);
    return n < 0 ? std::string("?") : std::string(text.data(), static_cast<std::size_t>(n));
}

/// Writes all of `size` bytes at `offset`; returns 0 or an errno.
int write_fully_at(int fd, const char* bytes, std::size_t size, off_t offset) {
    while (size > 0) {
        const ssize_t n = pwrite(fd, bytes, size, offset);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        bytes += n;
        size -= static_cast<std::size_t>(n);
        offset += n;
    }
    return 0;
}

/// The descriptor /dev/stdout, /dev/stderr, /dev/fd/N or /proc/self/fd/N names, or -1.
int named_descriptor(const std::string& path) {
    if (path == "/dev/stdout") return STDOUT_FILENO;
    if (path == "/dev/stderr") return STDERR_FILENO;
    for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        if (path.rfind(prefix, 0) != 0 || path.size() == prefix.size()) continue;
        if (path.size() > prefix.size() + 6) return 1 << 30;  // not an open descriptor (nor an int overflow)
        int n = 0;
        for (std::size_t i = prefix.size(); i < path.size(); ++i) {
            if (path[i] < '0' || path[i] > '9') return -1;
            n = n * 10 + (path[i] - '0');
        }
        return n;
    }
    return -1;
}

/// A file attn does not replace: cp refuses a file without write permission; root would
/// be let through by access(2) (`denied`), so the mode bits are checked too.
bool read_only(const struct stat& st, bool denied) {
    return S_ISREG(st.st_mode) && ((st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH)) == 0 || denied);
}
const std::string read_only_text = std::string(std::strerror(EACCES)) + " (the file is read-only)";

/// ".attn-" and six random letters or digits.
std::string temporary_name() {
    static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    static std::mt19937_64 draw{std::random_device{}() ^ static_cast<std::uint64_t>(getpid())};
    std::string name = ".attn-";
    for (int i = 0; i < 6; ++i) name += letters[draw() % (sizeof letters - 1)];
    return name;
}

}  // namespace

write_error::write_error(const std::string& what, int code, int fd)
    : error(what + ": " + std::strerror(code)), code(code), fd(fd) {}

fd_streambuf::fd_streambuf(int fd, std::string what, std::size_t buffer_bytes)
    : fd_(fd), what_(std::move(what)), buffer_size_(buffer_bytes > 0 ? buffer_bytes : 1) {
    buffer_.reset(new char[buffer_size_]);
    setp(buffer_.get(), buffer_.get() + buffer_size_);
}

void fd_streambuf::write_all(const char* bytes, std::size_t size) {
    const std::uint64_t before = written_;
    written_ += size;
    if (before <= pipe_widening && written_ > pipe_widening) widen_if_pipe(fd_);  // once, when it is large
    while (size > 0) {
        const ssize_t n = ::write(fd_, bytes, size);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw write_error(what_, errno, fd_);
        }
        if (n == 0) throw write_error(what_, EIO, fd_);  // no progress and no reason: not a full write
        bytes += n;
        size -= static_cast<std::size_t>(n);
    }
}

void fd_streambuf::flush_all() {
    const std::size_t pending = static_cast<std::size_t>(pptr() - pbase());
    setp(buffer_.get(), buffer_.get() + buffer_size_);  // a failed write drops the bytes: no retry at exit
    write_all(buffer_.get(), pending);
}

fd_streambuf::int_type fd_streambuf::overflow(int_type ch) {
    flush_all();
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
    return ch;
}

std::streamsize fd_streambuf::xsputn(const char* bytes, std::streamsize size) {
    const std::size_t n = static_cast<std::size_t>(size);
    if (n == 0) return 0;  // and `bytes` may be null
    if (n > static_cast<std::size_t>(epptr() - pptr())) flush_all();
    if (n >= buffer_size_) {
        write_all(bytes, n);  // large blocks (tensor data) go straight through
        return size;
    }
    std::memcpy(pptr(), bytes, n);
    pbump(static_cast<int>(n));
    return size;
}

int fd_streambuf::sync() {  // std::flush
    flush_all();
    return 0;
}

output_stream::output_stream(int fd, std::string what) : std::ostream(nullptr), buffer_(fd, std::move(what)) {
    rdbuf(&buffer_);
    exceptions(std::ios::badbit);
}

output_file::output_file(const std::string& path, const std::string& what)
    : what_(what), target_(path), folder_fd_(AT_FDCWD) {
    if (path.empty()) throw error(what + ": an empty file name");
    if (path.back() == '/') throw error(what + ": is a directory name (it ends in /); give a file name");
    // /dev/stdout and the like: the descriptor itself, so that its errors are its own (a
    // closed stdout pipe ends the run quietly, as without --out)
    if (const int named = named_descriptor(path); named >= 0) {
        const int flags = fcntl(named, F_GETFL);
        if (flags < 0 || (flags & O_ACCMODE) == O_RDONLY)
            throw error(what + ": " + std::strerror(EBADF) + " (not open for writing)");
        method_ = method::straight;
        fd_ = named;
        owns_fd_ = false;
        stream_ = std::make_unique<output_stream>(fd_, what_);
        return;
    }
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT) throw error(what + ": " + std::strerror(errno));
        open_temporary(nullptr);  // a new file; its folder is checked by making the temporary there
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        if (stat(path.c_str(), &st) != 0) {
            if (errno == ENOENT)
                throw error(what + ": a dangling symbolic link (to " + link_text(path) +
                            ", which does not exist); attn writes through links, not over them");
            throw error(what + ": " + std::strerror(errno));
        }
        if (S_ISREG(st.st_mode)) {
            char* real = realpath(path.c_str(), nullptr);
            if (real == nullptr) throw error(what + ": " + std::strerror(errno));
            target_ = real;
            std::free(real);
        }
    }
    if (S_ISDIR(st.st_mode)) throw error(what + ": is a directory; give a file name");
    if (S_ISREG(st.st_mode)) {
        // cp refuses a file without write permission; root would be let through by
        // access(2), so the mode bits are checked too: a file nobody may write stays.
        if (read_only(st, access(target_.c_str(), W_OK) != 0)) throw error(what + ": " + read_only_text);
        if (st.st_nlink > 1) {
            method_ = method::copy_into_linked;
            target_fd_ = open(target_.c_str(), O_WRONLY | O_CLOEXEC);
            if (target_fd_ < 0) throw error(what + ": " + std::strerror(errno));
        }
        try {
            open_temporary(&st);
        } catch (...) {
            discard();
            throw;
        }
        return;
    }
    method_ = method::straight;
    // A device, a FIFO (open waits for a reader, as cp does), a socket (refused by open).
    fd_ = open(target_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) throw error(what + ": " + std::strerror(errno));
    stream_ = std::make_unique<output_stream>(fd_, what_);
}

output_file::output_file(const folder_without_links& folder, const std::string& name, const std::string& what)
    : what_(what), target_(name), folder_fd_(folder.fd()) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
        throw error(what + ": not a file name in its folder");
    struct stat st {};
    if (fstatat(folder_fd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (S_ISDIR(st.st_mode)) throw error(what + ": is a directory; give a file name");
        if (read_only(st, faccessat(folder_fd_, name.c_str(), W_OK, 0) != 0))
            throw error(what + ": " + read_only_text);
        // anything else planted there (a link, a FIFO, a device, a hard link) is replaced by the rename
    } else if (errno != ENOENT) {
        throw error(what + ": " + std::strerror(errno));
    }
    open_temporary_in_folder(folder.path());
}

void output_file::open_temporary_in_folder(const std::string& folder_path) {
    const signals_deferred hold;  // a signal between making and listing the file would leave it
    for (int tries = 0; fd_ < 0; ++tries) {
        const std::string name = temporary_name();
        // the umask applies to 0666, as for any new file; O_NOFOLLOW | O_EXCL: never a planted name
        fd_ = openat(folder_fd_, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd_ < 0 && (errno != EEXIST || tries == 100))
            throw error(what_ + ": cannot create a file in " + folder_path + ": " + std::strerror(errno));
        if (fd_ >= 0) temporary_ = name;
    }
    slot_ = register_temporary_file((std::filesystem::path(folder_path) / temporary_).string());
    stream_ = std::make_unique<output_stream>(fd_, what_);
}

void output_file::open_temporary(const struct ::stat* existing) {
    const std::string dir = directory_of(target_);
    std::string name = dir + "/.attn-XXXXXX";
    {
        const signals_deferred hold;  // a signal between making and listing the file would leave it
        fd_ = mkstemp(name.data());
        if (fd_ < 0) throw error(what_ + ": cannot create a file in " + dir + ": " + std::strerror(errno));
        temporary_ = name;
        slot_ = register_temporary_file(temporary_);
    }
    fcntl(fd_, F_SETFD, FD_CLOEXEC);
    // mkstemp makes the file private (0600): give it the target's mode, or a new file's.
    mode_t mode;
    if (existing != nullptr) {
        mode = existing->st_mode & 07777;
        if (geteuid() == 0 && fchown(fd_, existing->st_uid, existing->st_gid) != 0) {
            // not every file system keeps owners; the content matters more
        }
    } else {
        const mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(fd_, mode);
    stream_ = std::make_unique<output_stream>(fd_, what_);
}

void output_file::copy_temporary_into_target() {
    const signals_deferred hold;  // FILE is written in place: a signal now ends the run after the copy
    const off_t size = lseek(fd_, 0, SEEK_END);
    if (size < 0) throw write_error(what_, errno);
    // Reserve the space first, so that a full disk leaves the target as it was.
    if (fallocate(target_fd_, FALLOC_FL_KEEP_SIZE, 0, size) != 0 && (errno == ENOSPC || errno == EDQUOT))
        throw write_error(what_, errno);
    std::vector<char> block(1 << 20);
    for (off_t at = 0; at < size;) {
        const ssize_t n = pread(fd_, block.data(), block.size(), at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw write_error(what_, n < 0 ? errno : EIO);
        if (const int code = write_fully_at(target_fd_, block.data(), static_cast<std::size_t>(n), at)) throw write_error(what_, code);
        at += n;
    }
    if (ftruncate(target_fd_, size) != 0) throw write_error(what_, errno);
    const int fd = target_fd_;
    target_fd_ = -1;
    if (close(fd) != 0) throw write_error(what_, errno);
}

void output_file::commit() {
    stream_->flush_all();
    if (method_ == method::straight) {
        const int fd = fd_;
        fd_ = -1;
        if (owns_fd_ && close(fd) != 0) throw write_error(what_, errno);
        return;
    }
    // No fsync, as cp and np.savez do none: the rename makes FILE whole or as it was for
    // every reader and any way attn stops; an fsync would only add survival of a power cut.
    if (method_ == method::copy_into_linked) {
        copy_temporary_into_target();
    } else {
        const int fd = fd_;
        fd_ = -1;
        if (close(fd) != 0) throw write_error(what_, errno);
        if (renameat(folder_fd_, temporary_.c_str(), folder_fd_, target_.c_str()) != 0)
            throw error(what_ + ": cannot replace " + target_ + ": " + std::strerror(errno));
        unregister_temporary_file(slot_);
        slot_ = -1;
        temporary_.clear();
    }
    discard();  // the copy's temporary, and any descriptor left
}

void output_file::discard() noexcept {
    if (fd_ >= 0 && owns_fd_) close(fd_);
    if (target_fd_ >= 0) close(target_fd_);
    fd_ = target_fd_ = -1;
    if (!temporary_.empty()) unlinkat(folder_fd_, temporary_.c_str(), 0);
    temporary_.clear();
    unregister_temporary_file(slot_);
    slot_ = -1;
}

output_file::~output_file() { discard(); }

void write_file_atomically(const std::string& path, const std::string& what,
                           const std::function<void(std::ostream&)>& write) {
    output_file file(path, what);
    write(file.stream());
    file.commit();
}

}  // namespace attn
