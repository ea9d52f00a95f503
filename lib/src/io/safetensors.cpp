// .safetensors (safetensors.hpp): the header through nlohmann's SAX parser, so that a
// duplicate name is seen (a DOM keeps the last) and nothing deeper than an entry is
// ever built; every range checked against the file and the others before a byte of
// data is read; then only the wanted tensors, each read at its offset.
#include "attn/io/safetensors.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include "attn/compute/checked.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"
#include "attn/io/json_document.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

using json = nlohmann::json;

constexpr std::size_t st_max_axes = 64;           // no real tensor has more; bounds a header's shapes
constexpr std::size_t st_chunk_bytes = 1 << 20;   // converted F16/BF16/F64 at a time
constexpr bool st_little_endian_host = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
const char* const st_readable = "attn reads F32, F16, BF16 and F64";
const char* const st_entry_form = "{\"dtype\": \"F32\", \"shape\": [...], \"data_offsets\": [begin, end]}";

/// Copies up to `size` bytes at `offset` of the file into `buffer`; returns how many
/// there were (fewer only at the end).
using st_reader = std::function<std::size_t(std::uint64_t offset, char* buffer, std::size_t size)>;

/// The dtypes of the safetensors crate, by their size in bits (F4 and F6 pack below a byte).
struct st_dtype {
    const char* name;
    unsigned bits;
};
constexpr st_dtype st_dtypes[] = {
    {"BOOL", 8},     {"U8", 8},       {"I8", 8},          {"F8_E5M2", 8},     {"F8_E4M3", 8},
    {"F8_E8M0", 8},  {"I16", 16},     {"U16", 16},        {"F16", 16},        {"BF16", 16},
    {"I32", 32},     {"U32", 32},     {"F32", 32},        {"F64", 64},        {"I64", 64},
    {"U64", 64},     {"C64", 64},     {"F4", 4},          {"F6_E2M3", 6},     {"F6_E3M2", 6},
};

/// The bits per element of `dtype`, 0 for one the safetensors crate does not name.
unsigned st_dtype_bits(const std::string& dtype) {
    for (const st_dtype& d : st_dtypes)
        if (dtype == d.name) return d.bits;
    return 0;
}

bool st_readable_dtype(const std::string& dtype) {
    return dtype == "F32" || dtype == "F16" || dtype == "BF16" || dtype == "F64";
}

/// What a header says, checked.
using st_header = safetensors_header;

// ----------------------------------------------------------------------------
// the JSON header, event by event

/// The header's SAX handler: an object of entries {dtype, shape, data_offsets} and
/// at most one "__metadata__" object of strings. Throws attn::error at the first
/// value out of place, naming the entry and field.
class st_header_handler : public nlohmann::json_sax<json> {
public:
    explicit st_header_handler(const std::string& what) : what_(what) {}

    bool null() override { return primitive("null"); }
    bool boolean(bool value) override { return primitive(value ? "true" : "false"); }
    bool number_integer(number_integer_t value) override {
        if (value >= 0) return number(static_cast<std::uint64_t>(value), std::to_string(value));
        return primitive(std::to_string(value));
    }
    bool number_unsigned(number_unsigned_t value) override { return number(value, std::to_string(value)); }
    bool number_float(number_float_t, const string_t& text) override { return primitive(cut(text)); }
    bool string(string_t& value) override {
        if (level_ == in_entry && in_metadata_) {
            metadata_[field_] = value;
            return true;
        }
        if (level_ == in_entry && field_ == "dtype") {
            entry_.dtype = value;
            return true;
        }
        return primitive("\"" + cut(value) + "\"");
    }
    bool binary(binary_t&) override { return primitive("binary data"); }

