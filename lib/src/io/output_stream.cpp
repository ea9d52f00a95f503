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

void fd_streambuf::start_writing_large() {
    // A device (/dev/null, a terminal, a tape) is written straight: there is nothing
    // for a thread to overlap, or the device paces the run anyway.
    struct stat st {};
    if (fstat(fd_, &st) == 0 && S_ISCHR(st.st_mode)) return;
    behind_ = std::make_unique<write_behind>(fd_);
    background_ = std::make_unique<background_writer>(fd_, what_, *behind_);
}

namespace {

/// A pipe's buffer made 1 MiB (the most an unprivileged process may ask for by default),
/// if `fd` is a pipe and the kernel agrees; anything else is left as it is.
void widen_if_pipe(int fd) {
    struct stat st {};
    if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode)) (void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
}

}  // namespace

void fd_streambuf::count_written(std::size_t size) {
    const std::uint64_t before = written_;
    written_ += size;
    if (before <= pipe_widening && written_ > pipe_widening) widen_if_pipe(fd_);  // once, when it is large
    if (before <= large_output && written_ > large_output) start_writing_large();
}

void fd_streambuf::write_all(const char* bytes, std::size_t size) {
    count_written(size);
    if (background_)
        background_->write(bytes, size);
    else
        write_now(bytes, size);
}

void fd_streambuf::lend(const char* bytes, std::size_t size, std::shared_ptr<const void> owner,
                        background_writer::copied_piece copied) {
    write_pending();  // the bytes before these
    count_written(size);
    if (background_) {
        background_->lend(bytes, size, std::move(owner), std::move(copied));
        return;
    }
    if (copied) copied(bytes, size);
    write_now(bytes, size);
}

void fd_streambuf::write_later(std::size_t size, std::function<void(char*)> make) {
    write_pending();
    if (background_) {
        count_written(size);
        background_->write_later(size, std::move(make));
        return;
    }
    std::string bytes(size, '\0');
    make(bytes.data());
    sputn(bytes.data(), static_cast<std::streamsize>(size));
}

void fd_streambuf::give_back(const void* owner) {
    if (background_) background_->give_back(owner);
}

void fd_streambuf::settle() {
    if (background_) background_->settle();
}

void fd_streambuf::write_now(const char* bytes, std::size_t size) {
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

void fd_streambuf::flush_all() {
    write_pending();
    if (background_) background_->drain();
}

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

int fd_streambuf::sync() {  // std::flush: written now, but not waited for
    write_pending();
    if (background_) background_->submit();
    return 0;
}

void write_lent(std::ostream& out, const char* bytes, std::size_t size, std::shared_ptr<const void> owner,
                background_writer::copied_piece copied) {
    if (auto* fd = dynamic_cast<fd_streambuf*>(out.rdbuf())) {
        fd->lend(bytes, size, std::move(owner), std::move(copied));
        return;
    }
    if (copied) copied(bytes, size);
    out.write(bytes, static_cast<std::streamsize>(size));
}

void write_later(std::ostream& out, std::size_t size, const std::function<void(char*)>& make) {
    if (auto* fd = dynamic_cast<fd_streambuf*>(out.rdbuf())) {
        fd->write_later(size, make);
        return;
    }
    std::string bytes(size, '\0');
    make(bytes.data());
    out.write(bytes.data(), static_cast<std::streamsize>(size));
}

void give_back(std::ostream& out, const void* owner) {
    if (auto* fd = dynamic_cast<fd_streambuf*>(out.rdbuf())) fd->give_back(owner);
}

void settle(std::ostream& out) {
    if (auto* fd = dynamic_cast<fd_streambuf*>(out.rdbuf())) fd->settle();
}

output_stream::output_stream(int fd, std::string what) : std::ostream(nullptr), buffer_(fd, std::move(what)) {
    rdbuf(&buffer_);
    exceptions(std::ios::badbit);
}

}  // namespace attn
