// GPT-2's byte-level BPE (byte_level_bpe.hpp).
#include "attn/io/byte_level_bpe.hpp"

#include <array>
#include <filesystem>
#include <functional>
#include <limits>
#include <queue>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "attn/compute/error.hpp"
#include "attn/io/token_input.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {
namespace {

/// openai/gpt-2's pre-tokenizer pattern, with Unicode's letters and numbers.
constexpr const char* gpt2_pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

inline constexpr std::uint64_t max_merges_bytes = std::uint64_t(64) << 20;
inline constexpr std::uint64_t max_text_bytes = std::uint64_t(16) << 20;

/// `code_point` as UTF-8 (below U+0800 here: two bytes at most).
std::string utf8_of(unsigned code_point) {
    if (code_point < 0x80) return std::string(1, static_cast<char>(code_point));
    return {static_cast<char>(0xC0 | (code_point >> 6)), static_cast<char>(0x80 | (code_point & 0x3F))};
}

/// GPT-2's bytes_to_unicode: the printable bytes stand for themselves, the others (space,
/// controls, 127-160, 173) for U+0100 onward in byte order, so that no token holds a space.
const std::array<std::string, 256>& byte_characters() {
    static const std::array<std::string, 256> chars = [] {
        std::array<std::string, 256> c;
        const auto printable = [](unsigned b) { return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255); };
        unsigned next = 256;
        for (unsigned b = 0; b < 256; ++b) c[b] = utf8_of(printable(b) ? b : next++);
        return c;
    }();
    return chars;
}

}  // namespace

struct byte_level_bpe::pattern {
    pcre2_code* code = nullptr;
    ~pattern() { pcre2_code_free(code); }
};

byte_level_bpe::byte_level_bpe(const std::string& vocab_path, const std::string& merges_path, const read_budget* budget)
    : vocab_path_(vocab_path), pattern_(std::make_unique<pattern>()) {
    const std::string vocab_what = printable_text(vocab_path), merges_what = printable_text(merges_path);
    for (auto& [id, token] : read_vocab(vocab_path, vocab_what, budget)) ids_.emplace(std::move(token), id);
    const std::string merges = read_bounded_text(merges_path, merges_what, max_merges_bytes,
                                                 "64 MiB; GPT-2's merges.txt is 456 kB", budget);
    std::size_t line_number = 0, start = 0;
    while (start < merges.size()) {
        std::size_t end = merges.find('\n', start);
        if (end == std::string::npos) end = merges.size();
        std::string line = merges.substr(start, end - start);
        start = end + 1;
        ++line_number;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || (line_number == 1 && line.rfind("#version", 0) == 0)) continue;
        const std::size_t space = line.find(' ');
        if (space == 0 || space == std::string::npos || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos)
            throw error(merges_what + ": line " + std::to_string(line_number) + " is \"" + quoted_field(line) +
                        "\"; expected a merge, two tokens separated by one space (\"Ġ t\")");
        ranks_.emplace(std::move(line), ranks_.size());  // a merge given twice keeps its first rank
    }
    int code = 0;
    PCRE2_SIZE offset = 0;
    pattern_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(gpt2_pattern), PCRE2_ZERO_TERMINATED,
                                   PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
    if (pattern_->code == nullptr) throw error("GPT-2's pre-tokenizer pattern does not compile with this PCRE2");
    pcre2_jit_compile(pattern_->code, PCRE2_JIT_COMPLETE);  // faster when the JIT is there; the same matches
}

byte_level_bpe::byte_level_bpe(byte_level_bpe&&) noexcept = default;
byte_level_bpe::~byte_level_bpe() = default;

std::vector<std::string> byte_level_bpe::merge_word(std::vector<std::string> word) const {
    // encoder.py merges the lowest-ranked pair everywhere, left to right, then looks again: O(n)
    // a merge, so a long word (10 MB of letters) would take hours. The same merges in the same
    // order from a heap of (rank, position), as Hugging Face's tokenizers do: a pair is merged
    // when it is the lowest rank left, leftmost first, and the pairs it makes join the heap.
    // (For merges.txt files that BPE training wrote, where a merge comes after the merges that
    // make its parts, the order is encoder.py's; tests/io/test_byte_level_bpe.cpp checks both.)
    const std::size_t n = word.size(), none = std::numeric_limits<std::size_t>::max();
    std::vector<std::size_t> prev(n), next(n);
    for (std::size_t i = 0; i < n; ++i) prev[i] = i == 0 ? none : i - 1, next[i] = i + 1 == n ? none : i + 1;
    using candidate = std::pair<std::size_t, std::size_t>;  // (rank, left symbol's position)
    std::priority_queue<candidate, std::vector<candidate>, std::greater<>> heap;
    const auto rank_of = [&](std::size_t left) {
        const auto r = ranks_.find(word[left] + ' ' + word[next[left]]);
        return r == ranks_.end() ? none : r->second;
    };
    const auto offer = [&](std::size_t left) {  // the pair starting at `left`, when it is a merge
        if (left == none || next[left] == none) return;
        if (const std::size_t r = rank_of(left); r != none) heap.emplace(r, left);
    };
    for (std::size_t i = 0; i + 1 < n; ++i) offer(i);
    std::vector<bool> gone(n, false);
    while (!heap.empty()) {
        const auto [rank, left] = heap.top();
        heap.pop();
        if (gone[left] || next[left] == none || rank_of(left) != rank) continue;  // changed since it was offered
        const std::size_t right = next[left];
        word[left] += word[right];
        gone[right] = true;
        next[left] = next[right];
        if (next[right] != none) prev[next[right]] = left;
        offer(prev[left]);
        offer(left);
    }
    std::vector<std::string> pieces;
    for (std::size_t i = 0; i < n; ++i)
        if (!gone[i]) pieces.push_back(std::move(word[i]));
    return pieces;
}

