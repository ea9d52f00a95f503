// .safetensors: files written by make_safetensors_fixtures.py (by hand, as the format's
// README specifies) read against the float32 values PyTorch makes of them, and hostile
// files built here byte by byte, each refused with one line naming the file.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/safetensors.hpp"
#include "attn/io/tensor_file.hpp"
#include "support.hpp"

namespace {

const std::string st_dir = reference_path("safetensors/");

/// A .safetensors file: the 8-byte size of `header`, `header`, then `data`.
std::string st_bytes(const std::string& header, const std::string& data = "") {
    std::string out;
    for (int k = 0; k < 8; ++k) out += static_cast<char>((std::uint64_t(header.size()) >> (8 * k)) & 0xff);
    return out + header + data;
}

/// The file's 8-byte size field set to `n`, whatever follows.
std::string st_with_size(std::uint64_t n, const std::string& rest) {
    std::string out;
    for (int k = 0; k < 8; ++k) out += static_cast<char>((n >> (8 * k)) & 0xff);
    return out + rest;
}

/// The message of reading `bytes` whole (every tensor wanted), "" when it reads.
std::string st_refusal(const std::string& bytes, const std::function<bool(const std::string&)>& wanted = {}) {
    try {
        attn::parse_safetensors(bytes.data(), bytes.size(), "--params t.safetensors", wanted);
    } catch (const attn::error& e) {
        return e.what();
    }
    return "";
}

/// An entry of the header: "name": {"dtype": ..., "shape": ..., "data_offsets": ...}.
std::string st_entry(const std::string& name, const std::string& dtype, const std::string& shape,
                     const std::string& offsets) {
    return "\"" + name + "\": {\"dtype\": \"" + dtype + "\", \"shape\": " + shape + ", \"data_offsets\": " + offsets + "}";
}

std::string st_floats(const std::vector<float>& values) {
    return std::string(reinterpret_cast<const char*>(values.data()), 4 * values.size());
}

}  // namespace

