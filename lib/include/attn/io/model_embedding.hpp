#pragma once
// A model's embedding tables, looked up for --tokens: layer 0 from token ids.
//
//   GPT-2   [prefix.]wte.weight [V,D] (token rows), wpe.weight [P,D] (position rows)
//   BERT    [prefix.]embeddings.word_embeddings.weight [V,D], position_embeddings.weight [P,D],
//           token_type_embeddings.weight [T,D] (row 0: one segment), and embeddings.LayerNorm
//           (weight, bias [D]), the norm before layer 0
//   Llama   [prefix.]embed_tokens.weight [V,D] alone (positions are rotations, later)
// nn.MultiheadAttention's state_dict and attn's own names have no tables. From a .safetensors the
// reader takes only the ids' rows of the token table (token_table_rows); an .npz's is decoded whole.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "attn/compute/inputs.hpp"
#include "attn/io/model_layer.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

/// The names of m's embedding tables (and BERT's embeddings.LayerNorm) a reader decodes for
/// --tokens; none for nn.MultiheadAttention and attn's own names.
std::vector<std::string> embedding_tensor_names(const model_names& m);

/// The rows of one run's tokens.
struct model_embedding {
    embeddings rows;                      // token [1,S,D]; position, token_type [S,D] as the architecture has them
    std::vector<weight_source> sources;   // {"embed_token", "wte.weight[ids]"}, ... (BERT: norm_weight, norm_bias too)
    std::optional<loaded_tensor> norm_weight, norm_bias;  // BERT's embeddings.LayerNorm [D]
};

/// The name of m's token table ("wte.weight" with its prefix); "" for an architecture without one.
std::string token_table_name(const model_names& m);

/// usage_error naming --tokens when an id is not a row of `table` (which has `rows` rows).
void check_token_ids(const std::vector<std::int64_t>& ids, const std::string& table, std::size_t rows);

/// The token table's rows for the ids, when the reader took only those (read_safetensors_rows):
/// [S,D], and how many rows the table has.
struct token_table_rows {
    loaded_tensor rows;
    std::size_t table_rows = 0;
};

/// Looks up `ids` in the tables of `file` (which holds at least embedding_tensor_names' that exist).
/// usage_error naming --tokens for an architecture without tables (`what` = "--params m.npz"), an
/// id past the token table or more tokens than the position table has rows; attn::error naming
/// `what` and the tensor for a table that is missing or not [rows, D].
/// With `taken`, the token table's rows are those (the table itself need not be in `file`).
model_embedding embed_model_tokens(const std::map<std::string, loaded_tensor>& file, const model_names& m,
                                   const std::vector<std::int64_t>& ids, const std::string& what,
                                   const std::optional<token_table_rows>& taken = std::nullopt);

}  // namespace attn