    bool start_object(std::size_t) override {
        if (level_ == top) {
            level_ = in_header;
        } else if (level_ == in_header) {
            level_ = in_entry;
            in_metadata_ = name_ == "__metadata__";
            entry_ = safetensors_entry{name_, "", {}, 0, 0};
            fields_.clear();
        } else {
            misplaced("an object");
        }
        return true;
    }
    bool key(string_t& name) override {
        if (level_ == in_header) {
            if (!names_.insert(name).second)
                throw error(what_ + ": the tensor \"" + quoted_field(name) + "\" appears twice in the header");
            name_ = name;
        } else {  // in_entry
            if (!fields_.insert(name).second)
                throw error(where() + ": the key \"" + quoted_field(name) + "\" appears twice");
            if (!in_metadata_ && name != "dtype" && name != "shape" && name != "data_offsets")
                throw error(where() + ": unexpected key \"" + cut(name) + "\"; an entry is " + st_entry_form);
            field_ = name;
        }
        return true;
    }
    bool end_object() override {
        if (level_ == in_header) {
            level_ = done;
            return true;
        }
        level_ = in_header;
        if (in_metadata_) return true;
        for (const char* field : {"dtype", "shape", "data_offsets"})
            if (!fields_.count(field)) throw error(where() + ": no \"" + field + "\"; an entry is " + st_entry_form);
        entries_.push_back(entry_);
        return true;
    }
    bool start_array(std::size_t) override {
        if (level_ != in_entry || in_metadata_ || field_ == "dtype") misplaced("a list");
        level_ = in_list;
        numbers_.clear();
        return true;
    }
    bool end_array() override {
        level_ = in_entry;
        if (field_ == "shape") {
            entry_.shape.assign(numbers_.begin(), numbers_.end());
        } else {
            if (numbers_.size() != 2)
                throw error(where() + ": \"data_offsets\" holds " + std::to_string(numbers_.size()) +
                            " numbers; expected two, [begin, end]");
            entry_.begin = numbers_[0];
            entry_.end = numbers_[1];
        }
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& ex) override {
        throw error(what_ + ": the header is not valid JSON: " + printable_text(json_message(ex)));
    }

    st_header header() {
        st_header h;
        h.entries = std::move(entries_);
        h.metadata = std::move(metadata_);
        return h;
    }

private:
    enum level_t { top, in_header, in_entry, in_list, done };

    static std::string cut(const std::string& text) { return quoted_field(text, 40); }

    /// "<what>: <name>" of the entry being read.
    std::string where() const { return what_ + ": " + quoted_field(name_); }

    bool number(std::uint64_t value, const std::string& text) {
        if (level_ != in_list) return primitive(text);
        if (field_ == "shape" && numbers_.size() == st_max_axes)
            throw error(where() + ": \"shape\" has more than " + std::to_string(st_max_axes) + " axes");
        if (field_ == "data_offsets" && numbers_.size() == 2)
            throw error(where() + ": \"data_offsets\" holds more than two numbers; expected [begin, end]");
        numbers_.push_back(value);
        return true;
    }

    /// A value that is not where it may be: `found` describes it.
    bool primitive(const std::string& found) {
        misplaced(found);
        return false;
    }

    [[noreturn]] void misplaced(const std::string& found) const {
        switch (level_) {
            case top:
                throw error(what_ + ": the header is " + found + ", not a JSON object of tensors");
            case in_header:
                if (name_ == "__metadata__")
                    throw error(what_ + ": __metadata__ is " + found + ", not an object of strings");
                throw error(where() + ": the entry is " + found + ", not an object " + st_entry_form);
            case in_entry:
                if (in_metadata_)
                    throw error(what_ + ": __metadata__: \"" + cut(field_) + "\" is " + found +
                                ", not a string (the metadata maps strings to strings)");
                throw error(where() + ": \"" + field_ + "\" is " + found + "; expected " +
                            (field_ == "dtype" ? "a string such as \"F32\""
                                               : field_ == "shape" ? "a list of sizes [2, 3]" : "[begin, end]"));
            default:  // in_list
                throw error(where() + ": \"" + field_ + "\" holds " + found + "; expected whole numbers >= 0");
        }
    }

    const std::string& what_;
    level_t level_ = top;
    std::set<std::string> names_;   // the header's keys so far
    std::set<std::string> fields_;  // the current entry's keys so far
    std::string name_, field_;
    bool in_metadata_ = false;
    safetensors_entry entry_;
    std::vector<std::uint64_t> numbers_;
    std::vector<safetensors_entry> entries_;
    std::map<std::string, std::string> metadata_;
};

