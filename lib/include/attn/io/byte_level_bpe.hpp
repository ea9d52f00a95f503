#pragma once
// GPT-2's tokenizer: byte-level BPE, from the files Hugging Face keeps beside a GPT-2
// checkpoint (vocab.json, {"token": id}, and merges.txt, "#version: 0.2" then one merge
// "a b" per line, best first). As openai/gpt-2's encoder.py computes it:
//   1. the text (UTF-8) is cut into pre-tokens by the pattern
//        's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//      (PCRE2, with Unicode properties: std::regex has no \p{L});
//   2. each pre-token's bytes become characters by bytes_to_unicode (the space is "Ġ", the
//      newline "Ċ"): every byte is a token, so any text can be encoded;
//   3. BPE: the adjacent pair of lowest rank in merges.txt is merged everywhere in the
//      pre-token, left to right, until no pair is a merge; each piece is then looked up.
// Checked against the npm package gpt-3-encoder on 29 texts (tests/reference/tokenizers/gpt2).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attn/io/tensor_file.hpp"

namespace attn {

/// One token of an encoded text: its id and the vocabulary's spelling of it ("Ġrobot").
struct token_piece {
    std::int64_t id;
    std::string piece;
};

class byte_level_bpe {
public:
    /// The tokenizer of vocab.json and merges.txt, each within `budget`. attn::error naming
    /// the file: not readable, vocab.json not {"token": id}, a merges.txt line that is not two
    /// tokens.
    byte_level_bpe(const std::string& vocab_path, const std::string& merges_path, const read_budget* budget = nullptr);
    byte_level_bpe(byte_level_bpe&&) noexcept;
    ~byte_level_bpe();

    /// The tokens of `text`, at most `most` of them. attn::error naming `what` for text that is
    /// not UTF-8, for a piece the vocabulary lacks (a vocabulary without every byte), and for
    /// more than `most` tokens (said as soon as there are).
    std::vector<token_piece> encode(std::string_view text, const std::string& what,
                                    std::size_t most = static_cast<std::size_t>(-1)) const;

    const std::string& vocab_path() const { return vocab_path_; }

private:
    struct pattern;  // the compiled PCRE2 pattern
    std::vector<std::string> merge_word(std::vector<std::string> word) const;

    std::string vocab_path_;
    std::unordered_map<std::string, std::int64_t> ids_;
    std::unordered_map<std::string, std::size_t> ranks_;  // "a b" -> its line, 0 first
    std::unique_ptr<pattern> pattern_;
};

/// The tokenizer beside a checkpoint (vocab.json and merges.txt in the folder of
/// `weights_path`), or nullopt when either is missing.
std::optional<byte_level_bpe> read_tokenizer_beside(const std::string& weights_path, const read_budget* budget = nullptr);

/// --text's value: the text itself, or @FILE's contents (at most 16 MiB, within `budget`).
std::string text_of_flag(const std::string& value, const read_budget* budget = nullptr);

/// --text with --params: `text_flag` (text_of_flag) encoded by the tokenizer beside the
/// checkpoint at `weights_path`, at most max_token_count tokens (as --tokens). attn::error naming the folder when it has no tokenizer attn
/// reads, and as encode says.
struct text_tokens {
    std::vector<token_piece> tokens;
    std::string vocab_path;  // vocab.json, whose tokens label the run's axes
};
text_tokens tokenize_beside(const std::string& weights_path, const std::string& text_flag, const read_budget* budget = nullptr);

}  // namespace attn
