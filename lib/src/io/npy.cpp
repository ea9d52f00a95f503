#include "attn/io/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <functional>
#include <numeric>

#include <sys/stat.h>

#include "attn/compute/error.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

constexpr char magic[] = "\x93NUMPY";
constexpr std::size_t magic_size = 6;
constexpr std::size_t max_header_bytes = 1 << 20;  // NumPy's own headers are < 1 KiB
constexpr std::size_t chunk_bytes = 1 << 20;
constexpr int growth_axis_max_digits = 21;          // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS
constexpr int max_nesting = 64;                      // brackets in a header; NumPy's own nest 2 deep
constexpr std::uint64_t max_stride_bytes = std::numeric_limits<std::int64_t>::max();
constexpr bool little_endian_host = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;

static_assert(std::numeric_limits<float>::is_iec559, "attn stores float32 as IEEE 754");

// ----------------------------------------------------------------------------
// the header dict: a Python literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }

struct py_value {
    enum kind_t { string, integer, boolean, none, sequence, dict } kind = none;
    std::string text;                                  // string
    long long number = 0;                              // integer
    bool flag = false;                                 // boolean
    std::vector<py_value> items;                       // sequence (tuple or list)
    std::vector<std::pair<std::string, py_value>> entries;  // dict
    bool list = false;                                 // sequence written with [ ]
};

class literal_parser {
public:
    literal_parser(const std::string& text, const std::string& what) : s_(text), what_(what) {}

    py_value parse_all() {
        py_value v = value();
        skip_space();
        if (i_ != s_.size()) fail("unexpected text after the dict");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& why) const {
        throw error(what_ + ": malformed .npy header: " + printable_text(why) + " (header: " + excerpt() + ")");
    }

    std::string excerpt() const {
        std::string e = s_;
        while (!e.empty() && (e.back() == ' ' || e.back() == '\n')) e.pop_back();
        for (char& c : e)
            if (static_cast<unsigned char>(c) < 0x20) c = ' ';
        return quoted_field(e, 80);
    }

    void skip_space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }

    /// Skips spaces, then the character `c` if it is next; true if it was.
    bool take(char c) {
        skip_space();
        if (i_ == s_.size() || s_[i_] != c) return false;
        ++i_;
        return true;
    }

    /// One value; dicts and sequences recurse, at most max_nesting deep, so that a
    /// header of 30,000 '(' is an error, not a stack overflow.
    py_value value() {
        skip_space();
        if (i_ >= s_.size()) fail("it ends early");
        const char c = s_[i_];
        if (c == '\'' || c == '"') return string_value();
        if (c == '-' || (c >= '0' && c <= '9')) return integer_value();
        if (c != '{' && c != '(' && c != '[') return word_value();
        if (depth_ == max_nesting) fail("more than " + std::to_string(max_nesting) + " nested brackets");
        ++i_;
        ++depth_;
        py_value v = c == '{' ? dict_value() : sequence_value(c == '(' ? ')' : ']');
        --depth_;
        return v;
    }

    py_value dict_value() {
        py_value v;
        v.kind = py_value::dict;
        if (take('}')) return v;
        for (;;) {
            py_value key = value();
            if (key.kind != py_value::string) fail("a dict key is not a string");
            if (!take(':')) fail("expected ':' after '" + key.text + "'");
            v.entries.emplace_back(key.text, value());
            const bool comma = take(',');
            if (take('}')) return v;
            if (!comma) fail("expected ',' or '}' after the value of '" + key.text + "'");
        }
    }

    py_value sequence_value(char close) {
        py_value v;
        v.kind = py_value::sequence;
        v.list = close == ']';
        if (take(close)) return v;
        for (;;) {
            v.items.push_back(value());
            const bool comma = take(',');
            if (take(close)) return v;
            if (!comma) fail(std::string("expected ',' or '") + close + "' in a " + (v.list ? "list" : "tuple"));
        }
    }

    py_value string_value() {
        py_value v;
        v.kind = py_value::string;
        const char quote = s_[i_++];
        while (i_ < s_.size() && s_[i_] != quote) {
            if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;
            v.text += s_[i_++];
        }
        if (i_ >= s_.size()) fail("a string has no closing quote");
        ++i_;
        return v;
    }

    py_value integer_value() {
        py_value v;
        v.kind = py_value::integer;
        const std::size_t start = i_;
        if (s_[i_] == '-') ++i_;
        const std::size_t digits = i_;
        while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
        if (i_ == digits) fail("'-' is not followed by digits");
        errno = 0;
        v.number = std::strtoll(s_.c_str() + start, nullptr, 10);
        if (errno == ERANGE) fail("the number " + s_.substr(start, i_ - start) + " is too large");
        if (i_ < s_.size() && (s_[i_] == 'L' || s_[i_] == 'l')) ++i_;  // Python 2's long: (2L, 3L)
        return v;
    }

    py_value word_value() {
        const std::size_t start = i_;
        while (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_]))) ++i_;
        const std::string word = s_.substr(start, i_ - start);
        py_value v;
        if (word == "True" || word == "False") {
            v.kind = py_value::boolean;
            v.flag = word == "True";
        } else if (word != "None") {
            fail(word.empty() ? std::string("unexpected '") + s_[start] + "'" : "unexpected '" + word + "'");
        }
        return v;
    }

    const std::string& s_;
    const std::string& what_;
    std::size_t i_ = 0;
    int depth_ = 0;  // brackets open around i_
};

