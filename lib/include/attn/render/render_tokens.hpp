#pragma once
// `attn tokens`: a text's tokens as the checkpoint's tokenizer makes them.
//   table: the ids on one line, ready for --tokens, then one row per token (position, id, piece)
//   json:  {"format": "attn.tokens/1", "vocab": "...", "ids": [...], "tokens": ["The", "Ġrobot", ...]}
// Pieces are written as the vocabulary spells them (GPT-2's "Ġ" marks a space), escaped with
// printable_text in the table.
#include <ostream>
#include <string>
#include <vector>

#include "attn/io/byte_level_bpe.hpp"

namespace attn {

void render_tokens_table(const text_tokens& t, std::ostream& out);
void render_tokens_json(const text_tokens& t, std::ostream& out);

}  // namespace attn
