// GPT-2's tokenizer against an independent implementation (the npm package gpt-3-encoder,
// tests/reference/make_gpt2_tokenizer_fixtures.js), and its refusals.
#include <fstream>
#include <map>
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

namespace {

/// openai/gpt-2's encoder.py merge loop, as written there: the lowest-ranked pair is merged
/// everywhere, left to right, then the pairs are looked at again.
std::vector<std::string> encoder_py_merges(std::vector<std::string> word, const std::map<std::string, std::size_t>& ranks) {
    while (word.size() > 1) {
        std::size_t best = word.size(), best_rank = static_cast<std::size_t>(-1);
        for (std::size_t i = 0; i + 1 < word.size(); ++i) {
            const auto r = ranks.find(word[i] + ' ' + word[i + 1]);
            if (r != ranks.end() && r->second < best_rank) best = i, best_rank = r->second;
        }
        if (best == word.size()) break;
        const std::string a = word[best], b = word[best + 1];
        std::vector<std::string> merged;
        for (std::size_t i = 0; i < word.size();) {
            const bool pair = i + 1 < word.size() && word[i] == a && word[i + 1] == b;
            merged.push_back(pair ? a + b : word[i]);
            i += pair ? 2 : 1;
        }
        word = merged;
    }
    return word;
}

}  // namespace

TEST_CASE("GPT-2's tokenizer merges as encoder.py's loop does, on random words of the fixture's letters") {
    const std::string dir = gpt2_tokenizer_dir;
    std::map<std::string, std::size_t> ranks;
    std::ifstream merges(dir + "/merges.txt");
    std::string line;
    std::getline(merges, line);  // #version
    while (std::getline(merges, line))
        if (!line.empty()) ranks.emplace(line, ranks.size());
    // a vocabulary of every piece the merges make (and the letters), so that each word encodes
    const scratch_dir scratch("bpe-random");
    nlohmann::json vocab = nlohmann::json::object();
    const std::string letters = "thequickbrownfoxjumpsoverlazydgaei";  // ASCII letters: a byte is a character
    std::int64_t next_id = 0;
    const auto add = [&](const std::string& piece) {
        if (!vocab.contains(piece)) vocab[piece] = next_id++;
    };
    for (char ch : letters) add(std::string(1, ch));
    for (const auto& [merge, rank] : ranks) {
        const std::size_t space = merge.find(' ');
        add(merge.substr(0, space) + merge.substr(space + 1));
    }
    std::ofstream(scratch / "vocab.json") << vocab.dump();
    const attn::byte_level_bpe bpe(scratch / "vocab.json", dir + "/merges.txt");
    std::uint64_t state = 12345;
    std::size_t compared = 0;
    for (int n = 0; n < 400; ++n) {
        std::string text;
        const std::size_t length = 1 + (state = state * 6364136223846793005ULL + 1442695040888963407ULL) % 24;
        for (std::size_t i = 0; i < length; ++i)
            text += letters[((state = state * 6364136223846793005ULL + 1442695040888963407ULL) >> 33) % letters.size()];
        std::vector<std::string> chars;
        for (char ch : text) chars.emplace_back(1, ch);
        const std::vector<std::string> want = encoder_py_merges(chars, ranks);
        std::vector<std::string> got;
        for (const attn::token_piece& t : bpe.encode(text, "--text")) got.push_back(t.piece);
        CAPTURE(text);
        CHECK(got == want);
        ++compared;
    }
    CHECK(compared == 400);
}
