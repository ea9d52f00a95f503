#pragma once
// The token ids a model's layer 0 starts from (--tokens) and the tokenizer's vocabulary that
// names them (--vocab).
//
//   --tokens 464,2068,7586      comma-separated ids (spaces around them allowed), or
//   --tokens @tokens.txt        the same in a file (a trailing newline allowed), at most 1 MiB
//   --vocab vocab.json          Hugging Face's {"token": id, ...} (GPT-2's vocab.json, a
//                               tokenizer.json's "model.vocab" saved alone), or {"id": "token"}
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "attn/io/tensor_file.hpp"  // read_budget

namespace attn {

/// The most ids --tokens takes (a file of them is at most max_token_file_bytes).
inline constexpr std::size_t max_token_count = 65536;
inline constexpr std::uint64_t max_token_file_bytes = std::uint64_t(1) << 20;

/// The ids in `text` (--tokens' value: a list, or @FILE). usage_error naming --tokens for an
/// empty list, an empty item, a non-number, a negative id or more than max_token_count ids;
/// attn::error naming the file for one that cannot be read or is larger than 1 MiB.
std::vector<std::int64_t> parse_token_ids(const std::string& text);

/// vocab.json's largest accepted size (GPT-2's is 1 MB, a 256k-token vocabulary about 10 MB).
inline constexpr std::uint64_t max_vocab_bytes = std::uint64_t(64) << 20;

/// Each id's token from `text` (a vocab.json; `what` names it in messages). attn::error, one
/// line naming `what`: not JSON, not an object, a value of the wrong type (an id that is not a
/// whole number from 0 to 2^31 - 1, a token that is not a string), an id given twice. With
/// `budget` (--max-memory), the text and what is parsed of it are checked against it as the
/// parse goes (parse_json_document), so a vocabulary the run cannot hold is refused.
std::map<std::int64_t, std::string> parse_vocab(const std::string& text, const std::string& what,
                                                const read_budget* budget = nullptr);

/// The same read from `path` (at most max_vocab_bytes, and within `budget`).
std::map<std::int64_t, std::string> read_vocab(const std::string& path, const std::string& what,
                                               const read_budget* budget = nullptr);

/// The label of each id in `ids`, escaped with printable_text (shown as the tokenizer writes
/// it: GPT-2's "Ġ" and SentencePiece's "▁" word-start marks kept). attn::error naming `what`
/// for an id the vocabulary lacks.
std::vector<std::string> token_labels(const std::map<std::int64_t, std::string>& vocab,
                                      const std::vector<std::int64_t>& ids, const std::string& what);

}  // namespace attn