// ----------------------------------------------------------------------------
// the checks of what the header says against the file and itself

/// The elements of `shape`, or nullopt when their count overflows 64 bits.
std::optional<std::uint64_t> st_elements(const std::vector<std::size_t>& shape) {
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;  // empty, whatever the other sizes
    std::optional<std::uint64_t> n = 1;
    for (const std::size_t s : shape)
        if (!(n = checked_mul<std::uint64_t>(*n, s))) return std::nullopt;
    return n;
}

std::string st_range_text(const safetensors_entry& e) {
    return "[" + std::to_string(e.begin) + "," + std::to_string(e.end) + "]";
}

/// Each entry's range against its shape and the data; then the ranges against each
/// other: sorted, each must start where the previous ended and the last end the data.
void check_entries(const st_header& h, const std::string& what) {
    for (const safetensors_entry& e : h.entries) {
        const std::string where = what + ": " + quoted_field(e.name);
        if (e.begin > e.end)
            throw error(where + ": data_offsets " + st_range_text(e) + " begin after they end");
        if (e.end > h.data_bytes)
            throw error(where + ": data_offsets " + st_range_text(e) + " end past the " + std::to_string(h.data_bytes) +
                        " bytes of data after the header (a truncated file?)");
        const std::optional<std::uint64_t> elements = st_elements(e.shape);
        const unsigned bits = st_dtype_bits(e.dtype);
        const std::string holding = "shape " + tensor_index_text(e.shape) + " of " + quoted_field(e.dtype);
        if (!elements || (bits && *elements > std::numeric_limits<std::uint64_t>::max() / bits))
            throw error(where + ": " + holding + " needs more bytes than any file holds");
        if (!shape_fits(e.shape, sizeof(float)))  // read as float32; a zero size keeps the others' strides
            throw error(where + ": " + holding + " has more elements than any tensor holds");
        if (bits == 0) continue;  // a dtype the crate does not name: its size is unknown
        if (*elements * bits % 8 != 0)
            throw error(where + ": " + holding + " is " + std::to_string(*elements * bits) + " bits, not whole bytes");
        const std::uint64_t needed = *elements * bits / 8;
        if (e.end - e.begin != needed)
            throw error(where + ": " + holding + " needs " + std::to_string(needed) + " bytes; data_offsets " +
                        st_range_text(e) + " hold " + std::to_string(e.end - e.begin));
    }
    std::vector<const safetensors_entry*> order;
    for (const safetensors_entry& e : h.entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](const safetensors_entry* a, const safetensors_entry* b) {
        return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
    });
    std::uint64_t covered = 0;
    const safetensors_entry* previous = nullptr;
    for (const safetensors_entry* e : order) {
        if (e->begin < covered)
            throw error(what + ": " + quoted_field(previous->name) + " and " + quoted_field(e->name) +
                        " overlap: data_offsets " + st_range_text(*previous) + " and " + st_range_text(*e));
        if (e->begin > covered)
            throw error(what + ": bytes " + std::to_string(covered) + " to " + std::to_string(e->begin) +
                        " of the data belong to no tensor (the format allows no holes)");
        covered = e->end;
        previous = e;
    }
    if (covered != h.data_bytes)
        throw error(what + ": bytes " + std::to_string(covered) + " to " + std::to_string(h.data_bytes) +
                    " of the data belong to no tensor (the format allows no holes)");
}

/// Reads exactly `size` bytes at `offset`, or as many as there are; returns the count.
std::size_t st_read_fully(const st_reader& read, std::uint64_t offset, char* buffer, std::size_t size) {
    std::size_t got = 0;
    while (got < size) {
        const std::size_t n = read(offset + got, buffer + got, size - got);
        if (n == 0) break;
        got += n;
    }
    return got;
}