TEST_SUITE("safetensors") {
    TEST_CASE("F32, F16, BF16 and F64 become the float32 PyTorch makes of them, bit for bit") {
        const std::string path = st_dir + "dtypes.safetensors";
        const auto expected = attn::read_npz(st_dir + "dtypes_expected.npz", "expected");
        REQUIRE(expected.size() == 6);
        const auto readable = [](const std::string& name) { return name != "mask" && name != "ids"; };
        attn::read_budget budget(10000);  // the header (512 bytes) is checked at 16 times its text, not taken
        const auto got = attn::read_safetensors(path, "--params d.safetensors", readable, &budget);
        REQUIRE(got.size() == 6);
        std::uint64_t floats = 0;
        for (const auto& entry : expected) {  // no structured binding: clang's C++17 cannot capture one
            const std::string& name = entry.first;
            const auto& want = entry.second;
            CAPTURE(name);
            REQUIRE(got.count(name) == 1);
            const attn::loaded_tensor& t = got.at(name);
            CHECK(t.shape == want.shape);
            REQUIRE(t.values.size() == want.values.size());
            for (std::size_t i = 0; i < t.values.size(); ++i) {
                CAPTURE(i);
                CHECK(bits(t.values.data()[i]) == bits(want.values.data()[i]));
            }
            CHECK(t.non_finite == want.non_finite);
            CHECK(t.first_non_finite == want.first_non_finite);
            CHECK_FALSE(t.boolean);
            floats += t.values.size();
        }
        CHECK(budget.left() == 10000 - 4 * floats);  // each tensor's float32 bytes, taken from the budget
        SUBCASE("the values that make the conversions delicate are there") {
            CHECK(got.at("f16").values(0, 3) == std::ldexp(1.0f, -24));     // the smallest F16 subnormal
            CHECK(got.at("f16").values(1, 3) == 1023 * std::ldexp(1.0f, -24));  // the largest
            CHECK(got.at("f16").values(0, 2) == 65504.0f);
            CHECK(std::isnan(got.at("f16").values(1, 1)));
            CHECK(std::signbit(got.at("f16").values(1, 2)));
            CHECK(std::fpclassify(got.at("bf16").values(0, 3)) == FP_SUBNORMAL);
            CHECK(std::isinf(got.at("f64").values(1)));  // -1e39: past FLT_MAX
            CHECK(got.at("f32").non_finite == 3);
            CHECK(got.at("f32").first_non_finite == std::vector<std::size_t>{1, 0});
            CHECK(got.at("scalar").shape.empty());
            CHECK(got.at("scalar").values() == 2.5f);
            CHECK(got.at("empty").shape == std::vector<std::size_t>{0, 3});
        }
    }

    TEST_CASE("the index and the metadata come from the header alone") {
        const auto index = attn::safetensors_index(st_dir + "dtypes.safetensors", "d");
        std::vector<std::string> names;
        for (const auto& e : index) names.push_back(e.name);
        CHECK(names == std::vector<std::string>{"bf16", "empty", "f16", "f32", "f64", "ids", "mask", "scalar"});
        CHECK(index[4].dtype == "F64");
        CHECK(index[4].shape == std::vector<std::size_t>{4});
        CHECK(index[4].begin == 3);  // the data holds mask's 3 bytes first: F64 unaligned
        CHECK(index[4].end == 35);
        CHECK(index[5].dtype == "I64");
        CHECK(index[7].shape.empty());
        CHECK(attn::safetensors_metadata(st_dir + "dtypes.safetensors", "d") ==
              std::map<std::string, std::string>{{"format", "pt"}});
        CHECK(attn::safetensors_metadata(st_dir + "params.safetensors", "p").empty());
    }

    TEST_CASE("a header read once serves every later read, and a file that changed since is refused") {
        const std::string path = st_dir + "dtypes.safetensors";
        const attn::safetensors_header h = attn::read_safetensors_header(path, "d");
        CHECK(h.entries.size() == attn::safetensors_index(path, "d").size());
        CHECK(h.file_bytes == file_bytes(path).size());
        const auto f32 = [](const std::string& n) { return n == "f32"; };
        const auto once = attn::read_safetensors(path, "d", h, f32);
        const auto again = attn::read_safetensors(path, "d", f32);
        REQUIRE(once.count("f32") == 1);
        CHECK(std::memcmp(once.at("f32").values.data(), again.at("f32").values.data(), 4 * once.at("f32").values.size()) == 0);
        scratch_dir dir("safetensors-once");
        const std::string copy = dir / "grown.safetensors";
        { std::ofstream(copy, std::ios::binary) << file_bytes(path) << "xx"; }
        CHECK_THROWS_WITH_AS(attn::read_safetensors(copy, "--params g.safetensors", h, f32),
                             ("--params g.safetensors: the file changed while it was read (" + std::to_string(h.file_bytes) +
                              " bytes, now " + std::to_string(h.file_bytes + 2) + ")").c_str(),
                             attn::error);
    }

    TEST_CASE("only the wanted tensors are read; a dtype attn cannot read is refused only when wanted") {
        const std::string path = st_dir + "dtypes.safetensors";
        attn::read_budget budget(10000);
        const auto one = attn::read_safetensors(path, "d", [](const std::string& n) { return n == "f64"; }, &budget);
        REQUIRE(one.size() == 1);
        CHECK(budget.left() == 10000 - 16);
        CHECK_THROWS_WITH_AS(attn::read_safetensors(path, "--params d.safetensors"),
                             "--params d.safetensors: ids: dtype I64; attn reads F32, F16, BF16 and F64", attn::error);
        CHECK_THROWS_WITH_AS(
            attn::read_safetensors(path, "--params d.safetensors", [](const std::string& n) { return n == "mask"; }),
            "--params d.safetensors: mask: dtype BOOL; attn reads F32, F16, BF16 and F64", attn::error);
        SUBCASE("a dtype the format does not name is listed, and refused when wanted") {
            const std::string file =
                st_bytes("{" + st_entry("odd", "Q7", "[3]", "[0,5]") + ", " + st_entry("x", "F32", "[1]", "[5,9]") + "}",
                         std::string(5, 'q') + st_floats({3.0f}));
            const auto read = attn::parse_safetensors(file.data(), file.size(), "t", [](const std::string& n) { return n == "x"; });
            REQUIRE(read.size() == 1);
            CHECK(read.at("x").values(0) == 3.0f);
            CHECK(attn::parse_safetensors_index(file.data(), file.size(), "t")[0].dtype == "Q7");
            CHECK(st_refusal(file) == "--params t.safetensors: odd: dtype Q7; attn reads F32, F16, BF16 and F64");
        }
        SUBCASE("the budget refuses the header before it is parsed") {  // a tensor before it is allocated: dtypes above
            attn::read_budget small(500);  // the 488-byte header would take up to 16 times that, parsed
            CHECK_THROWS_WITH_AS(attn::read_safetensors(st_dir + "params.safetensors", "--params p.safetensors", {}, &small),
                                 "--params p.safetensors: its header of 488 bytes, parsed needs 7.6 KiB, more than the 500 "
                                 "bytes --max-memory allows (--max-memory none: no limit)",
                                 attn::error);
        }
    }

    TEST_CASE("another writer's checkpoints (make_model_fixtures.py) read, F32 equal to its .npz, F16 and BF16 near it") {
        for (const std::string model : {"gpt2", "bert", "llama", "mha"}) {
            CAPTURE(model);
            const std::string dir = reference_path("models/" + model + "/");
            const auto npz = attn::read_npz(dir + "model.npz", "npz");
            const auto f32 = attn::read_safetensors(dir + "model.safetensors", "f32");
            REQUIRE(f32.size() == npz.size());
            for (const auto& entry : npz) {
                const std::string& name = entry.first;
                const attn::loaded_tensor& t = entry.second;
                CAPTURE(name);
                REQUIRE(f32.count(name) == 1);
                CHECK(f32.at(name).shape == t.shape);
                bool same = f32.at(name).values.size() == t.values.size();
                for (std::size_t i = 0; same && i < t.values.size(); ++i)
                    same = bits(f32.at(name).values.data()[i]) == bits(t.values.data()[i]);
                CHECK(same);
            }
            for (const auto& [file, precision] : {std::pair{"model-f16.safetensors", 0x1p-11f}, {"model-bf16.safetensors", 0x1p-8f}}) {
                const std::string path = dir + file;
                CAPTURE(path);
                std::size_t compared = 0;
                // every float tensor (gpt2's bf16 file holds a BOOL attn.bias), compared by its
                // name without the prefixes some files add
                std::set<std::string> float_names;
                for (const auto& e : attn::safetensors_index(path, "i"))
                    if (e.dtype != "BOOL") float_names.insert(e.name);
                const auto floats = [&](const std::string& name) { return float_names.count(name) > 0; };
                for (const auto& entry : attn::read_safetensors(path, "half", floats)) {
                    const std::string& name = entry.first;
                    const attn::loaded_tensor& t = entry.second;
                    std::string bare = name;
                    for (const std::string prefix : {"transformer.", "bert."}) {
                        if (!npz.count(bare) && bare.rfind(prefix, 0) == 0) bare = bare.substr(prefix.size());
                        if (!npz.count(bare) && npz.count(prefix + bare)) bare = prefix + bare;
                    }
                    if (!npz.count(bare)) continue;  // lm_head.weight: tied to wte
                    const attn::loaded_tensor& want = npz.at(bare);
                    REQUIRE(t.values.size() == want.values.size());
                    bool near = true;
                    for (std::size_t i = 0; near && i < t.values.size(); ++i) {
                        const float w = want.values.data()[i], g = t.values.data()[i];
                        near = std::fabs(g - w) <= precision * std::fabs(w) + 1e-7f;
                    }
                    CHECK_MESSAGE(near, name);
                    ++compared;
                }
                CHECK(compared >= npz.size() - 1);
            }
        }
    }

    TEST_CASE("hand-made files: an empty header, a scalar, zero-size tensors, padding") {
        CHECK(st_refusal(st_bytes("{}")).empty());
        CHECK(st_refusal(st_bytes("{}      ")).empty());  // padded with spaces, as the safetensors package pads
        const std::string file = st_bytes("{" + st_entry("a", "F32", "[0]", "[0,0]") + ", " +
                                              st_entry("b", "F16", "[]", "[0,2]") + ", " +
                                              st_entry("c", "BF16", "[2,0,7]", "[2,2]") + "}",
                                          std::string("\x00\x3c", 2));  // F16 1.0
        const auto read = attn::parse_safetensors(file.data(), file.size(), "t");
        REQUIRE(read.size() == 3);
        CHECK(read.at("b").values() == 1.0f);
        CHECK(read.at("c").values.size() == 0);
    }

    TEST_CASE("hostile files: each is one line naming the file, before anything large is allocated") {
        const std::string f32x2 = st_entry("w", "F32", "[2]", "[0,8]");
        const std::string two = st_floats({1.0f, 2.0f});
        std::string ones65 = "1";
        for (int i = 1; i < 65; ++i) ones65 += ",1";
        struct hostile {
            const char* why;
            std::string bytes;
            std::string message;  // after "--params t.safetensors: "
        };
        const std::vector<hostile> cases = {
            {"empty", "", "empty file; expected a .safetensors file"},
            {"shorter than the size field", std::string("\x05\0\0", 3), "truncated: a .safetensors file starts with an 8-byte header size, found 3 bytes"},
            {"header past the file", st_with_size(1000, "{}"), "truncated: the header size is 1000 bytes, but 2 follow it"},
            {"header past the format's 100 MB", st_with_size(100'000'001, "{}"),
             "the header size 100000001 is more than the 100000000 bytes the format allows (not a .safetensors file?)"},
            {"header size 2^64 - 1", st_with_size(~std::uint64_t(0), "{}"),
             "the header size 18446744073709551615 is more than the 100000000 bytes the format allows (not a .safetensors file?)"},
            {"a zip archive", std::string("PK\x03\x04\x14\0\0\0\0\0", 10), "the header size 85966670672 is more than"},
            {"an empty header", st_bytes(""), "the header does not start with '{' (not a .safetensors file?)"},
            {"a list", st_bytes("[1, 2]"), "the header does not start with '{' (not a .safetensors file?)"},
            {"not JSON", st_bytes("{\"w\": nope}"), "the header is not valid JSON: parse error at line 1, column 8: syntax error while parsing value"},
            {"JSON, then more", st_bytes("{} {}"), "the header is not valid JSON: parse error at line 1, column 4"},
            {"invalid UTF-8", st_bytes("{\"w\xff\": 1}"), "the header is not valid JSON: parse error at line 1, column 4: syntax error while parsing object key - invalid string: ill-formed UTF-8 byte"},
            {"an entry that is a number", st_bytes("{\"w\": 3}"),
             "w: the entry is 3, not an object {\"dtype\": \"F32\", \"shape\": [...], \"data_offsets\": [begin, end]}"},
            {"an entry that is a list", st_bytes("{\"w\": [1]}"), "w: the entry is a list, not an object"},
            {"metadata that is a string", st_bytes("{\"__metadata__\": \"pt\"}"),
             "__metadata__ is \"pt\", not an object of strings"},
            {"metadata of numbers", st_bytes("{\"__metadata__\": {\"format\": 1}}"),
             "__metadata__: \"format\" is 1, not a string (the metadata maps strings to strings)"},
            {"metadata nested", st_bytes("{\"__metadata__\": {\"a\": {\"b\": \"c\"}}}"),
             "__metadata__: \"a\" is an object, not a string"},
            {"no dtype", st_bytes("{\"w\": {\"shape\": [2], \"data_offsets\": [0, 8]}}", two),
             "w: no \"dtype\"; an entry is {\"dtype\": \"F32\", \"shape\": [...], \"data_offsets\": [begin, end]}"},
            {"no shape", st_bytes("{\"w\": {\"dtype\": \"F32\", \"data_offsets\": [0, 8]}}", two), "w: no \"shape\""},
            {"no data_offsets", st_bytes("{\"w\": {\"dtype\": \"F32\", \"shape\": [2]}}", two), "w: no \"data_offsets\""},
            {"a dtype that is a number", st_bytes("{\"w\": {\"dtype\": 4}}"), "w: \"dtype\" is 4; expected a string such as \"F32\""},
            {"a shape that is a string", st_bytes("{\"w\": {\"shape\": \"2\"}}"), "w: \"shape\" is \"2\"; expected a list of sizes [2, 3]"},
            {"data_offsets that are an object", st_bytes("{\"w\": {\"data_offsets\": {}}}"),
             "w: \"data_offsets\" is an object; expected [begin, end]"},
            {"a negative size", st_bytes("{" + st_entry("w", "F32", "[-2]", "[0,8]") + "}", two),
             "w: \"shape\" holds -2; expected whole numbers >= 0"},
            {"a fractional size", st_bytes("{" + st_entry("w", "F32", "[2.5]", "[0,8]") + "}", two),
             "w: \"shape\" holds 2.5; expected whole numbers >= 0"},
            {"a size past 2^64", st_bytes("{" + st_entry("w", "F32", "[18446744073709551616]", "[0,8]") + "}", two),
             "w: \"shape\" holds 18446744073709551616; expected whole numbers >= 0"},
            {"a size that is a list", st_bytes("{" + st_entry("w", "F32", "[[2]]", "[0,8]") + "}", two),
             "w: \"shape\" holds a list; expected whole numbers >= 0"},
            {"a negative offset", st_bytes("{" + st_entry("w", "F32", "[2]", "[-8,0]") + "}", two),
             "w: \"data_offsets\" holds -8; expected whole numbers >= 0"},
            {"a true offset", st_bytes("{" + st_entry("w", "F32", "[2]", "[true,8]") + "}", two),
             "w: \"data_offsets\" holds true; expected whole numbers >= 0"},
            {"three offsets", st_bytes("{" + st_entry("w", "F32", "[2]", "[0,4,8]") + "}", two),
             "w: \"data_offsets\" holds more than two numbers; expected [begin, end]"},
            {"one offset", st_bytes("{" + st_entry("w", "F32", "[2]", "[8]") + "}", two),
             "w: \"data_offsets\" holds 1 numbers; expected two, [begin, end]"},
            {"65 axes", st_bytes("{" + st_entry("w", "F32", "[" + ones65 + "]", "[0,4]") + "}", st_floats({1.0f})),
             "w: \"shape\" has more than 64 axes"},
            {"a key an entry does not have", st_bytes("{\"w\": {\"dtype\": \"F32\", \"stride\": [1]}}"),
             "w: unexpected key \"stride\"; an entry is {\"dtype\""},
            {"a field twice", st_bytes("{\"w\": {\"dtype\": \"F32\", \"dtype\": \"F16\"}}"), "w: the key \"dtype\" appears twice"},
            {"a name twice", st_bytes("{" + f32x2 + ", " + st_entry("w", "F32", "[2]", "[8,16]") + "}", two + two),
             "the tensor \"w\" appears twice in the header"},
            {"metadata twice", st_bytes("{\"__metadata__\": {}, \"__metadata__\": {}}"),
             "the tensor \"__metadata__\" appears twice in the header"},
            {"begin after end", st_bytes("{" + st_entry("w", "F32", "[2]", "[8,0]") + "}", two),
             "w: data_offsets [8,0] begin after they end"},
            {"end past the data", st_bytes("{" + st_entry("w", "F32", "[4]", "[0,16]") + "}", two),
             "w: data_offsets [0,16] end past the 8 bytes of data after the header (a truncated file?)"},
            {"end past 2^64 - 8", st_bytes("{" + st_entry("w", "F32", "[2]", "[18446744073709551608,18446744073709551615]") + "}", two),
             "w: data_offsets [18446744073709551608,18446744073709551615] end past the 8 bytes"},
            {"a range shorter than the shape", st_bytes("{" + st_entry("w", "F32", "[3]", "[0,8]") + "}", two),
             "w: shape [3] of F32 needs 12 bytes; data_offsets [0,8] hold 8"},
            {"a range longer than the shape", st_bytes("{" + st_entry("w", "F16", "[2]", "[0,8]") + "}", two),
             "w: shape [2] of F16 needs 4 bytes; data_offsets [0,8] hold 8"},
            {"a size that overflows", st_bytes("{" + st_entry("w", "F32", "[4294967296,4294967296,16]", "[0,8]") + "}", two),
             "w: shape [4294967296,4294967296,16] of F32 needs more bytes than any file holds"},
            {"bytes that overflow", st_bytes("{" + st_entry("w", "F64", "[4611686018427387904]", "[0,8]") + "}", two),
             "w: shape [4611686018427387904] of F64 needs more bytes than any file holds"},
            {"sub-byte elements that end mid-byte", st_bytes("{" + st_entry("w", "F4", "[3]", "[0,2]") + "}", "ab"),
             "w: shape [3] of F4 is 12 bits, not whole bytes"},
            {"overlapping ranges", st_bytes("{" + st_entry("a", "F32", "[2]", "[0,8]") + ", " + st_entry("b", "F32", "[2]", "[4,12]") + "}",
                                            two + st_floats({3.0f})),
             "a and b overlap: data_offsets [0,8] and [4,12]"},
            {"the same range twice", st_bytes("{" + st_entry("a", "F32", "[2]", "[0,8]") + ", " + st_entry("b", "F32", "[2]", "[0,8]") + "}", two),
             "a and b overlap: data_offsets [0,8] and [0,8]"},
            {"a hole between tensors", st_bytes("{" + st_entry("a", "F32", "[1]", "[0,4]") + ", " + st_entry("b", "F32", "[1]", "[8,12]") + "}",
                                                two + st_floats({3.0f})),
             "bytes 4 to 8 of the data belong to no tensor (the format allows no holes)"},
            {"bytes after the last tensor", st_bytes("{" + f32x2 + "}", two + "polyglot"),
             "bytes 8 to 16 of the data belong to no tensor (the format allows no holes)"},
            {"data and no tensors", st_bytes("{}", "x"), "bytes 0 to 1 of the data belong to no tensor"},
            {"a name with escapes", st_bytes("{\"w\\u001b[31m\\u0000q\": 3}"), "w\\x1b[31m\\x00q: the entry is 3"},
            {"objects nested 100,000 deep", st_bytes("{\"w\": {\"dtype\": " + std::string(100000, '{')), "w: \"dtype\" is an object"},
            {"lists nested 100,000 deep", st_bytes("{\"w\": {\"shape\": " + std::string(100000, '[')), "w: \"shape\" holds a list"},
        };
        for (const hostile& h : cases) {
            const std::string why = h.why;
            const std::string message = st_refusal(h.bytes);
            CAPTURE(why);
            CAPTURE(message);
            CHECK(message.rfind("--params t.safetensors: " + h.message, 0) == 0);
            CHECK(message.find('\n') == std::string::npos);
            // the index checks the same, and refuses the same way
            std::string index_message;
            try {
                attn::parse_safetensors_index(h.bytes.data(), h.bytes.size(), "--params t.safetensors");
            } catch (const attn::error& e) {
                index_message = e.what();
            }
            CHECK(index_message == message);
        }
        // the whole message of one of each kind
        CHECK(st_refusal(st_bytes("{" + st_entry("a", "F32", "[2]", "[0,8]") + ", " + st_entry("b", "F32", "[2]", "[4,12]") + "}",
                                  two + st_floats({3.0f}))) ==
              "--params t.safetensors: a and b overlap: data_offsets [0,8] and [4,12]");
        CHECK(st_refusal(st_bytes("{\"w\": {\"dtype\": \"F32\", \"shape\": [2]}}", two)) ==
              "--params t.safetensors: w: no \"data_offsets\"; an entry is {\"dtype\": \"F32\", \"shape\": [...], "
              "\"data_offsets\": [begin, end]}");
    }

    TEST_CASE("files: missing, a directory, and devices and pipes up to 256 MiB") {
        CHECK_THROWS_WITH_AS(attn::read_safetensors("/nonexistent/m.safetensors", "--params m.safetensors"),
                             "--params m.safetensors: cannot open: No such file or directory", attn::error);
        CHECK_THROWS_WITH_AS(attn::safetensors_index("/tmp", "--params /tmp"), "--params /tmp: cannot open: Is a directory",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::read_safetensors("/dev/null", "--params n.safetensors"),
                             "--params n.safetensors: empty file; expected a .safetensors file", attn::error);
        CHECK_THROWS_WITH_AS(attn::read_safetensors("/dev/zero", "--params z.safetensors"),
                             doctest::Contains("--params z.safetensors: not a regular file, and it gives more than 256.0 MiB"),
                             attn::error);
    }
}