// ----------------------------------------------------------------------------
// dtypes

struct dtype {
    char kind = 0;      // 'f' float, 'i' signed, 'u' unsigned, 'b' bool, 'U' unicode
    std::size_t size = 0;
    bool supported = false;
    std::string name;   // float32, int64, ...
};

const char* const expected_dtypes = "expected little-endian float16, float32, float64, bool or integers";

/// Parses a descr such as "<f4"; throws for the dtypes attn cannot read.
dtype parse_descr(const std::string& descr, const std::string& what) {
    const auto unsupported = [&](const std::string& why) {
        return error(what + ": unsupported dtype '" + quoted_field(descr) + "'" + (why.empty() ? "" : " (" + why + ")") + "; " +
                     expected_dtypes);
    };
    std::size_t i = 0;
    char order = '=';
    if (!descr.empty() && std::strchr("<>|=", descr[0])) order = descr[i++];
    if (i >= descr.size()) throw unsupported("");
    dtype t;
    t.kind = descr[i++];
    const std::size_t digits = i;
    while (i < descr.size() && descr[i] >= '0' && descr[i] <= '9' && i - digits < 9)
        t.size = t.size * 10 + (descr[i++] - '0');
    if (i != descr.size() || digits == i) {
        if (t.kind == 'O') throw unsupported("Python objects");
        if (t.kind == 'M' || t.kind == 'm') throw unsupported(t.kind == 'M' ? "datetime64" : "timedelta64");
        throw unsupported("");
    }
    switch (t.kind) {
        case 'f':
            t.supported = t.size == 2 || t.size == 4 || t.size == 8;
            t.name = "float" + std::to_string(8 * t.size);
            break;
        case 'i':
        case 'u':
            t.supported = t.size == 1 || t.size == 2 || t.size == 4 || t.size == 8;
            t.name = std::string(t.kind == 'u' ? "uint" : "int") + std::to_string(8 * t.size);
            break;
        case 'b':
            t.supported = t.size == 1;
            t.name = "bool";
            break;
        case 'c': throw unsupported("complex" + std::to_string(8 * t.size));
        case 'U':
            t.supported = true;
            t.size *= 4;
            t.name = "str";
            break;
        case 'S': throw unsupported("byte strings");
        case 'V': throw unsupported("raw or structured data");
        default: break;
    }
    if (!t.supported) throw unsupported(t.name);
    if (order == '>' && t.size > 1) throw unsupported("big-endian");
    if (order == '|' && t.size > 1 && t.kind != 'U') throw unsupported("");
    return t;
}

// ----------------------------------------------------------------------------
// conversion to float32

