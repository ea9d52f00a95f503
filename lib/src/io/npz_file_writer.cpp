#include "attn/io/npz_file_writer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <zip.h>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"

namespace attn {
namespace {

constexpr std::uint64_t zip64_member_bytes = 0xffffffffu;  // a member this big needs zip64
constexpr unsigned max_zip_call_bytes = 1u << 30;          // minizip takes unsigned lengths

std::string zip_reason(int code) {
    return code == ZIP_ERRNO ? std::string(std::strerror(errno)) : "zip error " + std::to_string(code);
}

}  // namespace

npz_file_writer::npz_file_writer(const std::string& path, const std::string& what) : what_(what) {
    errno = 0;
    zip_ = zipOpen64(path.c_str(), APPEND_STATUS_CREATE);
    if (!zip_) throw error(what + ": cannot open " + path + " for writing: " + std::strerror(errno));
}

npz_file_writer::~npz_file_writer() {
    if (zip_) zipClose(static_cast<zipFile>(zip_), nullptr);
}

void npz_file_writer::put(const char* bytes, std::size_t size) {
    while (size > 0) {
        const unsigned n = static_cast<unsigned>(std::min<std::size_t>(size, max_zip_call_bytes));
        const int status = zipWriteInFileInZip(static_cast<zipFile>(zip_), bytes, n);
        if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
        bytes += n;
        size -= n;
    }
}

void npz_file_writer::open_member(const std::string& name, std::uint64_t bytes) {
    if (name.empty()) throw error(what_ + ": an .npz member needs a name");
    if (!names_.insert(name).second) throw error(what_ + ": two .npz members are named " + name);
    zip_fileinfo info{};
    info.tmz_date.tm_year = 1980;  // 1980-01-01 00:00, the first DOS date: no clock in the file
    info.tmz_date.tm_mday = 1;
    const int status = zipOpenNewFileInZip64(static_cast<zipFile>(zip_), (name + ".npy").c_str(), &info, nullptr, 0,
                                             nullptr, 0, nullptr, 0 /* stored, as np.savez */, 0,
                                             bytes >= zip64_member_bytes ? 1 : 0);
    if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
}

void npz_file_writer::close_member() {
    const int status = zipCloseFileInZip(static_cast<zipFile>(zip_));
    if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
}

void npz_file_writer::begin_array(const std::string& name, const std::vector<std::size_t>& shape, bool boolean) {
    open_member(name, npy_size(shape, boolean));
    const std::string header = npy_header_bytes(shape, boolean);
    put(header.data(), header.size());
    boolean_ = boolean;
    remaining_ = 1;
    for (const std::size_t s : shape) remaining_ *= s;
}

void npz_file_writer::write(const float* values, std::size_t count) {
    if (count > remaining_) throw error(what_ + ": more elements than the array's shape holds");
    write_npy_elements(values, count, boolean_, [&](const char* bytes, std::size_t size) { put(bytes, size); });
    remaining_ -= count;
}

void npz_file_writer::end_array() {
    if (remaining_ != 0) throw error(what_ + ": an array ended before all its elements were written");
    close_member();
}

void npz_file_writer::text(const std::string& name, const std::string& utf8) {
    open_member(name, 0);
    write_npy_text(utf8, [&](const char* bytes, std::size_t size) { put(bytes, size); });
    close_member();
}

void npz_file_writer::close() {
    const int status = zipClose(static_cast<zipFile>(zip_), nullptr);
    zip_ = nullptr;
    if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
}

}  // namespace attn
