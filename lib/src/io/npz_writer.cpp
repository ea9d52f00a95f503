#include "attn/io/npz_writer.hpp"

#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

#include <libdeflate.h>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/output_file.hpp"

namespace attn {
namespace {

// The zip format's numbers (PKWARE APPNOTE.TXT, sections 4.3 and 4.5).
constexpr std::uint32_t local_header_signature = 0x04034b50;
constexpr std::uint32_t central_header_signature = 0x02014b50;
constexpr std::uint32_t end_signature = 0x06054b50;
constexpr std::uint32_t zip64_end_signature = 0x06064b50;
constexpr std::uint32_t zip64_locator_signature = 0x07064b50;
constexpr std::uint32_t data_descriptor_signature = 0x08074b50;
constexpr std::uint16_t data_descriptor_flag = 1u << 3;
constexpr std::uint16_t zip64_extra_id = 0x0001;
constexpr std::uint16_t version_plain = 20, version_zip64 = 45;
constexpr std::uint16_t utf8_names = 1u << 11;
constexpr std::uint16_t dos_date_1980_01_01 = (0 << 9) | (1 << 5) | 1;  // the first DOS date: no clock in the file
constexpr std::uint32_t max32 = 0xffffffffu;
constexpr std::uint16_t max16 = 0xffffu;
constexpr std::size_t cache_piece_bytes = 256 * 1024;  // CRC'd then written: fits in L2

void le(std::string& b, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) b.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}
void u16(std::string& b, std::uint64_t v) { le(b, v, 2); }
void u32(std::string& b, std::uint64_t v) { le(b, v, 4); }
void u64(std::string& b, std::uint64_t v) { le(b, v, 8); }

std::uint16_t name_flags(const std::string& name) {
    return std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })
               ? utf8_names
               : 0;
}

/// An array's data descriptor: 8-byte sizes when the local header has a zip64 extra.
std::string data_descriptor(std::uint32_t crc, std::uint64_t size) {
    std::string d;
    u32(d, data_descriptor_signature);
    u32(d, crc);
    le(d, size, size >= max32 ? 8 : 4);  // compressed
    le(d, size, size >= max32 ? 8 : 4);  // uncompressed
    return d;
}

std::uint64_t member_bytes(const npz_member& m) {
    if (!m.is_text) return npy_size(m.shape, m.boolean);
    std::uint64_t n = 0;
    write_npy_text(m.text, [&](const char*, std::size_t size) { n += size; });
    return n;
}

void write_member(const npz_member& m, const byte_sink& sink) {
    if (m.is_text) write_npy_text(m.text, sink);
    else write_npy(m.data, m.shape, m.boolean, sink);
}

}  // namespace

npz_writer::npz_writer(std::ostream& out, std::string what) : out_(out), what_(std::move(what)) {}

void npz_writer::put(const std::string& bytes) {
    out_.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    written_ += bytes.size();
}

void npz_writer::check(const npz_member& m) const {
    if (m.name.empty()) throw error(what_ + ": an .npz member needs a name");
    if (names_.count(m.name)) throw error(what_ + ": two .npz members are named " + m.name);
    const bool empty = std::find(m.shape.begin(), m.shape.end(), 0) != m.shape.end();
    if (!m.is_text && !empty && m.data == nullptr) throw error(what_ + ": " + m.name + " has no data");
}

void npz_writer::claim(const std::string& name) {
    if (is_open_) throw error(what_ + ": " + name + " added while " + open_.name + " is still being written");
    if (name.empty()) throw error(what_ + ": an .npz member needs a name");
    if (!names_.insert(name).second) throw error(what_ + ": two .npz members are named " + name);
}

/// The fields a local and a central header share, from "version needed" to the sizes.
void npz_writer::put_shared_fields(std::string& h, const entry& e, bool zip64, std::uint64_t size32) {
    u16(h, zip64 ? version_zip64 : version_plain);
    u16(h, name_flags(e.name) | (e.descriptor ? data_descriptor_flag : 0));
    u16(h, 0);  // stored, as np.savez
    u16(h, 0);  // 00:00
    u16(h, dos_date_1980_01_01);
    u32(h, e.crc);
    u32(h, size32);  // compressed
    u32(h, size32);  // uncompressed
    u16(h, e.name.size());
}

/// The local header: complete, or (e.descriptor) with CRC and sizes left for the data
/// descriptor, as zipfile writes them: zero, or 0xffffffff with a zip64 extra of zeros.
void npz_writer::put_local_header(const entry& e) {
    const bool zip64 = e.size >= max32;
    const std::uint64_t size = e.descriptor ? 0 : e.size;
    std::string h;
    u32(h, local_header_signature);
    put_shared_fields(h, e, zip64, zip64 ? max32 : size);
    u16(h, zip64 ? 20 : 0);  // the extra field's bytes: the zip64 extra below
    h += e.name;
    if (zip64) {
        u16(h, zip64_extra_id);
        u16(h, 16);
        u64(h, size);
        u64(h, size);
    }
    put(h);
}