template <typename T>
T load(const char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <typename T>
void convert_integers(const char* src, std::size_t count, float* dst) {
    for (std::size_t e = 0; e < count; ++e) dst[e] = static_cast<float>(load<T>(src + e * sizeof(T)));
}

/// `count` elements of type `t` at `src` (any alignment) -> float32 at `dst`.
void convert(const dtype& t, const char* src, std::size_t count, float* dst) {
    switch (t.kind) {
        case 'f':
            if (t.size == 4) std::memcpy(dst, src, count * 4);
            else if (t.size == 8)
                for (std::size_t e = 0; e < count; ++e) dst[e] = to_float32(load<double>(src + 8 * e));
            else
                for (std::size_t e = 0; e < count; ++e) dst[e] = half_to_float(load<std::uint16_t>(src + 2 * e));
            return;
        case 'b':
            for (std::size_t e = 0; e < count; ++e) dst[e] = src[e] != 0 ? 1.0f : 0.0f;
            return;
        case 'i':
            if (t.size == 1) convert_integers<std::int8_t>(src, count, dst);
            else if (t.size == 2) convert_integers<std::int16_t>(src, count, dst);
            else if (t.size == 4) convert_integers<std::int32_t>(src, count, dst);
            else convert_integers<std::int64_t>(src, count, dst);
            return;
        default:  // 'u'
            if (t.size == 1) convert_integers<std::uint8_t>(src, count, dst);
            else if (t.size == 2) convert_integers<std::uint16_t>(src, count, dst);
            else if (t.size == 4) convert_integers<std::uint32_t>(src, count, dst);
            else convert_integers<std::uint64_t>(src, count, dst);
            return;
    }
}

/// Reads exactly `size` bytes, or as many as the source has; returns the count.
std::size_t read_fully(const byte_source& source, char* buffer, std::size_t size) {
    std::size_t got = 0;
    while (got < size) {
        const std::size_t n = source(buffer + got, size - got);
        if (n == 0) break;
        got += n;
    }
    return got;
}

std::string truncated_data(const npy_header& h, const dtype& t, std::uint64_t found, const std::string& what) {
    const std::uint64_t needed = static_cast<std::uint64_t>(h.elements) * t.size;
    return what + ": truncated: shape " + tensor_index_text(h.shape) + " of " + t.name + " needs " +
           std::to_string(needed) + " bytes of data after the header, found " + std::to_string(found);
}

/// The bytes of `file` from where it stands; a failed read is "<what>: cannot read: <reason>".
byte_source file_source(std::FILE* file, const std::string& what) {
    return [file, &what](char* buffer, std::size_t n) {
        const std::size_t got = std::fread(buffer, 1, n, file);
        if (got < n && std::ferror(file)) throw error(what + ": cannot read: " + std::strerror(errno));
        return got;
    };
}

std::uint32_t little_u32(const unsigned char* p) {
    return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

// ----------------------------------------------------------------------------
// writing

/// numpy.lib.format._write_array_header for version 1.0 (NumPy 1.24).
std::string header_bytes(const std::string& descr, const std::vector<std::size_t>& shape) {
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + python_tuple(shape) + ", }";
    if (!shape.empty()) dict.append(growth_axis_max_digits - std::to_string(shape[0]).size(), ' ');
    const std::size_t length = dict.size() + 1;  // + '\n'
    const std::size_t padding = 64 - (magic_size + 4 + length) % 64;
    dict.append(padding, ' ');
    dict += '\n';
    std::string out(magic, magic_size);
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>(dict.size() >> 8);
    return out + dict;
}

std::size_t element_count(const std::vector<std::size_t>& shape) {
    return std::accumulate(shape.begin(), shape.end(), std::size_t{1}, std::multiplies<>());
}

/// UTF-8 -> code points; an invalid byte becomes U+FFFD.
std::vector<std::uint32_t> code_points(const std::string& utf8) {
    std::vector<std::uint32_t> out;
    for (std::size_t i = 0; i < utf8.size();) {
        const auto b = static_cast<unsigned char>(utf8[i]);
        const int extra = b < 0x80 ? 0 : (b >> 5) == 6 ? 1 : (b >> 4) == 14 ? 2 : (b >> 3) == 30 ? 3 : -1;
        std::uint32_t c = extra == 0 ? b : extra == 1 ? b & 0x1f : extra == 2 ? b & 0x0f : b & 0x07;
        bool valid = extra >= 0 && i + extra < utf8.size() + (extra == 0);
        for (int k = 1; valid && k <= extra; ++k) {
            const auto next = static_cast<unsigned char>(utf8[i + k]);
            valid = (next & 0xc0) == 0x80;
            c = (c << 6) | (next & 0x3f);
        }
        out.push_back(valid ? c : 0xfffd);
        i += valid ? extra + 1 : 1;
    }
    return out;
}

void append_utf8(std::string& out, std::uint32_t c) {
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xc0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xe0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (c & 0x3f));
    } else {
        if (c > 0x10ffff) c = 0xfffd;
        out += static_cast<char>(0xf0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (c & 0x3f));
    }
}

}  // namespace

