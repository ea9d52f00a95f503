#pragma once
// JSON documents from files a user hands attn (dumps, exercise files, layout answers):
// read and described without recursion proportional to their depth. nlohmann parses
// without recursion, but copying, comparing and dump() recurse once per level, so a
// 200 KB file of 100,000 nested brackets would overflow the stack; such a document is
// refused when read, and a bad value is described by its kind, never dumped whole.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/io/tensor_file.hpp"  // read_budget

namespace attn {

/// Deeper than any document attn reads: a dump nests a tensor's 32 axes at most in
/// five levels of structure.
inline constexpr std::size_t max_json_depth = 64;

/// The document in `text`. Throws attn::error "<what>: not valid JSON: <where and why>",
/// "<what>: nested more than 64 levels deep; ...", and for what a parser would take
/// silently: a NUL byte (check_no_nul) and a key given twice in one object ("<what>: the
/// key "n_head" appears twice in one object"). With `budget`, the text and the document it
/// builds (json_document_bytes, counted as the parse goes) are checked against it:
/// over_budget "<what>: its text with the values parsed from it needs ...".
nlohmann::json parse_json_document(const std::string& text, const std::string& what,
                                   const read_budget* budget = nullptr);

/// What one value of a parsed document holds beside its text: nlohmann's node (16 bytes), three
/// times over, since an array growing by doubling holds its old and its new buffer at once;
/// a key's map entry. A bound for the budget, not an exact count (at 16 a value, a document
/// under --max-memory 16MiB peaked at 58 MB, 48 MB above attn's own 10 MB).
inline constexpr std::size_t json_value_bytes = 48, json_key_bytes = 80;

/// attn::error "<what>: a NUL byte at offset 12; JSON text holds none" when `text` has one:
/// a reader that stops there would take a file cut short for a whole one.
void check_no_nul(const std::string& text, const std::string& what);

/// `v` in a message: a number, boolean, null or string as JSON writes it (a string cut to
/// 40 characters), a list as "a list of 3 items", an object as "an object of 2 keys".
std::string json_excerpt(const nlohmann::json& v);

/// nlohmann's message without its "[json.exception.parse_error.101] " prefix.
std::string json_message(const std::exception& e);

}  // namespace attn