std::vector<token_piece> byte_level_bpe::encode(std::string_view text, const std::string& what, std::size_t most) const {
    std::unique_ptr<pcre2_match_data, void (*)(pcre2_match_data*)> match(
        pcre2_match_data_create_from_pattern(pattern_->code, nullptr), pcre2_match_data_free);
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    std::vector<token_piece> tokens;
    PCRE2_SIZE from = 0;
    std::uint32_t options = 0;  // the first match checks the whole text is UTF-8
    while (from < text.size()) {
        const int found = pcre2_match(pattern_->code, subject, text.size(), from, options, match.get(), nullptr);
        if (found == PCRE2_ERROR_NOMATCH) break;
        if (found < 0)
            throw error(what + ": not UTF-8 text (byte " + std::to_string(pcre2_get_startchar(match.get())) +
                        "); GPT-2's tokenizer reads UTF-8");
        options = PCRE2_NO_UTF_CHECK;
        const PCRE2_SIZE* at = pcre2_get_ovector_pointer(match.get());
        std::vector<std::string> word;
        for (PCRE2_SIZE i = at[0]; i < at[1]; ++i) word.push_back(byte_characters()[static_cast<unsigned char>(text[i])]);
        for (std::string& piece : merge_word(std::move(word))) {
            const auto id = ids_.find(piece);
            if (id == ids_.end())
                throw error(what + ": \"" + quoted_field(piece) + "\" is not a token of " + printable_text(vocab_path_) +
                            " (a vocabulary with every byte's token encodes any text)");
            if (tokens.size() == most)
                throw error(what + ": more than " + std::to_string(most) + " tokens (the most a run takes, as --tokens)");
            tokens.push_back({id->second, std::move(piece)});
        }
        from = at[1] > at[0] ? at[1] : at[0] + 1;  // the pattern matches no empty text; never loop
    }
    return tokens;
}

std::optional<byte_level_bpe> read_tokenizer_beside(const std::string& weights_path, const read_budget* budget) {
    const std::filesystem::path folder = std::filesystem::path(weights_path).parent_path();
    const std::filesystem::path vocab = folder / "vocab.json", merges = folder / "merges.txt";
    std::error_code ec;
    if (!std::filesystem::exists(vocab, ec) || !std::filesystem::exists(merges, ec)) return std::nullopt;
    return byte_level_bpe(vocab.string(), merges.string(), budget);
}

std::string text_of_flag(const std::string& value, const read_budget* budget) {
    if (value.empty() || value[0] != '@') return value;
    const std::string path = value.substr(1);
    return read_bounded_text(path, "--text @" + printable_text(path), max_text_bytes, "16 MiB", budget);
}

text_tokens tokenize_beside(const std::string& weights_path, const std::string& text_flag, const read_budget* budget) {
    const std::optional<byte_level_bpe> bpe = read_tokenizer_beside(weights_path, budget);
    if (!bpe) {
        const std::string folder = std::filesystem::path(weights_path).parent_path().string();
        throw error("--text: no tokenizer beside --params " + printable_text(weights_path) + ": attn reads GPT-2's vocab.json and "
                    "merges.txt (in " + printable_text(folder.empty() ? "." : folder) + "); tokenizer.json, BERT's vocab.txt and "
                    "SentencePiece's tokenizer.model are not read yet: give the ids with --tokens");
    }
    const std::string what = text_flag.rfind('@', 0) == 0 ? "--text " + printable_text(text_flag) : "--text";
    std::vector<token_piece> tokens = bpe->encode(text_of_flag(text_flag, budget), what, max_token_count);
    if (tokens.empty()) throw usage_error("--text gives no tokens: give some text");
    return {std::move(tokens), bpe->vocab_path()};
}

}  // namespace attn
