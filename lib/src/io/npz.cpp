#include "attn/io/npz.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>

#include <unzip.h>
#include <zip.h>

#include "attn/io/atomic_file.hpp"
#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"

namespace attn {
namespace {

constexpr std::uint64_t zip64_member_bytes = 0xffffffffu;  // a member this big needs zip64
// Debian's minizip 1.1 reads zip64 sizes and offsets only where unsigned long is 32-bit
// (unzip.c compares them with (unsigned long)-1), so on 64-bit Linux it misreads any
// archive or member of 4 GiB or more. Writing them is fine (NumPy reads them).
constexpr std::uint64_t max_readable_bytes = 0xffffffffu;
const char* const zip64_unsupported = "(this build's minizip 1.1 cannot read zip64 sizes)";
constexpr unsigned max_zip_call_bytes = 1u << 30;          // minizip takes unsigned lengths
constexpr std::uint64_t max_deflate_ratio = 1032;          // deflate cannot expand data more

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Why unzOpen64 refused `path`: a cut-off zip, an .npy, or something else.
error not_a_zip(const std::string& path, const std::string& what) {
    const input_file file = open_input_file(path, what);
    char start[6] = {};
    const std::size_t got = std::fread(start, 1, sizeof start, file.get());
    if (got == 0) return error(what + ": empty file; expected an .npz (zip) archive");
    if (got >= 4 && std::memcmp(start, "PK\x03\x04", 4) == 0) return error(what + ": truncated (not a complete zip archive)");
    if (got == 6 && std::memcmp(start, "\x93NUMPY", 6) == 0)
        return error(what + ": not an .npz file: it holds a single .npy array (np.save); name it .npy, or write "
                            "an archive with np.savez");
    return error(what + ": not an .npz file (not a zip archive)");
}

std::uint64_t file_size(const std::string& path, const std::string& what) {
    const input_file file = open_input_file(path, what);
    if (fseeko(file.get(), 0, SEEK_END) != 0) throw error(what + ": cannot read: " + std::strerror(errno));
    return static_cast<std::uint64_t>(ftello(file.get()));
}

std::string zip_reason(int code) {
    return code == ZIP_ERRNO ? std::string(std::strerror(errno)) : "zip error " + std::to_string(code);
}

/// Reads the member unzip is positioned on into `tensors` or `texts`.
void read_member(unzFile z, const std::string& what, std::uint64_t archive_bytes,
                 std::map<std::string, loaded_tensor>& tensors, std::map<std::string, std::string>* texts,
                 const std::function<bool(const std::string&)>& wanted) {
    unz_file_info64 info;
    if (unzGetCurrentFileInfo64(z, &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK)
        throw error(what + ": corrupt zip directory");
    std::string name(info.size_filename, '\0');
    if (unzGetCurrentFileInfo64(z, &info, &name[0], name.size(), nullptr, 0, nullptr, 0) != UNZ_OK)
        throw error(what + ": corrupt zip directory");
    if (!ends_with(name, ".npy")) return;  // np.load gives such members as raw bytes
    const std::string key = name.substr(0, name.size() - 4);
    if (wanted && !wanted(key)) return;
    const std::string member = what + ": " + printable_text(key);
    if (tensors.count(key) || (texts && texts->count(key))) throw error(member + ": the member appears twice");
    if (info.flag & 1) throw error(member + ": encrypted members are not supported");
    if (info.compression_method != 0 && info.compression_method != Z_DEFLATED)
        throw error(member + ": unsupported compression method " + std::to_string(info.compression_method) +
                    " (np.savez stores, np.savez_compressed deflates)");
    if (info.compressed_size > archive_bytes) throw error(what + ": truncated (not a complete zip archive)");
    if (info.uncompressed_size >= max_readable_bytes || info.compressed_size >= max_readable_bytes)
        throw error(member + ": members of 4 GiB or more cannot be read " + zip64_unsupported);
    const bool claim_fits = info.compression_method == 0
                                ? info.uncompressed_size == info.compressed_size
                                : info.uncompressed_size <= info.compressed_size * max_deflate_ratio + 1024;
    if (!claim_fits)
        throw error(member + ": corrupt member: " + std::to_string(info.uncompressed_size) + " bytes claimed from " +
                    std::to_string(info.compressed_size) + " stored");
    if (unzOpenCurrentFile(z) != UNZ_OK) throw error(member + ": corrupt member (cannot start reading it)");

    const byte_source source = [&](char* buffer, std::size_t size) -> std::size_t {
        const int got = unzReadCurrentFile(z, buffer, static_cast<unsigned>(std::min<std::size_t>(size, max_zip_call_bytes)));
        if (got < 0) throw error(member + ": corrupt member (zip error " + std::to_string(got) + ")");
        return static_cast<std::size_t>(got);
    };
    const npy_header header = read_npy_header(source, info.uncompressed_size, member);
    if (header.text) {
        if (texts) (*texts)[key] = read_npy_text(header, source, member);
    } else {
        tensors[key] = read_npy_data(header, source, member);
    }
    if (unzCloseCurrentFile(z) == UNZ_CRCERROR) throw error(member + ": corrupt member (CRC mismatch)");
}

/// minizip's handles, closed on every path out.
struct unzip_handle {
    unzFile z;
    ~unzip_handle() { unzClose(z); }
};


}  // namespace

npz_member npz_member::tensor(std::string name, std::vector<std::size_t> shape, const float* data, bool boolean) {
    npz_member m;
    m.name = std::move(name);
    m.shape = std::move(shape);
    m.data = data;
    m.boolean = boolean;
    return m;
}

npz_member npz_member::text_member(std::string name, std::string utf8) {
    npz_member m;
    m.name = std::move(name);
    m.is_text = true;
    m.text = std::move(utf8);
    return m;
}

std::map<std::string, loaded_tensor> read_npz(const std::string& path, const std::string& what,
                                              std::map<std::string, std::string>* texts,
                                              const std::function<bool(const std::string&)>& wanted) {
    const std::uint64_t archive_bytes = file_size(path, what);  // also: "cannot open: ..."
    if (archive_bytes >= max_readable_bytes)
        throw error(what + ": .npz archives of 4 GiB or more cannot be read " + zip64_unsupported +
                    "; split the arrays over smaller archives");
    unzip_handle zip{unzOpen64(path.c_str())};
    if (!zip.z) throw not_a_zip(path, what);
    std::map<std::string, loaded_tensor> tensors;
    int status = unzGoToFirstFile(zip.z);
    for (; status == UNZ_OK; status = unzGoToNextFile(zip.z)) read_member(zip.z, what, archive_bytes, tensors, texts, wanted);
    if (status != UNZ_END_OF_LIST_OF_FILE) throw error(what + ": corrupt zip directory (minizip error " + std::to_string(status) + ")");
    return tensors;
}

npz_writer::npz_writer(const std::string& path, const std::string& what) : what_(what) {
    errno = 0;
    zip_ = zipOpen64(path.c_str(), APPEND_STATUS_CREATE);
    if (!zip_) throw error(what + ": cannot open " + path + " for writing: " + std::strerror(errno));
}

npz_writer::~npz_writer() {
    if (zip_) zipClose(static_cast<zipFile>(zip_), nullptr);
}

void npz_writer::put(const char* bytes, std::size_t size) {
    while (size > 0) {
        const unsigned n = static_cast<unsigned>(std::min<std::size_t>(size, max_zip_call_bytes));
        const int status = zipWriteInFileInZip(static_cast<zipFile>(zip_), bytes, n);
        if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
        bytes += n;
        size -= n;
    }
}

void npz_writer::open_member(const std::string& name, std::uint64_t bytes) {
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

void npz_writer::close_member() {
    const int status = zipCloseFileInZip(static_cast<zipFile>(zip_));
    if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
}

void npz_writer::begin_array(const std::string& name, const std::vector<std::size_t>& shape, bool boolean) {
    open_member(name, npy_size(shape, boolean));
    const std::string header = npy_header_bytes(shape, boolean);
    put(header.data(), header.size());
    boolean_ = boolean;
    remaining_ = 1;
    for (const std::size_t s : shape) remaining_ *= s;
}

void npz_writer::write(const float* values, std::size_t count) {
    if (count > remaining_) throw error(what_ + ": more elements than the array's shape holds");
    write_npy_elements(values, count, boolean_, [&](const char* bytes, std::size_t size) { put(bytes, size); });
    remaining_ -= count;
}

void npz_writer::end_array() {
    if (remaining_ != 0) throw error(what_ + ": an array ended before all its elements were written");
    close_member();
}

void npz_writer::text(const std::string& name, const std::string& utf8) {
    open_member(name, 0);
    write_npy_text(utf8, [&](const char* bytes, std::size_t size) { put(bytes, size); });
    close_member();
}

void npz_writer::close() {
    const int status = zipClose(static_cast<zipFile>(zip_), nullptr);
    zip_ = nullptr;
    if (status != ZIP_OK) throw error(what_ + ": writing failed (" + zip_reason(status) + ")");
}

void write_npz_here(const std::string& path, const std::string& what, const std::vector<npz_member>& members) {
    for (const npz_member& m : members) {
        std::size_t elements = 1;
        for (const std::size_t s : m.shape) elements *= s;
        if (!m.is_text && elements > 0 && m.data == nullptr) throw error(what + ": " + m.name + " has no data");
    }
    npz_writer zip(path, what);
    for (const npz_member& m : members) {
        if (m.is_text) {
            zip.text(m.name, m.text);
            continue;
        }
        std::size_t elements = 1;
        for (const std::size_t s : m.shape) elements *= s;
        zip.begin_array(m.name, m.shape, m.boolean);
        zip.write(m.data, elements);
        zip.end_array();
    }
    zip.close();
}

void write_npz(const std::string& path, const std::string& what, const std::vector<npz_member>& members) {
    write_file_atomically_at(path, what, [&](const std::string& temp) { write_npz_here(temp, what, members); });
}

}  // namespace attn
