#include "attn/io/npz.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <sys/stat.h>

#include <unzip.h>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

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
    struct stat info;
    if (fstat(fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode))
        throw error(what + ": not a regular file; an .npz is read by seeking in it (copy it to a file first)");
    return static_cast<std::uint64_t>(info.st_size);
}

/// An .npz opened with minizip (closed on every path out), once its size is known readable.
struct npz_archive {
    npz_archive(const std::string& path, const std::string& what) : bytes(file_size(path, what)) {
        if (bytes >= max_readable_bytes)
            throw error(what + ": .npz archives of 4 GiB or more cannot be read " + zip64_unsupported +
                        "; split the arrays over smaller archives");
        z = unzOpen64(path.c_str());
        if (!z) throw not_a_zip(path, what);
    }
    ~npz_archive() { unzClose(z); }

    /// Calls visit(info, name) for each member, in the zip directory's order.
    template <class Visit>
    void for_each_member(const std::string& what, const Visit& visit) {
        int status = unzGoToFirstFile(z);
        for (; status == UNZ_OK; status = unzGoToNextFile(z)) {
            unz_file_info64 info;
            if (unzGetCurrentFileInfo64(z, &info, nullptr, 0, nullptr, 0, nullptr, 0) != UNZ_OK)
                throw error(what + ": corrupt zip directory");
            std::string name(info.size_filename, '\0');
            if (unzGetCurrentFileInfo64(z, &info, &name[0], name.size(), nullptr, 0, nullptr, 0) != UNZ_OK)
                throw error(what + ": corrupt zip directory");
            visit(info, name);
        }
        if (status != UNZ_END_OF_LIST_OF_FILE)
            throw error(what + ": corrupt zip directory (minizip error " + std::to_string(status) + ")");
    }

    std::uint64_t bytes;
    unzFile z;
};

/// The bytes of the member unzip has open, named `member` in errors.
byte_source member_source(unzFile z, const std::string& member) {
    return [z, member](char* buffer, std::size_t size) -> std::size_t {
        const int got = unzReadCurrentFile(z, buffer, static_cast<unsigned>(std::min<std::size_t>(size, max_zip_call_bytes)));
        if (got < 0) throw error(member + ": corrupt member (zip error " + std::to_string(got) + ")");
        return static_cast<std::size_t>(got);
    };
}

/// Checks what the zip directory says of the member unzip is positioned on, opens it and
/// reads its .npy header: only the header's bytes are inflated.
npy_header open_member(unzFile z, const unz_file_info64& info, const std::string& member, const std::string& what,
                       std::uint64_t archive_bytes, const byte_source& source) {
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
    const npy_header header = read_npy_header(source, info.uncompressed_size, member);
    if (header.array_bytes != header.data_bytes)
        throw error(member + ": corrupt member: the zip directory says its data is " + std::to_string(header.data_bytes) +
                    " bytes, its .npy header's shape " + tensor_index_text(header.shape) + " needs " +
                    std::to_string(header.array_bytes));
    return header;
}

/// Reads the member unzip is positioned on, `key`.npy, into `tensors` or `texts`.
void read_member(unzFile z, const unz_file_info64& info, const std::string& key, const std::string& what,
                 std::uint64_t archive_bytes, std::map<std::string, loaded_tensor>& tensors,
                 std::map<std::string, std::string>* texts, read_budget* budget) {
    const std::string member = what + ": " + quoted_field(key);
    if (tensors.count(key) || (texts && texts->count(key))) throw error(member + ": the member appears twice");
    const byte_source source = member_source(z, member);
    const npy_header header = open_member(z, info, member, what, archive_bytes, source);
    if (header.text && !texts) return unzCloseCurrentFile(z), void();  // not read: its CRC is not checked either
    if (header.text) (*texts)[key] = read_npy_text(header, source, member, budget);  // a text member too
    else tensors[key] = read_npy_data(header, source, member, budget);  // takes its bytes before inflating
    char extra;
    if (source(&extra, 1) != 0)
        throw error(member + ": corrupt member: it inflates to more than the " + std::to_string(info.uncompressed_size) +
                    " bytes the zip directory says");
    if (unzCloseCurrentFile(z) == UNZ_CRCERROR) throw error(member + ": corrupt member (CRC mismatch)");
}

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

std::vector<std::string> npz_array_names(const std::string& path, const std::string& what) {
    npz_archive zip(path, what);
    std::vector<std::string> names;
    zip.for_each_member(what, [&](const unz_file_info64&, const std::string& name) {
        if (ends_with(name, ".npy")) names.push_back(name.substr(0, name.size() - 4));
    });
    return names;
}

std::vector<std::pair<std::string, std::vector<std::size_t>>> npz_array_shapes(const std::string& path,
                                                                              const std::string& what) {
    npz_archive zip(path, what);
    std::vector<std::pair<std::string, std::vector<std::size_t>>> shapes;
    zip.for_each_member(what, [&](const unz_file_info64& info, const std::string& name) {
        if (!ends_with(name, ".npy")) return;
        const std::string key = name.substr(0, name.size() - 4);
        const std::string member = what + ": " + quoted_field(key);
        const npy_header header = open_member(zip.z, info, member, what, zip.bytes, member_source(zip.z, member));
        unzCloseCurrentFile(zip.z);  // the data is not read: its CRC is checked when it is
        shapes.emplace_back(key, header.shape);
    });
    return shapes;
}

std::map<std::string, loaded_tensor> read_npz(const std::string& path, const std::string& what,
                                              std::map<std::string, std::string>* texts,
                                              const std::function<bool(const std::string&)>& wanted,
                                              read_budget* budget) {
    npz_archive zip(path, what);
    std::map<std::string, loaded_tensor> tensors;
    zip.for_each_member(what, [&](const unz_file_info64& info, const std::string& name) {
        if (!ends_with(name, ".npy")) return;  // np.load gives such members as raw bytes
        const std::string key = name.substr(0, name.size() - 4);
        if (!wanted || wanted(key)) read_member(zip.z, info, key, what, zip.bytes, tensors, texts, budget);
    });
    return tensors;
}

}  // namespace attn
