#include "attn/io/output_stream.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace attn {

write_error::write_error(const std::string& what, int code, int fd)
    : error(what + ": " + std::strerror(code)), code(code), fd(fd) {}

fd_streambuf::fd_streambuf(int fd, std::string what, std::size_t buffer_bytes)
    : fd_(fd), what_(std::move(what)), buffer_size_(buffer_bytes > 0 ? buffer_bytes : 1) {
    buffer_.reset(new char[buffer_size_]);
    setp(buffer_.get(), buffer_.get() + buffer_size_);
}

fd_streambuf::~fd_streambuf() = default;

namespace {

/// A pipe's buffer made 1 MiB (the most an unprivileged process may ask for by default),
/// if `fd` is a pipe and the kernel agrees; anything else is left as it is.
void widen_if_pipe(int fd) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

}  // namespace

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

void fd_streambuf::write_pending() {
    const std::size_t pending = static_cast<std::size_t>(pptr() - pbase());
    setp(buffer_.get(), buffer_.get() + buffer_size_);  // a failed write drops the bytes: no retry at exit
    write_all(buffer_.get(), pending);
}

void fd_streambuf::flush_all() { write_pending(); }

fd_streambuf::int_type fd_streambuf::overflow(int_type ch) {
    write_pending();
    if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
    *pptr() = traits_type::to_char_type(ch);
    pbump(1);
    return ch;
}

std::streamsize fd_streambuf::xsputn(const char* bytes, std::streamsize size) {
    const std::size_t n = static_cast<std::size_t>(size);
    if (n == 0) return 0;  // and `bytes` may be null
    if (n <= static_cast<std::size_t>(epptr() - pptr())) {
        std::memcpy(pptr(), bytes, n);
        pbump(static_cast<int>(n));
        return size;
    }
    write_pending();
    if (n < buffer_size_) {
        std::memcpy(pptr(), bytes, n);
        pbump(static_cast<int>(n));
    } else {
        write_all(bytes, n);  // large blocks (tensor data) go straight through
    }
    return size;
}

int fd_streambuf::sync() {  // std::flush
    write_pending();
    return 0;
}

output_stream::output_stream(int fd, std::string what) : std::ostream(nullptr), buffer_(fd, std::move(what)) {
    rdbuf(&buffer_);
    exceptions(std::ios::badbit);
}

}  // namespace attn