// ----------------------------------------------------------------------------
// reading

npy_header read_npy_header(const byte_source& source, std::uint64_t size, const std::string& what) {
    const auto fail = [&](const std::string& why) { return error(what + ": " + why); };
    const auto malformed = [&](const std::string& why) { return fail("malformed .npy header: " + why); };
    const auto ends_early = [&] { return fail("truncated: the file ends inside the .npy header"); };
    unsigned char start[12];
    std::size_t got = read_fully(source, reinterpret_cast<char*>(start), size < 8 ? size : 8);
    if (got == 0) throw fail("empty file; expected a NumPy .npy file");
    if (got >= 4 && std::memcmp(start, "PK\x03\x04", 4) == 0)  // torch.save's zip of pickles
        throw fail("not a NumPy .npy file but a zip archive, as torch.save writes; "
                   "save with np.save(path, t.numpy())");
    if (got < magic_size || std::memcmp(start, magic, magic_size) != 0)
        throw fail("not a NumPy .npy file (it does not start with \\x93NUMPY)");
    if (got < 8) throw ends_early();
    const int major = start[6], minor = start[7];
    if (major < 1 || major > 3 || minor != 0)
        throw fail("unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                   " (expected 1.0, 2.0 or 3.0)");
    const std::size_t prefix = major == 1 ? 10 : 12;
    if (size < prefix || (got += read_fully(source, reinterpret_cast<char*>(start) + 8, prefix - 8)) < prefix)
        throw ends_early();
    const std::uint64_t length = major == 1 ? static_cast<std::uint64_t>(start[8] | (start[9] << 8)) : little_u32(start + 8);
    if (prefix + length > size)
        throw fail("truncated: the .npy header needs " + std::to_string(prefix + length) + " bytes, the file has " +
                   std::to_string(size));
    if (length > max_header_bytes) throw malformed("it claims " + std::to_string(length) + " bytes");

    std::string text(length, '\0');
    if (read_fully(source, &text[0], length) != length) throw ends_early();

    const py_value dict = literal_parser(text, what).parse_all();
    if (dict.kind != py_value::dict) throw malformed("it is not a dict");
    const auto entry = [&](const std::string& key) -> const py_value& {  // the last one, as Python's dict
        const py_value* found = nullptr;
        for (const auto& [k, value] : dict.entries)
            if (k == key) found = &value;
        if (!found) throw malformed("no '" + key + "'");
        return *found;
    };
    const py_value& descr = entry("descr");
    const py_value& fortran = entry("fortran_order");
    const py_value& shape = entry("shape");

    npy_header h;
    if (descr.kind == py_value::sequence)
        throw fail(std::string("unsupported dtype: a structured array (a record of named fields); ") + expected_dtypes);
    if (descr.kind != py_value::string) throw malformed("'descr' is not a string");
    if (fortran.kind != py_value::boolean) throw malformed("'fortran_order' is not True or False");
    if (shape.kind != py_value::sequence || shape.list) throw malformed("'shape' is not a tuple");
    h.descr = descr.text;
    const dtype t = parse_descr(h.descr, what);
    for (const py_value& s : shape.items) {
        if (s.kind != py_value::integer || s.number < 0) throw malformed("'shape' holds something other than sizes");
        h.shape.push_back(static_cast<std::size_t>(s.number));
    }
    if (fortran.flag && h.shape.size() > 1)
        throw fail("Fortran-order (column-major) arrays are not supported; save it with "
                   "np.save(f, np.ascontiguousarray(a))");
    h.text = t.kind == 'U';
    h.data_bytes = size - prefix - length;
    // The shape must fit the bytes that are really there, before anything is allocated;
    // and every stride (a product of trailing sizes, in bytes) must fit a signed 64-bit
    // offset, even when a zero size elsewhere makes the data empty: (0, 9e12, 9e15).
    std::uint64_t needed = t.size, stride = t.size;
    bool overflow = false;
    for (std::size_t axis = h.shape.size(); axis-- > 0;) {
        const std::uint64_t s = h.shape[axis];
        if (s != 0 && (__builtin_mul_overflow(stride, s, &stride) || stride > max_stride_bytes)) overflow = true;
        needed = s == 0 ? 0 : needed * s;  // cannot wrap: needed <= stride
    }
    if (overflow)
        throw malformed("shape " + tensor_index_text(h.shape) + " of " + t.name + " needs more bytes than any file holds");
    h.elements = element_count(h.shape);
    if (needed > h.data_bytes) throw error(truncated_data(h, t, h.data_bytes, what));
    h.array_bytes = needed;
    return h;
}

loaded_tensor read_npy_data(const npy_header& h, const byte_source& source, const std::string& what,
                            read_budget* budget) {
    const dtype t = parse_descr(h.descr, what);
    if (h.text) throw error(what + ": unsupported dtype '" + h.descr + "' (strings); " + expected_dtypes);
    if (!little_endian_host) throw error(what + ": reading .npy needs a little-endian machine");
    const std::uint64_t float_bytes = h.elements > UINT64_MAX / 4 ? UINT64_MAX : 4 * std::uint64_t(h.elements);
    if (budget) budget->take(float_bytes, what, "shape " + tensor_index_text(h.shape) + " as float32");
    loaded_tensor out;
    out.shape = h.shape;
    out.boolean = t.kind == 'b';
    out.values = xt::xarray<float>::from_shape(h.shape);
    float* dst = out.values.data();
    const std::uint64_t needed = static_cast<std::uint64_t>(h.elements) * t.size;
    std::uint64_t got = 0;
    if (t.kind == 'f' && t.size == 4) {  // straight into the tensor
        got = read_fully(source, reinterpret_cast<char*>(dst), needed);
    } else {
        std::vector<char> chunk(std::min<std::uint64_t>(chunk_bytes, needed));
        while (got < needed) {
            const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), needed - got));
            const std::size_t n = read_fully(source, chunk.data(), want);
            convert(t, chunk.data(), n / t.size, dst + got / t.size);
            got += n;
            if (n < want) break;
        }
    }
    if (got < needed) throw error(truncated_data(h, t, got, what));
    count_non_finite(out);
    return out;
}