void npz_writer::add(const npz_member& m) {
    check(m);
    claim(m.name);
    entry e;
    e.name = m.name + ".npy";
    e.offset = written_;
    e.size = member_bytes(m);
    std::uint32_t crc = 0;  // a first pass over the bytes, so the header is whole
    write_member(m, [&](const char* bytes, std::size_t size) { crc = libdeflate_crc32(crc, bytes, size); });
    e.crc = crc;
    put_local_header(e);
    std::uint64_t sent = 0;
    write_member(m, [&](const char* bytes, std::size_t size) {
        out_.write(bytes, static_cast<std::streamsize>(size));
        sent += size;
    });
    if (sent != e.size) throw error(what_ + ": " + m.name + ": wrote " + std::to_string(sent) + " bytes of " +
                                    std::to_string(e.size));
    written_ += sent;
    entries_.push_back(std::move(e));
}

void npz_writer::begin_array(const std::string& name, const std::vector<std::size_t>& shape, bool boolean) {
    claim(name);
    open_ = entry{};
    open_.name = name + ".npy";
    open_.offset = written_;
    open_.size = npy_size(shape, boolean);
    open_.descriptor = true;
    const std::string header = npy_header_bytes(shape, boolean);
    put_local_header(open_);
    open_.crc = libdeflate_crc32(0, header.data(), header.size());
    put(header);
    open_boolean_ = boolean;
    open_remaining_ = std::accumulate(shape.begin(), shape.end(), std::uint64_t{1}, std::multiplies<>());
    is_open_ = true;
}

void npz_writer::check_write(std::size_t count) const {
    if (!is_open_) throw error(what_ + ": elements written with no array open");
    if (count > open_remaining_) throw error(what_ + ": more elements than the array's shape holds");
}

void npz_writer::write(const float* values, std::size_t count) {
    check_write(count);
    write_npy_elements(values, count, open_boolean_, [&](const char* bytes, std::size_t size) {
        for (std::size_t done = 0; done < size;) {  // each piece CRC'd, then written while still in cache
            const std::size_t n = std::min(size - done, cache_piece_bytes);
            open_.crc = libdeflate_crc32(open_.crc, bytes + done, n);
            out_.write(bytes + done, static_cast<std::streamsize>(n));
            done += n;
        }
        written_ += size;
    });
    open_remaining_ -= count;
}

void npz_writer::end_array() {
    if (!is_open_ || open_remaining_ != 0)
        throw error(what_ + ": an array ended before all its elements were written");
    put(data_descriptor(open_.crc, open_.size));
    entries_.push_back(std::move(open_));
    is_open_ = false;
}

void npz_writer::finish() {
    if (is_open_) throw error(what_ + ": the archive ended while " + open_.name + " was still being written");
    const std::uint64_t directory_at = written_;
    std::string d;
    for (const entry& e : entries_) {
        const bool big = e.size >= max32, far = e.offset >= max32;
        std::string extra;
        if (big) {
            u64(extra, e.size);  // uncompressed, then compressed
            u64(extra, e.size);
        }
        if (far) u64(extra, e.offset);
        u32(d, central_header_signature);
        u16(d, (big || far) ? version_zip64 : version_plain);  // made by: MS-DOS attributes, as minizip
        put_shared_fields(d, e, big || far, big ? max32 : e.size);
        u16(d, extra.empty() ? 0 : extra.size() + 4);
        u16(d, 0);  // no comment
        u16(d, 0);  // disk 0
        u16(d, 0);  // internal attributes
        u32(d, 0);  // external attributes
        u32(d, far ? max32 : e.offset);
        d += e.name;
        if (!extra.empty()) {
            u16(d, zip64_extra_id);
            u16(d, extra.size());
            d += extra;
        }
    }
    const std::uint64_t directory_bytes = d.size();
    const std::uint64_t count = entries_.size();
    const bool zip64 = count >= max16 || directory_bytes >= max32 || directory_at >= max32;
    if (zip64) {
        const std::uint64_t record_at = directory_at + directory_bytes;
        u32(d, zip64_end_signature);
        u64(d, 44);  // the record's size after this field
        u16(d, version_zip64);
        u16(d, version_zip64);
        u32(d, 0);
        u32(d, 0);
        u64(d, count);
        u64(d, count);
        u64(d, directory_bytes);
        u64(d, directory_at);
        u32(d, zip64_locator_signature);
        u32(d, 0);
        u64(d, record_at);
        u32(d, 1);
    }
    u32(d, end_signature);
    u16(d, 0);
    u16(d, 0);
    u16(d, zip64 ? max16 : count);
    u16(d, zip64 ? max16 : count);
    u32(d, zip64 ? max32 : directory_bytes);
    u32(d, zip64 ? max32 : directory_at);
    u16(d, 0);  // no comment
    put(d);
    out_.flush();
}

void write_npz(std::ostream& out, const std::string& what, const std::vector<npz_member>& members) {
    npz_writer writer(out, what);
    std::set<std::string> names;  // every member checked before a byte is written
    for (const npz_member& m : members) {
        writer.check(m);
        if (!names.insert(m.name).second) throw error(what + ": two .npz members are named " + m.name);
    }
    for (const npz_member& m : members) writer.add(m);
    writer.finish();
}

void write_npz(const std::string& path, const std::string& what, const std::vector<npz_member>& members) {
    output_file file(path, what);
    write_npz(file.stream(), what, members);
    file.commit();
}

}  // namespace attn
