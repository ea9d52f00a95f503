// npy: NumPy's .npy files, read as float32 and written as NumPy 1.24 writes them.
//
// The files in reference/io/ come from np.save (tests/reference/make_io_fixtures.py);
// each dtype holds values whose float32 conversion is known, and each refused file
// is checked against its exact message. Headers that NumPy would never write
// (malformed, absurd shapes) are built here in memory.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/text/index_text.hpp"
#include "support.hpp"

namespace {


attn::loaded_tensor read(const std::string& name) { return attn::read_npy_file(io_dir + name, "--input " + name); }

/// Every value equals `expected` exactly (NaN where NaN is expected, and the sign of zero).
void check_exact(const attn::loaded_tensor& t, const std::vector<float>& expected) {
    REQUIRE(t.values.size() == expected.size());
    for (std::size_t e = 0; e < expected.size(); ++e) {
        CAPTURE(e);
        const float v = t.values.data()[e];
        if (std::isnan(expected[e])) {
            CHECK(std::isnan(v));
        } else {
            CHECK(v == expected[e]);
            CHECK(std::signbit(v) == std::signbit(expected[e]));
        }
    }
}

/// A version 1.0 .npy with this header dict (padded to 64 bytes) and these data bytes.
std::string npy_v1(const std::string& dict, const std::string& data) {
    std::string header = dict;
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string out("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(header.size() & 0xff);
    out += static_cast<char>(header.size() >> 8);
    return out + header + data;
}

attn::loaded_tensor parse(const std::string& bytes) { return attn::parse_npy(bytes.data(), bytes.size(), "--q q.npy"); }

std::string written(const std::vector<float>& values, const std::vector<std::size_t>& shape, bool boolean) {
    std::string out;
    attn::write_npy(values.data(), shape, boolean, [&](const char* p, std::size_t n) { out.append(p, n); });
    return out;
}

}  // namespace

TEST_SUITE("npy") {
    TEST_CASE("every dtype attn reads becomes float32 as np.asarray(a, np.float32) makes it") {
        SUBCASE("<f4, with nan and inf, shape [2,3]") {
            const auto t = read("f4.npy");
            CHECK(t.shape == std::vector<std::size_t>{2, 3});
            CHECK_FALSE(t.boolean);
            check_exact(t, {0.0f, 1.5f, -2.25f, not_a_number, inf, -inf});
            CHECK(t.non_finite == 3);
            CHECK(t.first_non_finite == std::vector<std::size_t>{1, 0});
        }
        SUBCASE("<f8: rounded to nearest, ±inf from the halfway point above FLT_MAX") {
            const auto t = read("f8.npy");
            CHECK(t.shape == std::vector<std::size_t>{6});
            check_exact(t, {0.1f, -inf, 0.0f, std::numeric_limits<float>::max(), inf, not_a_number});
            CHECK(t.non_finite == 3);
            CHECK(t.first_non_finite == std::vector<std::size_t>{1});
        }
        SUBCASE("<f2: normal, largest, inf, nan_f, smallest subnormal, -0") {
            check_exact(read("f2.npy"), {1.0f, -0.5f, 65504.0f, inf, not_a_number, 0x1p-24f, -0.0f});
        }
        SUBCASE("|b1 is boolean, as 0/1") {
            const auto t = read("b1.npy");
            CHECK(t.boolean);
            CHECK(t.shape == std::vector<std::size_t>{2, 3});
            check_exact(t, {1, 0, 1, 0, 0, 1});
            CHECK(t.non_finite == 0);
            CHECK(t.first_non_finite.empty());
        }
        SUBCASE("signed integers: extremes, and 16777217 rounds to 16777216") {
            check_exact(read("i1.npy"), {-128, 127, 0});
            check_exact(read("i2.npy"), {-32768, 32767, 1});
            check_exact(read("i4.npy"), {-2147483648.0f, 2147483648.0f, 16777216.0f});
            check_exact(read("i8.npy"), {-0x1p63f, 0x1p63f, 16777216.0f});
            CHECK_FALSE(read("i8.npy").boolean);
        }
        SUBCASE("unsigned integers: extremes") {
            check_exact(read("u1.npy"), {0, 255, 7});
            check_exact(read("u2.npy"), {0, 65535, 7});
            check_exact(read("u4.npy"), {0, 4294967296.0f, 7});
            check_exact(read("u8.npy"), {0, 0x1p64f, 7});
        }
        SUBCASE("a 0-d array has shape [] and one value") {
            const auto t = read("scalar.npy");
            CHECK(t.shape.empty());
            check_exact(t, {2.5f});
        }
    }

    TEST_CASE("header versions 2.0 and 3.0 read like 1.0") {
        for (const char* name : {"v2.npy", "v3.npy"}) {
            CAPTURE(name);
            const auto t = read(name);
            CHECK(t.shape == std::vector<std::size_t>{2, 3});
            check_exact(t, {0, 1, 2, 3, 4, 5});
        }
        CHECK(file_bytes(io_dir + "v2.npy")[6] == 2);
        CHECK(file_bytes(io_dir + "v3.npy")[6] == 3);
    }

    TEST_CASE("files NumPy writes but attn cannot use: one line saying why") {
        const auto refuse = [](const std::string& name) { (void)read(name); };
        CHECK_THROWS_WITH_AS(refuse("big_endian.npy"),
                             "--input big_endian.npy: unsupported dtype '>f4' (big-endian); expected little-endian "
                             "float16, float32, float64, bool or integers",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("complex.npy"),
                             "--input complex.npy: unsupported dtype '<c8' (complex64); expected little-endian "
                             "float16, float32, float64, bool or integers",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("object.npy"),
                             "--input object.npy: unsupported dtype '|O' (Python objects); expected little-endian "
                             "float16, float32, float64, bool or integers",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("unicode.npy"),
                             "--input unicode.npy: unsupported dtype '<U2' (strings); expected little-endian "
                             "float16, float32, float64, bool or integers",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("fortran.npy"),
                             "--input fortran.npy: Fortran-order (column-major) arrays are not supported; save it "
                             "with np.save(f, np.ascontiguousarray(a))",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("truncated_header.npy"),
                             "--input truncated_header.npy: truncated: shape [2,3] of float32 needs 24 bytes of data "
                             "after the header, found 0",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("truncated_half.npy"),
                             "--input truncated_half.npy: truncated: shape [2,3] of float32 needs 24 bytes of data "
                             "after the header, found 12",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("missing.npy"), "--input missing.npy: cannot open: No such file or directory",
                             attn::error);
    }

    TEST_CASE("malformed headers: an error, never a crash or a huge allocation") {
        const std::string f4_2x3 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
        const std::string data(24, '\0');
        SUBCASE("the hand-made header is good") { CHECK(parse(npy_v1(f4_2x3, data)).shape == std::vector<std::size_t>{2, 3}); }
        SUBCASE("not .npy at all, or empty") {
            CHECK_THROWS_WITH_AS(parse("[[1, 2]]"), "--q q.npy: not a NumPy .npy file (it does not start with \\x93NUMPY)",
                                 attn::error);
            CHECK_THROWS_WITH_AS(parse(std::string("PK\x03\x04\0\0\x08\x08", 8) + "archive/data.pkl"),
                                 "--q q.npy: not a NumPy .npy file but a zip archive, as torch.save writes; "
                                 "save with np.save(path, t.numpy())",
                                 attn::error);
            CHECK_THROWS_WITH_AS(parse(""), "--q q.npy: empty file; expected a NumPy .npy file", attn::error);
            CHECK_THROWS_WITH_AS(parse(std::string("\x93NUMPY\x01", 7)),
                                 "--q q.npy: truncated: the file ends inside the .npy header", attn::error);
        }
        SUBCASE("an unknown version") {
            std::string bytes = npy_v1(f4_2x3, data);
            bytes[6] = 4;
            CHECK_THROWS_WITH_AS(parse(bytes), "--q q.npy: unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)",
                                 attn::error);
        }
        SUBCASE("a header length beyond the file") {
            std::string bytes = npy_v1(f4_2x3, "");
            bytes[9] = 0x10;  // 4096 more bytes of header claimed
            CHECK_THROWS_WITH_AS(parse(bytes), "--q q.npy: truncated: the .npy header needs 4224 bytes, the file has 128",
                                 attn::error);
        }
        SUBCASE("a dict that is not one") {
            CHECK_THROWS_WITH_AS(parse(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) ", data)),
                                 "--q q.npy: malformed .npy header: expected ',' or '}' after the value of 'shape' "
                                 "(header: {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3))",
                                 attn::error);
            CHECK_THROWS_WITH_AS(parse(npy_v1("{'descr': '<f4', 'fortran_order': False}", data)),
                                 "--q q.npy: malformed .npy header: no 'shape'", attn::error);
            CHECK_THROWS_WITH_AS(parse(npy_v1("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", data)),
                                 "--q q.npy: malformed .npy header: expected ',' or '}' after the value of 'descr' (header: {'descr': "
                                 "'<f4, 'fortran_order': False, 'shape': (2,)})",
                                 attn::error);
            CHECK_THROWS_WITH_AS(parse(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", data)),
                                 "--q q.npy: malformed .npy header: 'shape' holds something other than sizes", attn::error);
            CHECK_THROWS_WITH_AS(parse(npy_v1("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", data)),
                                 "--q q.npy: malformed .npy header: 'fortran_order' is not True or False", attn::error);
            CHECK_THROWS_WITH_AS(parse(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }", data)),
                                 "--q q.npy: malformed .npy header: 'shape' is not a tuple", attn::error);
        }
        SUBCASE("a structured dtype") {
            CHECK_THROWS_WITH_AS(
                parse(npy_v1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", data)),
                "--q q.npy: unsupported dtype: a structured array (a record of named fields); expected little-endian "
                "float16, float32, float64, bool or integers",
                attn::error);
        }
        SUBCASE("a shape far beyond the data is refused before anything is allocated") {
            CHECK_THROWS_WITH_AS(
                parse(npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", data)),
                "--q q.npy: truncated: shape [1000000000,1000000000] of float64 needs 8000000000000000000 bytes of "
                "data after the header, found 24",
                attn::error);
            CHECK_THROWS_WITH_AS(
                parse(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", data)),
                "--q q.npy: malformed .npy header: shape [4294967296,4294967296] of float32 needs more bytes than any "
                "file holds",
                attn::error);
        }
        SUBCASE("Python 2's long sizes, 1-d Fortran order and extra bytes after the data are fine, as in np.load") {
            const auto t = parse(npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2L,), }", data));
            CHECK(t.shape == std::vector<std::size_t>{2});
        }
    }

    TEST_CASE("write_npy writes what np.save writes, byte for byte") {
        SUBCASE("<f4 [2,3]") {
            CHECK(written({0.0f, 1.5f, -2.25f, not_a_number, inf, -inf}, {2, 3}, false) == file_bytes(io_dir + "f4.npy"));
        }
        SUBCASE("|b1 [2,3]: 1 wherever the value is not 0") {
            CHECK(written({1, 0, 0.5f, 0, -0.0f, -3}, {2, 3}, true) == file_bytes(io_dir + "b1.npy"));
        }
        SUBCASE("0-d <f4") { CHECK(written({2.5f}, {}, false) == file_bytes(io_dir + "scalar.npy")); }
        SUBCASE("15 axes: the spare bytes NumPy leaves for growing axis 0 make the header 192 bytes") {
            const std::string numpy = file_bytes(io_dir + "many_axes.npy");
            CHECK(numpy.size() == 192 + 4);
            CHECK(written({7.0f}, std::vector<std::size_t>(15, 1), false) == numpy);
        }
        SUBCASE("a string as 0-d <U (UTF-32), as np.save(f, np.array(s))") {
            std::string out;
            attn::write_npy_text(R"({"format": "attn.trace/1", "heads": 2, "note": "café ≤ 𝑥"})",
                                 [&](const char* p, std::size_t n) { out.append(p, n); });
            CHECK(out == file_bytes(io_dir + "text.npy"));
        }
    }

    TEST_CASE("write_npy: the data starts at a multiple of 64 bytes and reads back") {
        for (const std::vector<std::size_t>& shape : std::vector<std::vector<std::size_t>>{
                 {}, {1}, {7}, {3, 5}, {2, 3, 4}, {1, 2, 1, 2, 1, 2, 1, 2}, {123456789, 0}}) {
            std::size_t n = 1;
            for (auto s : shape) n *= s;
            std::vector<float> values(n);
            for (std::size_t e = 0; e < n; ++e) values[e] = static_cast<float>(e) - 2.5f;
            for (const bool boolean : {false, true}) {
                CAPTURE(attn::tensor_index_text(shape));
                CAPTURE(boolean);
                const std::string bytes = written(values, shape, boolean);
                const std::size_t data_bytes = n * (boolean ? 1 : 4);
                CHECK(bytes.size() == attn::npy_size(shape, boolean));
                CHECK((bytes.size() - data_bytes) % 64 == 0);
                CHECK(bytes[bytes.size() - data_bytes - 1] == '\n');
                const auto t = parse(bytes);
                CHECK(t.shape == shape);
                CHECK(t.boolean == boolean);
                for (std::size_t e = 0; e < n; ++e)
                    REQUIRE(t.values.data()[e] == (boolean ? (values[e] != 0 ? 1.0f : 0.0f) : values[e]));
            }
        }
    }

    TEST_CASE("read_npy_header and read_npy_text: a 0-d string") {
        const std::string bytes = file_bytes(io_dir + "text.npy");
        std::size_t at = 0;
        const attn::byte_source source = [&](char* buffer, std::size_t n) {
            n = std::min(n, bytes.size() - at);
            std::copy(bytes.data() + at, bytes.data() + at + n, buffer);
            at += n;
            return n;
        };
        const auto header = attn::read_npy_header(source, bytes.size(), "text.npy");
        CHECK(header.text);
        CHECK(header.descr == "<U58");
        CHECK(header.shape.empty());
        CHECK(attn::read_npy_text(header, source, "text.npy") ==
              R"({"format": "attn.trace/1", "heads": 2, "note": "café ≤ 𝑥"})");
    }
}
