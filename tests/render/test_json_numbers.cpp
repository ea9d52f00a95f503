// The JSON "data" writer (json_numbers.hpp): nesting as tensor.tolist(), read through strides,
// the same bytes on one thread as on several, across blocks of rows that end mid-axis.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/render/json_numbers.hpp"

namespace {

std::string data_text(const std::vector<float>& storage, const attn::tensor_shape& shape,
                      const attn::tensor_strides& strides, unsigned threads, bool boolean = false) {
    std::ostringstream out;
    attn::write_json_data(storage.data(), shape, strides, boolean, out, threads);
    return out.str();
}

/// A stream buffer that takes `room` bytes, then throws out of every write, as a full
/// disk's output_stream does.
class full_after : public std::streambuf {
public:
    explicit full_after(std::size_t room) : room_(room) {}
    std::string taken;

protected:
    std::streamsize xsputn(const char* bytes, std::streamsize n) override {
        if (taken.size() + static_cast<std::size_t>(n) > room_) throw std::runtime_error("No space left on device");
        taken.append(bytes, static_cast<std::size_t>(n));
        return n;
    }
    int_type overflow(int_type ch) override {
        const char c = traits_type::to_char_type(ch);
        return xsputn(&c, 1) == 1 ? ch : traits_type::eof();
    }

private:
    std::size_t room_;
};

/// The reference: element by element, recursively, as json.dumps(t.tolist()) nests them.
std::string nested(const float* first, const attn::tensor_shape& shape, const attn::tensor_strides& strides,
                   std::size_t axis = 0) {
    if (axis == shape.size()) {
        char text[32];
        return std::string(text, std::to_chars(text, text + sizeof text, *first).ptr);
    }
    std::string s = "[";
    for (std::size_t i = 0; i < shape[axis]; ++i)
        s += (i ? "," : "") + nested(first + static_cast<std::ptrdiff_t>(i) * strides[axis], shape, strides, axis + 1);
    return s + "]";
}

}  // namespace

TEST_SUITE("json numbers") {
    TEST_CASE("small tensors nest like tolist(), with the special values as strings") {
        const float inf = std::numeric_limits<float>::infinity();
        const std::vector<float> v{0.1f, -2.5f, inf, -inf, std::nanf(""), 1e-30f};
        CHECK(data_text(v, {2, 3}, {3, 1}, 1) == "[[0.1,-2.5,\"inf\"],[\"-inf\",\"nan\",1e-30]]");
        CHECK(data_text(v, {3, 2}, {1, 3}, 1) == "[[0.1,\"-inf\"],[-2.5,\"nan\"],[\"inf\",1e-30]]");  // transposed
        CHECK(data_text(v, {6}, {1}, 1) == "[0.1,-2.5,\"inf\",\"-inf\",\"nan\",1e-30]");
        CHECK(data_text(v, {}, {}, 1) == "0.1");
        CHECK(data_text(v, {2, 0, 3}, {3, 3, 1}, 1) == "[[],[]]");
        CHECK(data_text({1, 0, 1}, {1, 3}, {3, 1}, 1, true) == "[[true,false,true]]");
    }

    TEST_CASE("a large strided tensor: the same bytes on 1, 2 and 3 threads, and as the reference") {
        // [3,5,7,4111] read as a transpose of axes 1 and 2: 431655 elements, blocks of 31 rows
        // (131072 / 4111) that end in the middle of axes 1 and 0.
        const attn::tensor_shape shape{3, 5, 7, 4111};
        const attn::tensor_strides strides{5 * 7 * 4111, 4111, 5 * 4111, 1};
        std::vector<float> storage(3 * 5 * 7 * 4111);
        for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = std::sin(static_cast<float>(i)) / 7.0f;
        const std::string one = data_text(storage, shape, strides, 1);
        CHECK(one == nested(storage.data(), shape, strides));
        CHECK(data_text(storage, shape, strides, 2) == one);
        CHECK(data_text(storage, shape, strides, 3) == one);
    }

    TEST_CASE("rows given a block at a time make the same text as the whole tensor") {
        // [2,3,5,4111] in C order: blocks of 1, 2, 4, 7 and 30 rows cut axes 1 and 0 in the
        // middle; the 30 rows split into blocks of 31 inside write_json_rows too, on 1, 2 and 3 threads
        const attn::tensor_shape shape{2, 3, 5, 4111};
        const std::size_t width = shape.back(), rows = 2 * 3 * 5;
        std::vector<float> storage(rows * width);
        for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = std::cos(static_cast<float>(i)) * 3.0f;
        const std::string whole = data_text(storage, shape, {3 * 5 * 4111, 5 * 4111, 4111, 1}, 1);
        for (const std::size_t block : {1, 2, 4, 7, 30})
            for (const unsigned threads : {1u, 2u, 3u}) {
                std::ostringstream out;
                for (std::size_t first = 0; first < rows; first += block) {
                    const std::size_t count = std::min(block, rows - first);
                    std::vector<float> copy(storage.begin() + static_cast<std::ptrdiff_t>(first * width),
                                            storage.begin() + static_cast<std::ptrdiff_t>((first + count) * width));
                    attn::write_json_rows(copy.data(), first, count, shape, false, out, threads);
                }
                CAPTURE(block);
                CAPTURE(threads);
                CHECK(out.str() == whole);
            }
        std::ostringstream bools;
        const std::vector<float> keep{1, 0, 0, 1};
        attn::write_json_rows(keep.data(), 0, 1, {2, 2}, true, bools);
        attn::write_json_rows(keep.data() + 2, 1, 1, {2, 2}, true, bools);
        CHECK(bools.str() == "[[true,false],[false,true]]");
    }

    TEST_CASE("a write that fails stops the blocks on every thread count, and its error comes out") {
        // [100,4111]: blocks of 31 rows; the stream takes the first block, then fails on the second
        const attn::tensor_shape shape{100, 4111};
        std::vector<float> storage(100 * 4111);
        for (std::size_t i = 0; i < storage.size(); ++i) storage[i] = std::sin(static_cast<float>(i));
        const std::string whole = data_text(storage, shape, {4111, 1}, 1);
        for (const unsigned threads : {1u, 2u, 3u}) {
            full_after buffer(whole.size() / 2);
            std::ostream out(&buffer);
            out.exceptions(std::ios::badbit);
            CAPTURE(threads);
            CHECK_THROWS_WITH(attn::write_json_data(storage.data(), shape, {4111, 1}, false, out, threads),
                              "No space left on device");
            CHECK(buffer.taken.size() > whole.size() / 4);  // the first block, in order, and nothing after it
            CHECK(whole.compare(0, buffer.taken.size(), buffer.taken) == 0);
        }
    }
}
