// npz: NumPy's zip archives of .npy members, read from np.savez / np.savez_compressed
// and written for np.load.
//
// The archives in reference/io/ come from NumPy (make_io_fixtures.py). Writing is checked
// by reading back, and byte for byte: a stored member holds exactly write_npy's bytes,
// which are the bytes NumPy's own np.savez stored for the same array. That NumPy itself
// loads our archives is checked by tests/io/numpy_reads_npz.py from the CLI tests.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/npz_writer.hpp"
#include "attn/io/output_file.hpp"
#include "attn/io/tensor_file.hpp"

#include "support.hpp"

namespace {

namespace fs = std::filesystem;

const std::string config_text = R"({"format": "attn.trace/1", "heads": 2, "note": "café ≤ 𝑥"})";


std::string npy_bytes(const std::vector<float>& values, const std::vector<std::size_t>& shape, bool boolean) {
    std::string out;
    attn::write_npy(values.data(), shape, boolean, [&](const char* p, std::size_t n) { out.append(p, n); });
    return out;
}

void check_equal(const std::vector<float>& actual, const std::vector<float>& expected) {
    REQUIRE(actual.size() == expected.size());
    for (std::size_t e = 0; e < actual.size(); ++e) {
        CAPTURE(e);
        if (std::isnan(expected[e])) CHECK(std::isnan(actual[e]));
        else CHECK(actual[e] == expected[e]);
    }
}

}  // namespace