/// The header of the `size` bytes `read` gives, checked whole.
st_header read_st_header(const st_reader& read, std::uint64_t size, const std::string& what,
                         const read_budget* budget) {
    if (size == 0) throw error(what + ": empty file; expected a .safetensors file");
    unsigned char length_bytes[8];
    if (size < 8 || st_read_fully(read, 0, reinterpret_cast<char*>(length_bytes), 8) < 8)
        throw error(what + ": truncated: a .safetensors file starts with an 8-byte header size, found " +
                    std::to_string(size) + " bytes");
    std::uint64_t n = 0;
    for (int k = 7; k >= 0; --k) n = (n << 8) | length_bytes[k];
    if (n > max_safetensors_header_bytes)
        throw error(what + ": the header size " + std::to_string(n) + " is more than the 100000000 bytes the format " +
                    "allows (not a .safetensors file?)");
    if (n > size - 8)
        throw error(what + ": truncated: the header size is " + std::to_string(n) + " bytes, but " +
                    std::to_string(size - 8) + " follow it");
    if (budget) budget->check(parsed_json_bytes_per_byte * n, what, "its header of " + format_bytes(n) + ", parsed");
    std::string text(static_cast<std::size_t>(n), '\0');
    if (st_read_fully(read, 8, &text[0], text.size()) < text.size())
        throw error(what + ": truncated: the file ended inside its header");
    if (text.empty() || text[0] != '{')
        throw error(what + ": the header does not start with '{' (not a .safetensors file?)");
    st_header_handler handler(what);
    json::sax_parse(text, &handler);
    text = std::string();
    st_header h = handler.header();
    h.data_start = 8 + n;
    h.data_bytes = size - h.data_start;
    h.file_bytes = size;
    check_entries(h, what);
    return h;
}

/// The tensor of entry `e`, read at its offset and converted to float32.
loaded_tensor read_st_tensor(const safetensors_entry& e, const st_header& h, const st_reader& read,
                             const std::string& where, read_budget* budget) {
    if (!st_readable_dtype(e.dtype))
        throw error(where + ": dtype " + quoted_field(e.dtype) + "; " + st_readable);
    if (!st_little_endian_host) throw error(where + ": reading .safetensors needs a little-endian machine");
    const std::uint64_t elements = *st_elements(e.shape);  // checked: it fits the data
    const std::uint64_t float_bytes = elements > std::numeric_limits<std::uint64_t>::max() / 4 ? std::numeric_limits<std::uint64_t>::max() : 4 * elements;
    if (budget) budget->take(float_bytes, where, "shape " + tensor_index_text(e.shape) + " as float32");
    loaded_tensor out;
    out.shape = e.shape;
    out.values = xt::xarray<float>::from_shape(e.shape);
    float* dst = out.values.data();
    const std::uint64_t bytes = e.end - e.begin;
    const std::uint64_t at = h.data_start + e.begin;
    std::uint64_t got = 0;
    if (e.dtype == "F32") {  // straight into the tensor
        got = st_read_fully(read, at, reinterpret_cast<char*>(dst), static_cast<std::size_t>(bytes));
    } else {
        const std::size_t item = e.dtype == "F64" ? 8 : 2;
        std::vector<char> chunk(static_cast<std::size_t>(std::min<std::uint64_t>(st_chunk_bytes, bytes)));
        while (got < bytes) {
            const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), bytes - got));
            const std::size_t n = st_read_fully(read, at + got, chunk.data(), want);
            const char* src = chunk.data();
            float* to = dst + got / item;
            for (std::size_t k = 0; k < n / item; ++k) {
                if (item == 8) {
                    double d;
                    std::memcpy(&d, src + 8 * k, 8);
                    to[k] = to_float32(d);
                } else {
                    std::uint16_t b;
                    std::memcpy(&b, src + 2 * k, 2);
                    to[k] = e.dtype == "F16" ? half_to_float(b) : bfloat16_to_float(b);
                }
            }
            got += n;
            if (n < want) break;
        }
    }
    if (got < bytes)
        throw error(where + ": truncated: the file ended " + std::to_string(got) + " bytes into its " +
                    std::to_string(bytes) + " (did it shrink while read?)");
    count_non_finite(out);
    return out;
}