std::string read_npy_text(const npy_header& h, const byte_source& source, const std::string& what,
                          read_budget* budget) {
    if (!h.text) throw error(what + ": dtype '" + h.descr + "' is not a string");
    if (h.elements != 1)
        throw error(what + ": holds " + std::to_string(h.elements) + " strings of shape " + tensor_index_text(h.shape) +
                    "; expected one");
    const dtype t = parse_descr(h.descr, what);
    // the UTF-8 text is at most as long as the UTF-32 data: taken before a byte is read
    if (budget) budget->take(t.size, what, "a text of " + std::to_string(t.size / 4) + " characters");
    std::string text, chunk(static_cast<std::size_t>(std::min<std::uint64_t>(chunk_bytes, t.size)), '\0');
    bool ended = false;  // NumPy pads with NULs and strips them
    for (std::uint64_t done = 0; done < t.size;) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(chunk.size(), t.size - done));
        const std::size_t got = read_fully(source, &chunk[0], want);
        if (got < want) throw error(truncated_data(h, t, done + got, what));
        for (std::size_t i = 0; !ended && i + 4 <= got; i += 4) {
            const std::uint32_t c = little_u32(reinterpret_cast<const unsigned char*>(chunk.data()) + i);
            if (c == 0) ended = true;
            else append_utf8(text, c);
        }
        done += got;
    }
    return text;
}

