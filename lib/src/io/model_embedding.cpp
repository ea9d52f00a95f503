// A model's embedding tables for --tokens (model_embedding.hpp).
#include "attn/io/model_embedding.hpp"

#include <cstring>

#include "attn/compute/error.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

/// The table names of one architecture, without the prefix: token, position, token_type, norm weight, norm bias.
struct embedding_names {
    const char* token;
    const char* position;    // "" when the architecture has none
    const char* token_type;  // ""
    const char* norm_weight; // ""
    const char* norm_bias;   // ""
};

embedding_names embedding_names_of(model_arch a) {
    switch (a) {
        case model_arch::gpt2: return {"wte.weight", "wpe.weight", "", "", ""};
        case model_arch::bert:
            return {"embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight",
                    "embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"};
        case model_arch::llama: return {"embed_tokens.weight", "", "", "", ""};
        default: return {"", "", "", "", ""};
    }
}

/// The table `name` [rows, D] of `file`, or attn::error naming it.
const loaded_tensor& embedding_table(const std::map<std::string, loaded_tensor>& file, const std::string& name,
                                     model_arch a, const std::string& what) {
    const auto it = file.find(name);
    if (it == file.end())
        throw error(what + ": no tensor " + printable_text(name) + " (" + std::string(model_arch_title(a)) +
                    " keeps its embedding table there; --tokens needs it)");
    if (it->second.shape.size() != 2 || it->second.shape[0] == 0 || it->second.shape[1] == 0)
        throw error(what + ": " + printable_text(name) + " has shape " + tensor_index_text(it->second.shape) + "; " +
                    std::string(model_arch_title(a)) + " stores it [rows, D]");
    return it->second;
}

/// Rows `rows` of `table` [R,D], as [count,D].
xt::xarray<float> table_rows(const loaded_tensor& table, const std::vector<std::int64_t>& rows) {
    const std::size_t D = table.shape[1];
    xt::xarray<float> out = xt::zeros<float>({rows.size(), D});
    for (std::size_t i = 0; i < rows.size(); ++i)
        std::memcpy(out.data() + i * D, table.values.data() + static_cast<std::size_t>(rows[i]) * D, D * sizeof(float));
    return out;
}

}  // namespace

std::vector<std::string> embedding_tensor_names(const model_names& m) {
    const embedding_names n = embedding_names_of(m.arch);
    std::vector<std::string> names;
    for (const char* name : {n.token, n.position, n.token_type, n.norm_weight, n.norm_bias})
        if (*name) names.push_back(m.prefix + name);
    return names;
}

std::string token_table_name(const model_names& m) {
    const embedding_names n = embedding_names_of(m.arch);
    return *n.token ? m.prefix + n.token : std::string();
}

void check_token_ids(const std::vector<std::int64_t>& ids, const std::string& table, std::size_t rows) {
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] < 0 || static_cast<std::uint64_t>(ids[i]) >= rows)
            throw usage_error("--tokens: id " + std::to_string(ids[i]) + " (token " + std::to_string(i + 1) +
                              ") is past the vocabulary: " + printable_text(table) + " has " + std::to_string(rows) +
                              " rows, ids 0 to " + std::to_string(rows - 1));
}

model_embedding embed_model_tokens(const std::map<std::string, loaded_tensor>& file, const model_names& m,
                                   const std::vector<std::int64_t>& ids, const std::string& what,
                                   const std::optional<token_table_rows>& taken) {
    const embedding_names n = embedding_names_of(m.arch);
    if (!*n.token)
        throw usage_error("--tokens needs a model's embedding tables (GPT-2's wte, BERT's word_embeddings, Llama's "
                          "embed_tokens), but " + what + " is " + std::string(model_arch_title(m.arch)) +
                          "'s, which has none: give --input instead");
    const std::string P = m.prefix;
    model_embedding out;
    const std::size_t S = ids.size();
    std::size_t D = 0;
    if (taken) {  // only the ids' rows were read
        check_token_ids(ids, P + n.token, taken->table_rows);
        D = taken->rows.shape.size() == 2 ? taken->rows.shape[1] : 0;
        out.rows.token = taken->rows.values;
    } else {
        const loaded_tensor& token = embedding_table(file, P + n.token, m.arch, what);
        D = token.shape[1];
        check_token_ids(ids, P + n.token, token.shape[0]);
        out.rows.token = table_rows(token, ids);
    }
    out.rows.token.reshape({std::size_t{1}, S, D});
    out.sources.push_back({"embed_token", P + n.token + "[ids]"});
    const auto same_width = [&](const loaded_tensor& t, const std::string& name) {
        if (t.shape[1] != D)
            throw error(what + ": " + printable_text(name) + " has shape " + tensor_index_text(t.shape) + ", but " +
                        printable_text(P + n.token) + " has D = " + std::to_string(D));
    };
    if (*n.position) {
        const loaded_tensor& position = embedding_table(file, P + n.position, m.arch, what);
        same_width(position, P + n.position);
        if (S > position.shape[0])
            throw usage_error("--tokens: " + std::to_string(S) + " tokens, but " + printable_text(P + n.position) +
                              " has positions for " + std::to_string(position.shape[0]));
        std::vector<std::int64_t> positions(S);
        for (std::size_t i = 0; i < S; ++i) positions[i] = static_cast<std::int64_t>(i);
        out.rows.position = table_rows(position, positions);
        out.sources.push_back({"embed_position", P + n.position + "[0:" + std::to_string(S) + "]"});
    }
    if (*n.token_type) {  // one segment: row 0 for every token
        const loaded_tensor& types = embedding_table(file, P + n.token_type, m.arch, what);
        same_width(types, P + n.token_type);
        out.rows.token_type = table_rows(types, std::vector<std::int64_t>(S, 0));
        out.sources.push_back({"embed_token_type", P + n.token_type + "[0] for every token"});
    }
    if (*n.norm_weight) {  // BERT: LayerNorm over the sum before layer 0
        for (const char* name : {n.norm_weight, n.norm_bias}) {
            const auto it = file.find(P + name);
            if (it == file.end()) throw error(what + ": no tensor " + printable_text(P + name) + " (BERT's norm before layer 0)");
            if (it->second.shape != std::vector<std::size_t>{D})
                throw error(what + ": " + printable_text(P + name) + " has shape " + tensor_index_text(it->second.shape) +
                            "; BERT stores it [D] = [" + std::to_string(D) + "]");
        }
        out.norm_weight = file.at(P + n.norm_weight);
        out.norm_bias = file.at(P + n.norm_bias);
        out.sources.push_back({"norm_weight", P + n.norm_weight});
        out.sources.push_back({"norm_bias", P + n.norm_bias});
    }
    return out;
}

}  // namespace attn
