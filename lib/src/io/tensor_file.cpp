#include "attn/io/tensor_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>

#include <sys/stat.h>

#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"
#include "attn/io/json_tensor.hpp"
#include "attn/io/npy.hpp"

namespace attn {

void read_budget::check(std::uint64_t bytes, const std::string& what, const std::string& holding) const {
    if (bytes <= left_) return;
    // what is left, when the other files took so little that it reads as the limit, is said as the limit
    const bool as_limit = left_ == limit_ || format_bytes(left_) == format_bytes(limit_);
    const std::string allowed = as_limit ? "the " + format_bytes(limit_) + " --max-memory allows"
                                                : "the " + format_bytes(left_) + " --max-memory " + format_bytes(limit_) +
                                                      " leaves after the other files";
    throw over_budget(what + ": " + holding + " needs " + format_bytes(bytes) + ", more than " + allowed +
                " (--max-memory none: no limit)");
}

void read_budget::take(std::uint64_t bytes, const std::string& what, const std::string& holding) {
    check(bytes, what, holding);
    left_ -= bytes;
}

std::string read_text_file(const std::string& path, const std::string& what, const read_budget* budget) {
    return read_open_file(open_input_file(path, what).get(), what, budget);
}

std::string read_open_file(std::FILE* file, const std::string& what, const read_budget* budget) {
    struct stat info;
    const bool regular = fstat(fileno(file), &info) == 0 && S_ISREG(info.st_mode);
    if (regular && budget) budget->check(static_cast<std::uint64_t>(info.st_size), what, "its text");
    const std::uint64_t cap = regular ? std::numeric_limits<std::uint64_t>::max() : max_stream_bytes;
    std::string text;
    if (regular) text.reserve(static_cast<std::size_t>(info.st_size));
    char buffer[1 << 16];
    for (;;) {
        const std::size_t n = std::fread(buffer, 1, sizeof buffer, file);
        if (text.size() + n > cap)
            throw error(what + ": not a regular file, and it gives more than " + format_bytes(max_stream_bytes) +
                        " (the most attn reads from a pipe or device)");
        if (budget) budget->check(text.size() + n, what, "its text");  // a file that grew while read
        text.append(buffer, n);
        if (n < sizeof buffer) break;
    }
    if (std::ferror(file)) throw error(what + ": cannot read: " + std::strerror(errno));
    return text;
}

std::string read_bounded_text(const std::string& path, const std::string& what, std::uint64_t limit,
                              const std::string& about, const read_budget* budget) {
    const input_file file = open_input_file(path, what);
    struct stat info;
    const bool regular = fstat(fileno(file.get()), &info) == 0 && S_ISREG(info.st_mode);
    if (regular && static_cast<std::uint64_t>(info.st_size) > limit) throw error(what + ": larger than " + about);
    if (regular && budget) budget->check(static_cast<std::uint64_t>(info.st_size), what, "its text");
    if (budget && budget->left() < limit) return read_open_file(file.get(), what, budget);  // the budget is the bound
    const read_budget bound(limit);
    try {
        return read_open_file(file.get(), what, &bound);
    } catch (const over_budget&) {  // a pipe, or a file that grew while read
        throw error(what + ": gives more than " + about);
    }
}

input_file open_input_file(const std::string& path, const std::string& what) {
    input_file file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw error(what + ": cannot open: " + std::strerror(errno));
    struct stat info;
    if (fstat(fileno(file.get()), &info) == 0 && S_ISDIR(info.st_mode))
        throw error(what + ": cannot open: " + std::strerror(EISDIR));
    return file;
}

float to_float32(double d) {
    constexpr double overflow = 0x1.ffffffp127;  // 2^128 - 2^103, halfway from FLT_MAX to 2^128
    constexpr float inf = std::numeric_limits<float>::infinity();
    if (d >= overflow) return inf;
    if (d <= -overflow) return -inf;
    return static_cast<float>(d);  // NaN stays NaN
}

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    const std::uint32_t exponent = (h >> 10) & 0x1fu;
    const std::uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    std::uint32_t bits = sign;
    if (exponent == 0x1f)
        bits |= 0x7f800000u | (mantissa << 13);  // inf or NaN
    else
        bits |= ((exponent + 112) << 23) | (mantissa << 13);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

float bfloat16_to_float(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::string file_extension(const std::string& path) {
    const auto slash = path.find_last_of('/');
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    const auto dot = name.find_last_of('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == name.size()) return "";
    std::string extension = name.substr(dot);
    for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return extension;
}

std::vector<std::size_t> unravel_index(std::size_t flat, const std::vector<std::size_t>& shape) {
    std::vector<std::size_t> index(shape.size());
    for (std::size_t axis = shape.size(); axis-- > 0;) {
        index[axis] = flat % shape[axis];
        flat /= shape[axis];
    }
    return index;
}

void count_non_finite(loaded_tensor& t) {
    const auto non_finite = [](float v) { return !std::isfinite(v); };
    const float* begin = t.values.data();
    const float* end = begin + t.values.size();
    const float* first = std::find_if(begin, end, non_finite);
    t.non_finite = static_cast<std::size_t>(std::count_if(first, end, non_finite));
    t.first_non_finite.clear();
    if (first != end) t.first_non_finite = unravel_index(static_cast<std::size_t>(first - begin), t.shape);
}

loaded_tensor read_tensor_file(const std::string& path, const std::string& what, read_budget* budget) {
    const std::string extension = file_extension(path);
    if (extension == ".npy") return read_npy_file(path, what, budget);
    if (extension == ".json") return parse_json_tensor(read_text_file(path, what, budget), what, budget);
    throw error(what + ": unknown file type" + (extension.empty() ? "" : " '" + extension + "'") +
                "; expected .json (nested arrays) or .npy (NumPy)");
}

std::map<std::string, loaded_tensor> read_json_tensors(const std::string& path, const std::string& what,
                                                       read_budget* budget) {
    return parse_json_tensors(read_text_file(path, what, budget), what, budget);
}

}  // namespace attn