loaded_tensor read_npy(const byte_source& source, std::uint64_t size, const std::string& what, read_budget* budget) {
    const npy_header h = read_npy_header(source, size, what);
    return read_npy_data(h, source, what, budget);
}

loaded_tensor parse_npy(const void* bytes, std::size_t size, const std::string& what, read_budget* budget) {
    const char* next = static_cast<const char*>(bytes);
    std::size_t left = size;
    const auto source = [&](char* buffer, std::size_t n) {
        n = std::min(n, left);
        std::memcpy(buffer, next, n);
        next += n;
        left -= n;
        return n;
    };
    return read_npy(source, size, what, budget);
}

loaded_tensor read_npy_file(const std::string& path, const std::string& what, read_budget* budget) {
    const input_file file = open_input_file(path, what);
    struct stat info;
    if (fstat(fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode)) {  // a FIFO, a device: no size to trust
        const std::string bytes = read_open_file(file.get(), what, budget);  // within the budget, capped at max_stream_bytes
        return parse_npy(bytes.data(), bytes.size(), what, budget);
    }
    return read_npy(file_source(file.get(), what), static_cast<std::uint64_t>(info.st_size), what, budget);
}

std::optional<npy_header> read_npy_file_header(const std::string& path, const std::string& what) {
    const input_file file = open_input_file(path, what);
    struct stat info;
    if (fstat(fileno(file.get()), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
    return read_npy_header(file_source(file.get(), what), static_cast<std::uint64_t>(info.st_size), what);
}

// ----------------------------------------------------------------------------
// writing

std::uint64_t npy_size(const std::vector<std::size_t>& shape, bool boolean) {
    return header_bytes(boolean ? "|b1" : "<f4", shape).size() +
           static_cast<std::uint64_t>(element_count(shape)) * (boolean ? 1 : 4);
}

std::string npy_header_bytes(const std::vector<std::size_t>& shape, bool boolean) {
    if (!little_endian_host) throw error("writing .npy needs a little-endian machine");
    return header_bytes(boolean ? "|b1" : "<f4", shape);
}

void write_npy(const float* data, const std::vector<std::size_t>& shape, bool boolean, const byte_sink& sink) {
    const std::string header = npy_header_bytes(shape, boolean);
    sink(header.data(), header.size());
    write_npy_elements(data, element_count(shape), boolean, sink);
}

void write_npy_elements(const float* data, std::size_t count, bool boolean, const byte_sink& sink) {
    if (!boolean) {
        if (count > 0) sink(reinterpret_cast<const char*>(data), count * 4);
        return;
    }
    std::vector<char> chunk(std::min(count, chunk_bytes));
    for (std::size_t done = 0; done < count;) {
        const std::size_t n = std::min(chunk.size(), count - done);
        for (std::size_t e = 0; e < n; ++e) chunk[e] = data[done + e] != 0.0f ? 1 : 0;
        sink(chunk.data(), n);
        done += n;
    }
}

void write_npy_text(const std::string& utf8, const byte_sink& sink) {
    std::vector<std::uint32_t> text = code_points(utf8);
    if (text.empty()) text.push_back(0);  // np.array('') is '<U1'
    const std::string header = header_bytes("<U" + std::to_string(text.size()), {});
    sink(header.data(), header.size());
    std::string data;
    data.reserve(4 * text.size());
    for (const std::uint32_t c : text)
        for (int k = 0; k < 4; ++k) data += static_cast<char>((c >> (8 * k)) & 0xff);
    sink(data.data(), data.size());
}

}  // namespace attn
