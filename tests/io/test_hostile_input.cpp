// Hostile input (issue 11): files made to crash, exhaust or mislead the readers, and
// sizes made to overflow. Each case failed on the main of the issue (a crash, a
// signed overflow, memory spent before --max-memory was checked, raw escapes in a
// message); each must now be one clear attn::error before anything large is allocated.
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/io/json_tensor.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/tensor_file.hpp"
#include "support.hpp"

namespace {

/// A version 2.0 .npy whose header is `dict` (padded to end in '\n'), followed by `data`.
std::string npy_with_header(const std::string& dict, const std::string& data = "") {
    const std::string header = dict + "\n";
    std::string out = "\x93NUMPY";
    out += '\x02';
    out += '\x00';
    for (int k = 0; k < 4; ++k) out += static_cast<char>((header.size() >> (8 * k)) & 0xff);
    return out + header + data;
}

std::string what_of(const std::string& bytes) {
    try {
        attn::parse_npy(bytes.data(), bytes.size(), "--input x.npy");
    } catch (const attn::error& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_SUITE("hostile input") {
    TEST_CASE("an npy header nested 30,000 deep is an error, not a stack overflow") {
        const std::string deep = std::string(30000, '(') + std::string(30000, ')');
        const std::string message = what_of(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': " + deep + ", }"));
        CHECK(message.rfind("--input x.npy: malformed .npy header: more than 64 nested brackets", 0) == 0);
        SUBCASE("lists and dicts too") {
            const std::string lists = std::string(30000, '[') + std::string(30000, ']');
            CHECK(what_of(npy_with_header("{'x': " + lists + "}")).find("more than 64 nested brackets") != std::string::npos);
            std::string dicts;
            for (int i = 0; i < 30000; ++i) dicts += "{'a': ";
            CHECK(what_of(npy_with_header(dicts)).find("more than 64 nested brackets") != std::string::npos);
        }
        SUBCASE("64 deep is still read (and then refused for what it says)") {
            const std::string ok = std::string(63, '(') + std::string(63, ')');
            CHECK(what_of(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': " + ok + ", }"))
                      .find("nested brackets") == std::string::npos);
        }
    }

    TEST_CASE("a zero size does not let the other sizes overflow the strides") {
        CHECK(what_of(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 9000000162574, 9000001625749210), }")) ==
              "--input x.npy: malformed .npy header: shape [0,9000000162574,9000001625749210] of float32 needs more "
              "bytes than any file holds");
        CHECK(what_of(npy_with_header("{'descr': '|b1', 'fortran_order': False, 'shape': (4611686018427387904, 3, 0), }"))
                  .find("needs more bytes than any file holds") != std::string::npos);
        // an empty array of sane sizes is read (and refused later, by the size checks)
        CHECK(attn::parse_npy(npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }").data(),
                              npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }").size(), "x")
                  .values.size() == 0);
    }

    TEST_CASE("the read budget refuses a tensor before it is allocated") {
        attn::read_budget budget(1000);
        const std::string npy = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (16, 16), }",
                                                std::string(16 * 16 * 4, '\0'));
        const char* next = npy.data();
        std::size_t left = npy.size();
        const attn::byte_source source = [&](char* buffer, std::size_t n) {
            n = std::min(n, left);
            std::copy(next, next + n, buffer);
            next += n;
            left -= n;
            return n;
        };
        CHECK_THROWS_WITH_AS(attn::read_npy(source, npy.size(), "--input x.npy", &budget),
                             "--input x.npy: shape [16,16] as float32 needs 1.0 KiB, more than the 1000 bytes "
                             "--max-memory allows (--max-memory none: no limit)",
                             attn::error);
        SUBCASE("shared by the files of a run") {
            attn::read_budget shared(1500);
            shared.take(1000, "--input x.npy", "shape [250]");
            CHECK_THROWS_WITH_AS(shared.take(1000, "--params p.json", "shape [250]"),
                                 "--params p.json: shape [250] needs 1000 bytes, more than the 500 bytes --max-memory "
                                 "1.5 KiB leaves after the other files (--max-memory none: no limit)",
                                 attn::error);
            CHECK(shared.left() == 500);
        }
        SUBCASE("JSON: the numbers read so far count") {
            std::string text = "[";
            for (int i = 0; i < 1000; ++i) text += "1.5,";
            text += "2]";
            attn::read_budget small(1024);
            CHECK_THROWS_WITH_AS(attn::parse_json_tensor(text, "--input x.json", &small),
                                 doctest::Contains("--input x.json: the numbers read so far need"), attn::error);
            attn::read_budget enough(1 << 20);
            CHECK(attn::parse_json_tensor(text, "--input x.json", &enough).values.size() == 1001);
            CHECK(enough.left() == (1u << 20) - 4 * 1001);
        }
    }

    TEST_CASE("a file that is not a regular one is read up to 256 MiB") {
        CHECK_THROWS_WITH_AS(attn::read_text_file("/dev/zero", "--input z.json"),
                             "--input z.json: not a regular file, and it gives more than 256.0 MiB (the most attn reads "
                             "from a pipe or device)",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::read_npy_file("/dev/zero", "--input z.npy"),
                             doctest::Contains("not a regular file, and it gives more than 256.0 MiB"), attn::error);
        CHECK_THROWS_WITH_AS(attn::read_npz("/dev/zero", "--params z.npz"),
                             doctest::Contains("--params z.npz: not a regular file"), attn::error);
    }

    TEST_CASE("an .npz is listed without inflating, and only the members asked for are read") {
        const scratch_dir dir("hostile");
        const std::string path = dir / "two.npz";
        std::vector<float> small(4, 1.0f), large(64 * 64, 2.0f);
        attn::write_npz(path, "t", {attn::npz_member::tensor("input.x", {1, 2, 2}, small.data()),
                                    attn::npz_member::tensor("other", {64, 64}, large.data())});
        CHECK(attn::npz_array_names(path, "t") == std::vector<std::string>{"input.x", "other"});
        attn::read_budget budget(100);  // input.x fits, other would not
        const auto read = attn::read_npz(path, "t", nullptr, [](const std::string& n) { return n == "input.x"; }, &budget);
        CHECK(read.size() == 1);
        CHECK(budget.left() == 84);
        CHECK_THROWS_WITH_AS(attn::read_npz(path, "t", nullptr, {}, &budget),
                             "t: other: shape [64,64] as float32 needs 16.0 KiB, more than the 68 bytes --max-memory 100 "
                             "bytes leaves after the other files (--max-memory none: no limit)",
                             attn::error);
    }

    TEST_CASE("sizes that no machine can address are usage errors before anything is derived from them") {
        attn::config c;
        c.batch = 6148914691236517206;
        c.seq = c.kv_seq = 1;
        CHECK_THROWS_WITH_AS(attn::check_addressable(c),
                             "these sizes make a tensor [B,H,Sq,Sk] = [6148914691236517206,2,1,1] of more than 128 TiB, "
                             "more than a 64-bit machine can address; give smaller sizes",
                             attn::usage_error);
        c.batch = 4611686018427387904;
        CHECK_THROWS_AS(attn::check_addressable(c), attn::usage_error);
        c.batch = 1;
        c.d_model = c.d_in = c.d_kv_in = std::int64_t(1) << 40;
        CHECK_THROWS_WITH_AS(attn::check_addressable(c), doctest::Contains("[D,Din]"), attn::usage_error);
        c.d_model = c.d_in = c.d_kv_in = 8;
        CHECK_NOTHROW(attn::check_addressable(c));
    }

    TEST_CASE("control characters in names are escaped, and a NUL cannot cut a message") {
        CHECK(attn::printable_text("w\x1b[31mq") == "w\\x1b[31mq");
        CHECK(attn::printable_text(std::string("a\0b", 3)) == "a\\x00b");
        CHECK(attn::printable_text("tab\there\x7f") == "tab\\x09here\\x7f");
        CHECK(attn::printable_text("c1\xc2\x9b" "31m") == "c1\\u009b31m");  // U+009B, CSI, in UTF-8
        CHECK(attn::printable_text("Q\xc2\xb7K") == "Q\xc2\xb7K");           // U+00B7 is text: kept
        CHECK(attn::printable_text("end\xc2") == "end\xc2");
        const std::string key = std::string("{\"w\\u001b[31mq\\u0000z\": [[1]]}");
        CHECK_THROWS_WITH_AS(attn::parse_json_tensors("{\"a\": [[1]], \"a\": [[2]]}", "--params p.json"),
                             "--params p.json: the key \"a\" appears twice", attn::error);
        const auto tensors = attn::parse_json_tensors(key, "--params p.json");
        REQUIRE(tensors.size() == 1);
        CHECK(attn::printable_text(tensors.begin()->first) == "w\\x1b[31mq\\x00z");
    }
}
