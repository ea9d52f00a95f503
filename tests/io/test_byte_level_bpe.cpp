// GPT-2's tokenizer against an independent implementation (the npm package gpt-3-encoder,
// tests/reference/make_gpt2_tokenizer_fixtures.js), and its refusals.
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/compute/error.hpp"
#include "attn/io/byte_level_bpe.hpp"
#include "support.hpp"

namespace {
const std::string gpt2_tokenizer_dir = std::string(ATTN_REFERENCE_DIR) + "/tokenizers/gpt2";
}

TEST_CASE("GPT-2's byte-level BPE gives gpt-3-encoder's ids: other languages, emoji, spaces, digits, contractions") {
    const attn::byte_level_bpe bpe(gpt2_tokenizer_dir + "/vocab.json", gpt2_tokenizer_dir + "/merges.txt");
    const nlohmann::json doc = read_json(gpt2_tokenizer_dir + "/cases.json");
    REQUIRE(doc.at("cases").size() >= 25);
    for (const auto& one : doc.at("cases")) {
        const std::string text = one.at("text").get<std::string>();
        CAPTURE(text);
        std::vector<std::int64_t> ids;
        for (const attn::token_piece& t : bpe.encode(text, "--text")) ids.push_back(t.id);
        CHECK(ids == one.at("ids").get<std::vector<std::int64_t>>());
    }
    const std::vector<attn::token_piece> robot = bpe.encode("The robot reads", "--text");
    REQUIRE(robot.size() == 3);
    CHECK(robot[1].piece == "\xC4\xA0robot");  // "Ġrobot": the space is U+0120
    CHECK(robot[1].id == 9379);                 // GPT-2's own id
}

TEST_CASE("GPT-2's tokenizer: text that is not UTF-8, a piece the vocabulary lacks, a bad merges.txt") {
    const attn::byte_level_bpe bpe(gpt2_tokenizer_dir + "/vocab.json", gpt2_tokenizer_dir + "/merges.txt");
    CHECK_THROWS_WITH_AS(bpe.encode("ok \xff", "--text"), "--text: not UTF-8 text (byte 3); GPT-2's tokenizer reads UTF-8",
                         attn::error);
    CHECK_THROWS_AS(bpe.encode("zyzzyva", "--text"), attn::error);  // the subset vocabulary lacks its pieces
    const scratch_dir dir("bpe");
    std::ofstream(dir / "merges.txt") << "#version: 0.2\nĠ t\nthree parts here\n";
    const std::string message = dir / "merges.txt" +
                                ": line 3 is \"three parts here\"; expected a merge, two tokens separated by one space (\"Ġ t\")";
    CHECK_THROWS_WITH_AS(attn::byte_level_bpe(gpt2_tokenizer_dir + "/vocab.json", dir / "merges.txt"), message.c_str(),
                         attn::error);
}