TEST_SUITE("npz") {
    TEST_CASE("np.savez and np.savez_compressed archives read the same") {
        const auto stored = attn::read_npz(io_dir + "params.npz", "--params params.npz");
        const auto deflated = attn::read_npz(io_dir + "params_compressed.npz", "--params params_compressed.npz");
        std::vector<std::string> names;
        for (const auto& [name, t] : stored) names.push_back(name);
        CHECK(names == std::vector<std::string>{"b_k", "b_o", "b_q", "b_v", "w_k", "w_o", "w_q", "w_v"});
        for (const auto& entry : stored) {  // no structured binding: CAPTURE's lambda (clang) cannot take one
            const std::string& name = entry.first;
            const auto& t = entry.second;
            CAPTURE(name);
            CHECK(t.shape == (name[0] == 'w' ? std::vector<std::size_t>{8, 8} : std::vector<std::size_t>{8}));
            CHECK_FALSE(t.boolean);
            REQUIRE(deflated.count(name) == 1);
            CHECK(values_of(deflated.at(name)) == values_of(t));
        }
        // torch.manual_seed(0); nn.Linear(8, 8) for q, k, v, o
        CHECK(stored.at("w_q").values(0, 0) == -0.0026469905860722065f);
        CHECK(stored.at("b_o").values(7) == 0.10414106398820877f);
    }

    TEST_CASE("text members: returned when asked for, else skipped") {
        std::map<std::string, std::string> texts;
        const auto tensors = attn::read_npz(io_dir + "numpy_written.npz", "--params n.npz", &texts);
        REQUIRE(tensors.size() == 2);
        CHECK(texts == std::map<std::string, std::string>{{"config", config_text}});
        const auto& weights = tensors.at("softmax.weights");
        CHECK(weights.shape == std::vector<std::size_t>{2, 3});
        check_equal(values_of(weights), {0.25f, 0.75f, 1.0f, 0.5f, not_a_number, -inf});
        CHECK(weights.non_finite == 2);
        CHECK(weights.first_non_finite == std::vector<std::size_t>{1, 1});
        CHECK(tensors.at("mask").boolean);
        CHECK(values_of(tensors.at("mask")) == std::vector<float>{1, 0, 1, 1});
        CHECK(attn::read_npz(io_dir + "numpy_written.npz", "--params n.npz").size() == 2);
    }

    TEST_CASE("only the members asked for") {
        std::map<std::string, std::string> texts;
        const auto only_mask = [](const std::string& name) { return name == "mask" || name == "config"; };
        const auto tensors = attn::read_npz(io_dir + "numpy_written.npz", "--from n.npz", &texts, only_mask);
        CHECK(tensors.size() == 1);
        CHECK(tensors.count("mask") == 1);
        CHECK(texts.count("config") == 1);
        const auto none = [](const std::string&) { return false; };
        CHECK(attn::read_npz(io_dir + "numpy_written.npz", "--from n.npz", nullptr, none).empty());
    }

    TEST_CASE("archives that cannot be read: one line saying why") {
        const auto refuse = [](const std::string& name) { (void)attn::read_npz(io_dir + name, "--params " + name); };
        CHECK_THROWS_WITH_AS(refuse("params_truncated.npz"),
                             "--params params_truncated.npz: truncated (not a complete zip archive)", attn::error);
        CHECK_THROWS_WITH_AS(refuse("not_zip.npz"), "--params not_zip.npz: not an .npz file (not a zip archive)",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("npy_named.npz"),
                             "--params npy_named.npz: not an .npz file: it holds a single .npy array (np.save); name it "
                             ".npy, or write an archive with np.savez",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("bad_member.npz"),
                             "--params bad_member.npz: w_k: unsupported dtype '<c8' (complex64); expected "
                             "little-endian float16, float32, float64, bool or integers",
                             attn::error);
        CHECK_THROWS_WITH_AS(refuse("missing.npz"), "--params missing.npz: cannot open: No such file or directory",
                             attn::error);
        scratch_dir dir("npz");
        std::ofstream(dir / "big.npz").close();
        fs::resize_file(dir / "big.npz", 0x100000000ull);  // sparse: takes no disk space
        CHECK_THROWS_WITH_AS(attn::read_npz(dir / "big.npz", "--params big.npz"),
                             "--params big.npz: .npz archives of 4 GiB or more cannot be read (this build's minizip 1.1 "
                             "cannot read zip64 sizes); split the arrays over smaller archives",
                             attn::error);
        std::ofstream(dir / "empty.npz").close();
        CHECK_THROWS_WITH_AS(attn::read_npz(dir / "empty.npz", "--params e.npz"),
                             "--params e.npz: empty file; expected an .npz (zip) archive", attn::error);
    }

    TEST_CASE("a corrupt member is named") {
        scratch_dir dir("npz");
        std::string bytes = file_bytes(io_dir + "params.npz");
        // np.savez stores each member as-is: flip a byte of b_q's data, so its CRC no longer matches
        const std::string b_q_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (8,), }";
        const auto first = bytes.find(b_q_header);
        REQUIRE(first != std::string::npos);
        const auto data = bytes.find('\n', first) + 1;
        bytes[data + 3] ^= 0x40;
        std::ofstream(dir / "p.npz", std::ios::binary) << bytes;
        CHECK_THROWS_WITH_AS(attn::read_npz(dir / "p.npz", "--params p.npz"),
                             "--params p.npz: b_q: corrupt member (CRC mismatch)", attn::error);
    }

    TEST_CASE("write_npz then read_npz gives the same arrays") {
        scratch_dir dir("npz");
        const std::vector<float> weights{0.25f, 0.75f, 1.0f, 0.5f, not_a_number, -inf};
        const std::vector<float> mask{1, 0, 1, 1};
        const std::vector<float> scalar{-3.5f};
        const std::vector<attn::npz_member> members{
            attn::npz_member::text_member("config", config_text),
            attn::npz_member::tensor("softmax.weights", {2, 3}, weights.data()),
            attn::npz_member::tensor("mask.mask", {2, 2}, mask.data(), true),
            attn::npz_member::tensor("scalar", {}, scalar.data()),
            attn::npz_member::tensor("empty", {0, 3}, nullptr),
        };
        attn::write_npz(dir / "t.npz", "--out t.npz", members);
        CHECK(dir.entries() == 1);  // no temporary file left behind

        std::map<std::string, std::string> texts;
        const auto back = attn::read_npz(dir / "t.npz", "--out t.npz", &texts);
        CHECK(texts.at("config") == config_text);
        REQUIRE(back.size() == 4);
        check_equal(values_of(back.at("softmax.weights")), weights);
        CHECK(back.at("softmax.weights").shape == std::vector<std::size_t>{2, 3});
        CHECK(back.at("mask.mask").boolean);
        CHECK(values_of(back.at("mask.mask")) == mask);
        CHECK(back.at("scalar").shape.empty());
        CHECK(values_of(back.at("scalar")) == scalar);
        CHECK(back.at("empty").shape == std::vector<std::size_t>{0, 3});

        SUBCASE("members are stored: the archive holds write_npy's bytes as they are") {
            const std::string archive = file_bytes(dir / "t.npz");
            CHECK(archive.find(npy_bytes(weights, {2, 3}, false)) != std::string::npos);
            CHECK(archive.find(npy_bytes(mask, {2, 2}, true)) != std::string::npos);
            CHECK(archive.find("softmax.weights.npy") != std::string::npos);
        }
        SUBCASE("... which are the bytes np.savez stored for the same arrays") {
            const std::string numpy = file_bytes(io_dir + "numpy_written.npz");
            CHECK(numpy.find(npy_bytes(weights, {2, 3}, false)) != std::string::npos);
            CHECK(numpy.find(npy_bytes(mask, {2, 2}, true)) != std::string::npos);
            std::string text;
            attn::write_npy_text(config_text, [&](const char* p, std::size_t n) { text.append(p, n); });
            CHECK(numpy.find(text) != std::string::npos);
        }
        SUBCASE("the same members give the same bytes") {
            attn::write_npz(dir / "again.npz", "--out again.npz", members);
            CHECK(file_bytes(dir / "again.npz") == file_bytes(dir / "t.npz"));
        }
    }

    TEST_CASE("write_npz writes whole or not at all") {
        scratch_dir dir("npz");
        const std::vector<float> one{1.0f};
        std::ofstream(dir / "t.npz") << "old";
        SUBCASE("a member without data: the old file stays, no temporary is left") {
            CHECK_THROWS_WITH_AS(attn::write_npz(dir / "t.npz", "--out t.npz",
                                                 {attn::npz_member::tensor("a", {1}, one.data()),
                                                  attn::npz_member::tensor("b", {2}, nullptr)}),
                                 "--out t.npz: b has no data", attn::error);
        }
        SUBCASE("two members with one name") {
            CHECK_THROWS_WITH_AS(attn::write_npz(dir / "t.npz", "--out t.npz",
                                                 {attn::npz_member::tensor("a", {1}, one.data()),
                                                  attn::npz_member::tensor("a", {1}, one.data())}),
                                 "--out t.npz: two .npz members are named a", attn::error);
        }
        SUBCASE("a writer that fails half way") {
            CHECK_THROWS_WITH_AS(
                [&] {
                    attn::output_file file(dir / "t.npz", "--out t.npz");
                    attn::write_npz(file.stream(), "--out t.npz", {attn::npz_member::tensor("a", {1}, one.data())});
                    throw attn::error("--out t.npz: stopped");
                }(),
                "--out t.npz: stopped", attn::error);
        }
        CHECK(file_bytes(dir / "t.npz") == "old");
        CHECK(dir.entries() == 1);
        CHECK_THROWS_WITH_AS(attn::write_npz(dir / "no/such/dir/t.npz", "--out t.npz", {}),
                             ("--out t.npz: cannot create a file in " + (dir / "no/such/dir") +
                              ": No such file or directory").c_str(),
                             attn::error);
    }

    TEST_CASE("65535 members or more: the archive ends with zip64 records, and reads back") {
        scratch_dir dir("npz");
        const float one = 1.0f;
        std::vector<attn::npz_member> members;
        for (int i = 0; i < 70000; ++i) members.push_back(attn::npz_member::tensor("m" + std::to_string(i), {1}, &one));
        attn::write_npz(dir / "many.npz", "--out many.npz", members);
        const std::string archive = file_bytes(dir / "many.npz");
        CHECK(archive.find(std::string("PK\x06\x06", 4)) != std::string::npos);  // the zip64 end record
        CHECK(archive.find(std::string("PK\x06\x07", 4)) != std::string::npos);  // and its locator
        const auto back = attn::read_npz(dir / "many.npz", "--out many.npz");
        CHECK(back.size() == 70000);
        CHECK(values_of(back.at("m69999")) == std::vector<float>{1.0f});
    }

    TEST_CASE("write_npz to a stream writes the same bytes as to a file, without seeking") {
        scratch_dir dir("npz");
        const std::vector<float> weights{0.25f, 0.75f, 1.0f, 0.5f};
        const std::vector<attn::npz_member> members{attn::npz_member::text_member("config", config_text),
                                                    attn::npz_member::tensor("softmax.weights", {2, 2}, weights.data())};
        attn::write_npz(dir / "t.npz", "--out t.npz", members);
        std::ostringstream stream;  // cannot seek back: a pipe would not either
        attn::write_npz(stream, "--out -", members);
        CHECK(stream.str() == file_bytes(dir / "t.npz"));
    }

    TEST_CASE("an array written in pieces: a data descriptor after its bytes, read back the same") {
        scratch_dir dir("npz");
        const std::vector<float> weights{0.25f, 0.75f, 1.0f, 0.5f, -inf, 2.0f};
        const std::vector<float> mask{1, 0, 0, 1};
        std::ostringstream stream;  // cannot seek back: a pipe would not either
        attn::npz_writer zip(stream, "--out -");
        zip.begin_array("softmax.weights", {2, 3}, false);
        zip.write(weights.data(), 1);  // pieces that cut a row, as blocks of rows may not
        zip.write(weights.data() + 1, 4);
        zip.write(weights.data() + 5, 1);
        zip.end_array();
        zip.begin_array("mask.mask", {2, 2}, true);
        zip.write(mask.data(), 4);
        zip.end_array();
        zip.add(attn::npz_member::text_member("config", config_text));
        zip.finish();
        const std::string archive = stream.str();
        std::ofstream(dir / "t.npz", std::ios::binary) << archive;

        std::map<std::string, std::string> texts;
        const auto back = attn::read_npz(dir / "t.npz", "t.npz", &texts);
        REQUIRE(back.size() == 2);
        check_equal(values_of(back.at("softmax.weights")), weights);
        CHECK(back.at("softmax.weights").shape == std::vector<std::size_t>{2, 3});
        CHECK(back.at("mask.mask").boolean);
        CHECK(values_of(back.at("mask.mask")) == mask);
        CHECK(texts.at("config") == config_text);
        // stored whole: the member's bytes are write_npy's, then the descriptor
        // "PK\x07\x08", its CRC-32 and two 4-byte sizes
        const std::string npy = npy_bytes(weights, {2, 3}, false);
        const std::size_t at = archive.find(npy);
        REQUIRE(at != std::string::npos);
        CHECK(archive.compare(at + npy.size(), 4, std::string("PK\x07\x08", 4)) == 0);
        std::uint32_t size = 0;
        std::memcpy(&size, archive.data() + at + npy.size() + 8, 4);
        CHECK(size == npy.size());
        // flag bit 3 in the local header (offset 6) of the first member
        CHECK((static_cast<unsigned char>(archive[6]) & 0x08) != 0);
    }

    TEST_CASE("an array in pieces: too many elements, too few, or another member while it is open") {
        std::ostringstream stream;
        attn::npz_writer zip(stream, "--out t.npz");
        const std::vector<float> v(8, 1.0f);
        zip.begin_array("a", {2, 2}, false);
        zip.write(v.data(), 3);
        CHECK_THROWS_WITH_AS(zip.write(v.data(), 2), "--out t.npz: more elements than the array's shape holds",
                             attn::error);
        CHECK_THROWS_WITH_AS(zip.end_array(), "--out t.npz: an array ended before all its elements were written",
                             attn::error);
        CHECK_THROWS_WITH_AS(zip.begin_array("b", {1}, false), "--out t.npz: b added while a.npy is still being written",
                             attn::error);
        CHECK_THROWS_WITH_AS(zip.finish(), "--out t.npz: the archive ended while a.npy was still being written",
                             attn::error);
        zip.write(v.data(), 1);
        CHECK_NOTHROW(zip.end_array());
        CHECK_THROWS_WITH_AS(zip.begin_array("a", {1}, false), "--out t.npz: two .npz members are named a", attn::error);
    }

    TEST_CASE("an array of 12 MiB in one piece: its CRC-32 reads back right") {
        scratch_dir dir("npz");
        std::vector<float> big(3u << 20);
        for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i % 1000) * 0.001f;
        std::ostringstream stream;
        attn::npz_writer zip(stream, "--out -");
        zip.begin_array("big", {3, 1u << 20}, false);
        zip.write(big.data(), big.size());  // one call: above the size that splits the CRC in halves
        zip.end_array();
        zip.finish();
        std::ofstream(dir / "big.npz", std::ios::binary) << stream.str();
        const auto back = attn::read_npz(dir / "big.npz", "big.npz");  // minizip checks the CRC
        REQUIRE(back.size() == 1);
        CHECK(values_of(back.at("big")) == big);
    }
}