std::map<std::string, loaded_tensor> read_st_tensors_of(const st_header& h, const st_reader& read, const std::string& what,
                                                        const std::function<bool(const std::string&)>& wanted,
                                                        read_budget* budget);

std::map<std::string, loaded_tensor> read_st_tensors(const st_reader& read, std::uint64_t size, const std::string& what,
                                                     const std::function<bool(const std::string&)>& wanted,
                                                     read_budget* budget) {
    return read_st_tensors_of(read_st_header(read, size, what, budget), read, what, wanted, budget);
}

std::map<std::string, loaded_tensor> read_st_tensors_of(const st_header& h, const st_reader& read, const std::string& what,
                                                        const std::function<bool(const std::string&)>& wanted,
                                                        read_budget* budget) {
    std::map<std::string, loaded_tensor> tensors;
    for (const safetensors_entry& e : h.entries)
        if (!wanted || wanted(e.name))
            tensors[e.name] = read_st_tensor(e, h, read, what + ": " + quoted_field(e.name), budget);
    return tensors;
}

st_reader memory_reader(const void* bytes, std::size_t size) {
    const char* base = static_cast<const char*>(bytes);
    return [base, size](std::uint64_t offset, char* buffer, std::size_t n) -> std::size_t {
        if (offset >= size) return 0;
        n = static_cast<std::size_t>(std::min<std::uint64_t>(n, size - offset));
        std::memcpy(buffer, base + offset, n);
        return n;
    };
}

/// Rows `rows` of the tensor `name` of the file `h` is the header of.
loaded_tensor read_st_rows(const st_header& h, const st_reader& read, const std::string& what, const std::string& name,
                       const std::vector<std::int64_t>& rows, read_budget* budget) {
    const auto e = std::find_if(h.entries.begin(), h.entries.end(), [&](const safetensors_entry& x) { return x.name == name; });
    const std::string where = what + ": " + quoted_field(name);
    if (e == h.entries.end()) throw error(what + ": no tensor " + quoted_field(name));
    if (e->shape.empty()) throw error(where + ": a single number has no rows");
    const std::size_t count = e->shape[0];
    std::vector<std::size_t> row_shape = e->shape, shape = e->shape;
    row_shape[0] = 1;
    shape[0] = rows.size();
    const std::uint64_t row_bytes = count == 0 ? 0 : (e->end - e->begin) / count;  // checked: shape · itemsize
    const std::uint64_t row_size = *st_elements(row_shape);  // <= the tensor's, which fits the file
    std::uint64_t out_bytes = 0;
    if (__builtin_mul_overflow(row_size * 4, static_cast<std::uint64_t>(rows.size()), &out_bytes))
        out_bytes = std::numeric_limits<std::uint64_t>::max();
    if (budget) budget->take(out_bytes, where, tensor_index_text(shape) + " (its rows " + std::to_string(rows.size()) +
                                                   " times) as float32");
    if (budget) budget->check(row_size * 4, where, "one row as float32, while read");
    loaded_tensor out;
    out.shape = shape;
    out.values = xt::xarray<float>::from_shape(shape);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i] < 0 || static_cast<std::uint64_t>(rows[i]) >= count)
            throw error(where + ": no row " + std::to_string(rows[i]) + " (it has " + std::to_string(count) + ")");
        safetensors_entry row = *e;  // one row: a tensor [1, ...] of its own bytes
        row.shape = row_shape;
        row.begin = e->begin + static_cast<std::uint64_t>(rows[i]) * row_bytes;
        row.end = row.begin + row_bytes;
        const loaded_tensor one = read_st_tensor(row, h, read, where, nullptr);  // checked above
        std::copy(one.values.data(), one.values.data() + row_size, out.values.data() + i * row_size);
    }
    count_non_finite(out);
    return out;
}

/// A header read before (read_safetensors_header) is this file's still: the same size.
void check_unchanged(const st_header& h, std::uint64_t size, const std::string& what) {
    if (size != h.file_bytes)
        throw error(what + ": the file changed while it was read (" + std::to_string(h.file_bytes) + " bytes, now " +
                    std::to_string(size) + ")");
}

