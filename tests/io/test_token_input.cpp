// --tokens' ids and --vocab's tokenizer vocabulary (token_input.hpp), hostile input included;
// the token table's rows read alone from a .safetensors (read_safetensors_rows).
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "attn/compute/error.hpp"
#include "attn/io/safetensors.hpp"
#include "attn/io/token_input.hpp"

namespace {

/// The message `f` throws as `E`, or "" when it throws nothing (another type fails the test).
template <typename E, typename F>
std::string token_message_of(F f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    return "";
}

bool token_message_has(const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
}

}  // namespace

TEST_SUITE("token input") {

TEST_CASE("--tokens: comma-separated ids, spaces and a trailing newline allowed") {
    CHECK(attn::parse_token_ids("464,2068,7586") == std::vector<std::int64_t>{464, 2068, 7586});
    CHECK(attn::parse_token_ids(" 3, 6 ,7\n") == std::vector<std::int64_t>{3, 6, 7});
    CHECK(attn::parse_token_ids("0") == std::vector<std::int64_t>{0});
    CHECK(attn::parse_token_ids("2147483647") == std::vector<std::int64_t>{2147483647});
}

TEST_CASE("--tokens: empty lists, empty items, non-numbers, negatives and huge ids are usage errors naming --tokens") {
    for (const char* bad : {"", " ", "\n", "1,,2", "1,2,", ",1", "a", "1.5", "-1", "0x10", "1e3", "2147483648",
                            "99999999999999999999", "1;2", "1 2", "+1"}) {
        CAPTURE(bad);
        const std::string m = token_message_of<attn::usage_error>([&] { attn::parse_token_ids(bad); });
        CHECK(token_message_has(m, "--tokens"));
        CHECK(m.find('\n') == std::string::npos);
    }
    const std::string escaped = token_message_of<attn::usage_error>([] { attn::parse_token_ids("1,\x1b[31m"); });
    CHECK(escaped.find('\x1b') == std::string::npos);  // the item is quoted escaped
    std::string many;
    for (std::size_t i = 0; i <= attn::max_token_count; ++i) many += (i ? ",1" : "1");
    CHECK(token_message_has(token_message_of<attn::usage_error>([&] { attn::parse_token_ids(many); }), "more than 65536"));
}

TEST_CASE("--tokens @FILE reads the ids from a file; a missing or oversized file names it") {
    const auto dir = std::filesystem::temp_directory_path() / "attn_test_tokens";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "tokens.txt").string();
    std::ofstream(path) << "3,6,7,8,33\n";
    CHECK(attn::parse_token_ids("@" + path) == std::vector<std::int64_t>{3, 6, 7, 8, 33});
    CHECK(token_message_has(token_message_of<attn::error>([&] { attn::parse_token_ids("@" + path + ".missing"); }),
                            "tokens.txt.missing"));
    {
        std::ofstream big(path);
        big << std::string(attn::max_token_file_bytes + 1, '1');
    }
    CHECK(token_message_has(token_message_of<attn::error>([&] { attn::parse_token_ids("@" + path); }), "1 MiB"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("--vocab: {\"token\": id} and {\"id\": \"token\"}, as Hugging Face writes them") {
    const auto v = attn::parse_vocab(R"({"!": 0, "\u0120the": 1, "The": 2})", "--vocab v.json");
    REQUIRE(v.size() == 3);
    CHECK(v.at(1) == "\xC4\xA0the");  // GPT-2's Ġ, kept
    const auto by_id = attn::parse_vocab(R"({"0": "<unk>", "7": "\u2581robot"})", "--vocab v.json");
    CHECK(by_id.at(7) == "\xE2\x96\x81robot");
    CHECK(attn::token_labels(v, {2, 1, 1}, "--vocab v.json") == std::vector<std::string>{"The", "\xC4\xA0the", "\xC4\xA0the"});
}

TEST_CASE("--vocab: hostile files are one line naming the file") {
    const char* bad[] = {
        "",                              // not JSON
        "[1, 2]",                        // not an object
        "{}",                            // no tokens
        "\"a\"",                         //
        R"({"a": "b"})",                 // {"id": "token"} with a key that is no id
        R"({"a": 1.5})",                 // a fractional id
        R"({"a": -1})",                  // a negative id
        R"({"a": 2147483648})",          // past int32
        R"({"a": "1", "b": 2})",         // mixed: a token id that is a string
        R"({"a": null})",                //
        R"({"a": [1]})",                 //
        R"({"a": 1, "b": 1})",           // an id given twice
        R"({"1": "a", "01": "b"})",      // the same id twice, by key
        R"({"a": 1)",                    // cut short
    };
    for (const char* text : bad) {
        CAPTURE(text);
        const std::string m = token_message_of<attn::error>([&] { attn::parse_vocab(text, "--vocab v.json"); });
        CHECK(token_message_has(m, "--vocab v.json"));
        CHECK(m.find('\n') == std::string::npos);
    }
    CHECK(token_message_has(token_message_of<attn::error>([] { attn::parse_vocab(R"({"a": 1, "b": 1})", "--vocab v.json"); }),
                            "id 1 is given twice"));
    std::string deep(100000, '[');  // nested too deep: refused, not a stack overflow
    CHECK(token_message_has(token_message_of<attn::error>([&] { attn::parse_vocab(deep, "--vocab v.json"); }), "--vocab v.json"));
}

TEST_CASE("--vocab: an id the vocabulary lacks is named; control characters in tokens are escaped") {
    const auto v = attn::parse_vocab("{\"a\\u001b[2J\": 0, \"\\u009b\": 1, \"b\": 2}", "--vocab v.json");
    const auto labels = attn::token_labels(v, {0, 1, 2}, "--vocab v.json");
    CHECK(labels[0] == "a\\x1b[2J");
    CHECK(labels[1] == "\\u009b");
    CHECK(token_message_has(token_message_of<attn::error>([&] { attn::token_labels(v, {3}, "--vocab v.json"); }),
                            "no token for id 3"));
}

TEST_CASE("--vocab: a file larger than 64 MiB is refused before it is read") {
    const auto dir = std::filesystem::temp_directory_path() / "attn_test_vocab";
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "vocab.json").string();
    {
        std::ofstream f(path);
        f.seekp(static_cast<std::streamoff>(attn::max_vocab_bytes));  // sparse: no disk used
        f.put(' ');
    }
    CHECK(token_message_has(token_message_of<attn::error>([&] { attn::read_vocab(path, "--vocab vocab.json"); }), "64 MiB"));
    std::filesystem::remove_all(dir);
}

}  // TEST_SUITE("token input")

TEST_CASE("read_safetensors_rows: the rows asked for, F32, F16 and BF16, as the whole tensor's; bad rows named") {
    const std::string dir = std::string(ATTN_REFERENCE_DIR) + "/models/";
    const struct {
        const char* file;
        const char* table;
    } cases[] = {{"gpt2/model.safetensors", "wte.weight"},
                 {"gpt2/model-f16.safetensors", "wte.weight"},
                 {"gpt2/model-bf16.safetensors", "transformer.wte.weight"},
                 {"llama/model-bf16.safetensors", "model.embed_tokens.weight"}};
    const std::vector<std::int64_t> rows{3, 39, 0, 3};
    for (const auto& c : cases) {
        CAPTURE(c.file);
        const std::string path = dir + c.file;
        const auto whole = attn::read_safetensors(path, path, [&](const std::string& n) { return n == c.table; });
        REQUIRE(whole.count(c.table) == 1);
        const attn::loaded_tensor& table = whole.at(c.table);
        attn::read_budget budget(std::uint64_t(1) << 20);
        const attn::loaded_tensor taken = attn::read_safetensors_rows(path, path, c.table, rows, &budget);
        const std::size_t D = table.shape[1];
        REQUIRE(taken.shape == std::vector<std::size_t>{rows.size(), D});
        for (std::size_t i = 0; i < rows.size(); ++i)
            for (std::size_t d = 0; d < D; ++d)
                CHECK(taken.values(i, d) == table.values(static_cast<std::size_t>(rows[i]), d));
        // the budget paid the header and the four rows as float32, not the table
        CHECK((std::uint64_t(1) << 20) - budget.left() < 16384 + rows.size() * D * 4);
        CHECK(token_message_has(token_message_of<attn::error>([&] { attn::read_safetensors_rows(path, path, c.table, {40}); }),
                                "no row 40 (it has 40)"));
        CHECK(token_message_has(token_message_of<attn::error>([&] { attn::read_safetensors_rows(path, path, c.table, {-1}); }),
                                "no row -1"));
        CHECK(token_message_has(token_message_of<attn::error>([&] { attn::read_safetensors_rows(path, path, "nope", {0}); }),
                                "no tensor nope"));
    }
}