/// Calls `use(reader, size)` on the file at `path`: a regular file is read where it is
/// asked (pread), anything else read whole first, within `budget` and up to max_stream_bytes.
template <class Use>
auto with_st_file(const std::string& path, const std::string& what, const read_budget* budget, const Use& use) {
    const input_file file = open_input_file(path, what);
    const int fd = fileno(file.get());
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {  // a FIFO, a device: no size to trust, no seeking
        const std::string bytes = read_open_file(file.get(), what, budget);
        return use(memory_reader(bytes.data(), bytes.size()), static_cast<std::uint64_t>(bytes.size()));
    }
    const st_reader reader = [fd, &what](std::uint64_t offset, char* buffer, std::size_t n) -> std::size_t {
        for (;;) {
            const ssize_t got = ::pread(fd, buffer, std::min<std::size_t>(n, 1u << 30), static_cast<off_t>(offset));
            if (got >= 0) return static_cast<std::size_t>(got);
            if (errno != EINTR) throw error(what + ": cannot read: " + std::strerror(errno));
        }
    };
    return use(reader, static_cast<std::uint64_t>(info.st_size));
}

}  // namespace

std::vector<safetensors_entry> safetensors_index(const std::string& path, const std::string& what,
                                                 const read_budget* budget) {
    return with_st_file(path, what, budget, [&](const st_reader& read, std::uint64_t size) {
        return read_st_header(read, size, what, budget).entries;
    });
}

std::map<std::string, std::string> safetensors_metadata(const std::string& path, const std::string& what) {
    return with_st_file(path, what, nullptr, [&](const st_reader& read, std::uint64_t size) {
        return read_st_header(read, size, what, nullptr).metadata;
    });
}

std::map<std::string, loaded_tensor> read_safetensors(const std::string& path, const std::string& what,
                                                      const std::function<bool(const std::string&)>& wanted,
                                                      read_budget* budget) {
    return with_st_file(path, what, budget, [&](const st_reader& read, std::uint64_t size) {
        return read_st_tensors(read, size, what, wanted, budget);
    });
}

loaded_tensor read_safetensors_rows(const std::string& path, const std::string& what, const std::string& name,
                                    const std::vector<std::int64_t>& rows, read_budget* budget) {
    return with_st_file(path, what, budget, [&](const st_reader& read, std::uint64_t size) {
        return read_st_rows(read_st_header(read, size, what, budget), read, what, name, rows, budget);
    });
}

loaded_tensor read_safetensors_rows(const std::string& path, const std::string& what, const safetensors_header& h,
                                    const std::string& name, const std::vector<std::int64_t>& rows, read_budget* budget) {
    return with_st_file(path, what, budget, [&](const st_reader& read, std::uint64_t size) {
        check_unchanged(h, size, what);
        return read_st_rows(h, read, what, name, rows, budget);
    });
}

std::map<std::string, loaded_tensor> read_safetensors(const std::string& path, const std::string& what,
                                                      const safetensors_header& h,
                                                      const std::function<bool(const std::string&)>& wanted,
                                                      read_budget* budget) {
    return with_st_file(path, what, budget, [&](const st_reader& read, std::uint64_t size) {
        check_unchanged(h, size, what);
        return read_st_tensors_of(h, read, what, wanted, budget);
    });
}

safetensors_header read_safetensors_header(const std::string& path, const std::string& what, const read_budget* budget) {
    return with_st_file(path, what, budget, [&](const st_reader& read, std::uint64_t size) {
        return read_st_header(read, size, what, budget);
    });
}


std::vector<safetensors_entry> parse_safetensors_index(const void* bytes, std::size_t size, const std::string& what,
                                                       const read_budget* budget) {
    return read_st_header(memory_reader(bytes, size), size, what, budget).entries;
}

std::map<std::string, loaded_tensor> parse_safetensors(const void* bytes, std::size_t size, const std::string& what,
                                                       const std::function<bool(const std::string&)>& wanted,
                                                       read_budget* budget) {
    return read_st_tensors(memory_reader(bytes, size), size, what, wanted, budget);
}

}  // namespace attn
