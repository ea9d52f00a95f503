// Tensors from files, and the sizes they imply.
//
// Every size (B, Sq, Sk, D, Din, Dkv) has at most one first source: a flag,
// else the first file that holds it; every later source must agree.
#include "attn/io/file_inputs.hpp"

#include <algorithm>
#include <array>
#include <filesystem>
#include <map>
#include <utility>

#include "attn/compute/error.hpp"
#include "attn/compute/memory.hpp"
#include "attn/io/mask_file.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/safetensors.hpp"
#include "attn/io/sharded_safetensors.hpp"
#include "attn/io/token_input.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

enum size_name { B, Sq, Sk, D, Din, Dkv, size_count };
constexpr std::array<const char*, size_count> size_letters{"B", "Sq", "Sk", "D", "Din", "Dkv"};
constexpr std::array<const char*, size_count> size_flag_names{"--batch", "--seq", "--kv-seq", "--d-model", "--d-in",
                                                              "--d-kv-in"};
using layout = std::vector<size_name>;

std::string layout_text(const layout& l) {
    std::string text = "[";
    for (std::size_t i = 0; i < l.size(); ++i) text += std::string(i ? "," : "") + size_letters[l[i]];
    return text + "]";
}

/// The first source of each size and what it said, so a disagreement names both.
class size_table {
public:
    void from_flag(size_name n, const std::optional<std::int64_t>& value) {
        if (value) known_[n] = {*value, std::string(size_flag_names[n]) + " " + std::to_string(*value) + " says " +
                                            size_letters[n] + " = " + std::to_string(*value)};
    }

    /// `what` ("--q q.npy") holds a tensor laid out as `l`; checks the rank and every size.
    void from_file(const std::string& what, const std::vector<std::size_t>& shape, const layout& l) {
        if (shape.size() != l.size())
            throw error(what + ": shape " + tensor_index_text(shape) + " has " + std::to_string(shape.size()) +
                        " axes; expected " + std::to_string(l.size()) + ", " + layout_text(l));
        for (std::size_t axis = 0; axis < l.size(); ++axis) {
            const auto value = static_cast<std::int64_t>(shape[axis]);
            const std::string said = what + " has shape " + tensor_index_text(shape) + " " + layout_text(l) + ", so " +
                                     size_letters[l[axis]] + " = " + std::to_string(value);
            if (value == 0) throw error(said + "; every size must be at least 1");
            auto& first = known_[l[axis]];
            if (!first) {
                first = {value, said};
                from_file_[l[axis]] = true;
            } else if (first->first != value) {
                throw usage_error(said + ", but " + first->second);
            }
        }
    }

    bool known(size_name n) const { return known_[n].has_value(); }
    bool known_from_file(size_name n) const { return from_file_[n]; }
    std::int64_t get(size_name n) const { return known_[n]->first; }
    std::int64_t get_or(size_name n, std::int64_t fallback) const { return known(n) ? get(n) : fallback; }
    /// What the first source said, e.g. "--q q.npy has shape [1,2,6] [B,Sq,D], so D = 6".
    const std::string& source(size_name n) const { return known_[n]->second; }

private:
    std::array<std::optional<std::pair<std::int64_t, std::string>>, size_count> known_;
    std::array<bool, size_count> from_file_{};
};

/// "--input x.json", the file name escaped: messages and warnings quote it (a name with ESC).
std::string flag_and_file(const char* flag, const std::string& path) {
    return std::string(flag) + " " + printable_text(path);
}

/// One tensor from a .json or .npy file, or from an .npz: the array our own dumps
/// call `dump_name` ("input.x"), else the archive's only one (the only one inflated).
loaded_tensor read_one_tensor(const std::string& what, const std::string& path, const std::string& dump_name,
                              read_budget* budget) {
    if (file_extension(path) != ".npz") return read_tensor_file(path, what, budget);
    const std::vector<std::string> names = npz_array_names(path, what);
    std::string chosen;
    if (std::find(names.begin(), names.end(), dump_name) != names.end()) chosen = dump_name;
    else if (names.size() == 1) chosen = names[0];
    else
        throw error(what + ": no array " + dump_name + " (an .npz here holds " + dump_name +
                    ", as our --format npz dumps do, or a single array)");
    std::map<std::string, loaded_tensor> arrays =
        read_npz(path, what, nullptr, [&](const std::string& name) { return name == chosen; }, budget);
    if (arrays.empty())
        throw error(what + ": " + quoted_field(chosen) + " is not an array of numbers (a string member)");
    return std::move(arrays.begin()->second);
}

/// NaN or inf inside a given tensor is allowed, and reported.
void warn_non_finite(const named_tensor& t, const char* stage, warning_list& warnings) {
    const loaded_tensor& v = t.tensor;
    if (v.non_finite > 0)
        warnings.push_back({stage, t.what + " holds " + std::to_string(v.non_finite) + " NaN or infinite value" +
                                       (v.non_finite == 1 ? "" : "s") + " (the first at " +
                                       element_index_text(v.first_non_finite) +
                                       "); they will spread through the stages that use them"});
}

/// The tensors of a --params file that `wanted` accepts, only those decoded: from the .npz or
/// .safetensors at `path` (or its bytes, `stream`, when it is a FIFO; its `header` when read
/// already), or out of a .json read whole.
std::map<std::string, loaded_tensor> read_wanted(const std::string& what, const std::string& path,
                                                 std::map<std::string, loaded_tensor> json_tensors,
                                                 const std::optional<std::string>& stream,
                                                 const safetensors_header* header,
                                                 const std::function<bool(const std::string&)>& wanted, read_budget* budget,
                                                 const sharded_checkpoint* sharded = nullptr) {
    if (sharded != nullptr) return read_sharded(*sharded, wanted, budget);
    const std::string extension = file_extension(path);
    if (extension == ".npz") return read_npz(path, what, nullptr, wanted, budget);
    if (extension == ".safetensors")
        return stream   ? parse_safetensors(stream->data(), stream->size(), what, wanted, budget)
               : header ? read_safetensors(path, what, *header, wanted, budget)
                        : read_safetensors(path, what, wanted, budget);
    std::map<std::string, loaded_tensor> kept;
    for (auto& [name, t] : json_tensors)
        if (wanted(name)) kept[name] = std::move(t);
    return kept;
}

/// The arrays of a --params file in attn's own names by bare name ("w_q"): keys may carry the
/// "params." prefix of our own dumps, whose other stages are skipped (in an .npz, not inflated).
std::map<std::string, loaded_tensor> read_attn_params(const std::string& what, const std::string& path,
                                                      std::map<std::string, loaded_tensor> json_tensors,
                                                      read_budget* budget, const std::optional<std::string>& stream,
                                                      const safetensors_header* header, const sharded_checkpoint* sharded) {
    const auto params_member = [](const std::string& key) {  // not another stage of a dump
        return key.rfind("params.", 0) == 0 || (key.find('.') == std::string::npos && key != "config");
    };
    static const std::array<const char*, 8> names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"};
    std::map<std::string, loaded_tensor> params;
    for (auto& [key, value] : read_wanted(what, path, std::move(json_tensors), stream, header, params_member, budget, sharded)) {
        const std::string name = key.rfind("params.", 0) == 0 ? key.substr(7) : key;
        if (std::find(names.begin(), names.end(), name) == names.end())
            throw error(what + ": unexpected array '" + quoted_field(key) + "' (expected w_q b_q w_k b_k w_v b_v w_o b_o)");
        params[name] = std::move(value);
    }
    return params;
}

/// --tokens: the token table [rows, D] as wide as the layer's input, known from the file's index
/// before a row of it is read (a table of another width may be gigabytes, or a zip bomb).
void check_table_width(const model_names& m, std::int64_t layer,
                       const std::map<std::string, std::vector<std::size_t>>& shapes, const std::string& what) {
    const auto table = shapes.find(token_table_name(m));
    const std::optional<layer_width> input = layer_input_width(m, layer, shapes);
    if (table == shapes.end() || table->second.size() != 2 || !input || table->second[1] == input->width) return;
    throw error(what + ": " + quoted_field(table->first) + " has shape " + tensor_index_text(table->second) +
                ", but layer " + std::to_string(layer) + "'s input is D = " + std::to_string(input->width) + " wide (" +
                quoted_field(input->weight) + " has shape " + tensor_index_text(input->shape) +
                "): --tokens needs a table [rows, " + std::to_string(input->width) + "]");
}

/// A --params file: attn's own names, or one layer of a model's (model_layer.hpp), only that
/// layer's tensors decoded; a model's config.json beside it is read too.
void read_params_file(const std::string& what, const std::string& path, const model_choice& choice,
                      const std::vector<std::int64_t>& tokens, read_budget* budget, given_tensors& given) {
    const std::string extension = file_extension(path);
    std::vector<std::string> names;
    std::map<std::string, std::vector<std::size_t>> shapes;  // each tensor's, from the index, before any is read
    std::map<std::string, loaded_tensor> json_tensors;  // a .json is read whole to learn its names
    std::vector<safetensors_entry> entries;             // a .safetensors header's
    std::optional<std::string> stream;                  // a .safetensors FIFO's bytes
    std::optional<safetensors_header> header;           // a regular .safetensors file's, parsed once
    std::optional<sharded_checkpoint> sharded;          // a model.safetensors.index.json's shards, their headers parsed once
    if (extension == ".npz" && !tokens.empty()) {  // the headers too: a table's shape is checked before it is inflated
        for (auto& [name, shape] : npz_array_shapes(path, what)) {
            names.push_back(name);
            shapes[name] = std::move(shape);
        }
    } else if (extension == ".npz") {
        names = npz_array_names(path, what);
    } else if (extension == ".safetensors") {
        // a FIFO gives its bytes once: read them whole (up to max_stream_bytes), then parse them;
        // a regular file is read where its header says, as often as asked
        std::error_code ec;
        if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
            stream = read_text_file(path, what, budget);
        if (!stream) header = read_safetensors_header(path, what, budget);
        entries = stream ? parse_safetensors_index(stream->data(), stream->size(), what, budget) : header->entries;
        for (const safetensors_entry& e : entries) names.push_back(e.name), shapes[e.name] = e.shape;
    } else if (is_shard_index(path)) {
        sharded = read_shard_index(path, what, budget);
        entries = sharded->entries;
        for (const safetensors_entry& e : entries) names.push_back(e.name), shapes[e.name] = e.shape;
    } else if (extension == ".json") {
        json_tensors = read_json_tensors(path, what, budget);
        for (const auto& entry : json_tensors) names.push_back(entry.first);
    } else {
        throw error(what + ": expected a .json object of named arrays, an .npz archive (np.savez), a .safetensors file or a sharded checkpoint's model.safetensors.index.json");
    }
    const model_names m = detect_model(names, choice.arch, what);
    const std::int64_t layer = choose_layer(m, choice.layer, what);
    if (!tokens.empty() && (m.arch == model_arch::attn || m.arch == model_arch::mha))
        embed_model_tokens({}, m, tokens, what);  // says why there are no tables
    if (!tokens.empty() && layer != 0)
        throw usage_error("--tokens gives layer 0's input (the embeddings), but --layer " + std::to_string(layer) +
                          " reads the output of the layers before it, which attn does not compute: dump that "
                          "layer's input (Hugging Face's output_hidden_states[" + std::to_string(layer) +
                          "]) and give --input");
    if (m.arch == model_arch::attn) {
        given.params = read_attn_params(what, path, std::move(json_tensors), budget, stream, header ? &*header : nullptr,
                                        sharded ? &*sharded : nullptr);
        return;
    }
    std::vector<std::string> wanted_names = layer_tensor_names(m, layer);
    if (!tokens.empty()) check_table_width(m, layer, shapes, what);
    // --tokens: the tables are decoded (within --max-memory), then the ids' rows taken; from a
    // .safetensors only the ids' rows of the token table are read (a real vocabulary is 50k-250k rows)
    std::optional<token_table_rows> taken;
    const std::string table = token_table_name(m);
    const auto table_entry = std::find_if(entries.begin(), entries.end(),
                                          [&](const safetensors_entry& e) { return e.name == table; });
    if (!tokens.empty() && !stream && table_entry != entries.end() && table_entry->shape.size() == 2 && table_entry->shape[0] > 0 &&
        table_entry->shape[1] > 0) {
        check_token_ids(tokens, table, table_entry->shape[0]);
        taken = token_table_rows{sharded ? read_sharded_rows(*sharded, table, tokens, budget)
                                         : read_safetensors_rows(path, what, *header, table, tokens, budget),
                                 table_entry->shape[0]};
    }
    if (!tokens.empty())
        for (std::string& name : embedding_tensor_names(m))
            if (!(taken && name == table)) wanted_names.push_back(std::move(name));
    const auto wanted = [&](const std::string& name) {
        return std::find(wanted_names.begin(), wanted_names.end(), name) != wanted_names.end();
    };
    std::map<std::string, loaded_tensor> file = read_wanted(what, path, std::move(json_tensors), stream, header ? &*header : nullptr, wanted, budget,
                                                               sharded ? &*sharded : nullptr);
    std::optional<model_embedding> embedded;
    if (!tokens.empty()) embedded = embed_model_tokens(file, m, tokens, what, taken);
    given.model = map_model_layer(std::move(file), m, layer, what);  // check_inputs moves its weights to params
    if (embedded) {
        const std::string ids_what = "--tokens (" + std::to_string(tokens.size()) + (tokens.size() == 1 ? " id)" : " ids)");
        loaded_tensor x;
        x.values = embed_sum(embedded->rows);
        x.shape.assign(x.values.shape().begin(), x.values.shape().end());
        count_non_finite(x);
        given.x = named_tensor{ids_what, std::move(x)};
        given.embed = std::move(embedded->rows);
        given.tokens = tokens;
        // BERT: embeddings.LayerNorm is layer 0's norm (the layers themselves have none before attention)
        if (embedded->norm_weight) {
            given.model->weights["norm_weight"] = std::move(*embedded->norm_weight);
            given.model->weights["norm_bias"] = std::move(*embedded->norm_bias);
            given.model->norm = norm_kind::layer_norm;
        }
        for (weight_source& s : embedded->sources) given.model->sources.push_back(std::move(s));
    }
    given.model_json = read_hf_config_beside(path);
}

/// The weights and biases of a --params file that `c` uses. The file must hold each
/// exactly when it is needed; `why_absent` names the flag that turns one off.
parameters take_parameters(std::map<std::string, loaded_tensor> file, const config& c, const std::string& what,
                           size_table& sizes, warning_list& warnings) {
    const auto take = [&](const std::string& name, bool needed, const char* why_absent,
                          const layout& l) -> optional_tensor {
        const auto it = file.find(name);
        if (it == file.end() && !needed) return std::nullopt;
        if (it == file.end())
            throw error(what + ": no array " + name +
                        (*why_absent ? std::string(" (give it, or ") + why_absent + ")" : " (it is always needed)"));
        if (!needed) throw usage_error(what + " holds " + name + ", but " + why_absent + " says there is none");
        loaded_tensor& t = it->second;
        sizes.from_file(what + " " + name, t.shape, l);
        if (t.non_finite > 0) warnings.push_back({"params", what + ": " + name + " holds NaN or infinite values"});
        return std::move(t.values);
    };
    // w_k, w_v [G·dk,Dkv] and b_k, b_v [G·dk] with --kv-heads G: G·dk follows from D (w_q's rows)
    const auto kv_rows_match = [&](const std::string& name, const layout& l) {
        const auto it = file.find(name);
        if (it == file.end() || it->second.shape.size() != l.size() || !sizes.known(D)) return;
        const std::int64_t d = sizes.get(D), rows = static_cast<std::int64_t>(it->second.shape[0]);
        const std::int64_t G = c.kv_head_count(), H = c.heads;
        if (H <= 0 || d % H != 0) return;  // validate() names --d-model and --heads
        const std::int64_t want = G * (d / H);
        std::vector<std::size_t> expected = it->second.shape;
        expected[0] = static_cast<std::size_t>(want);
        const std::string want_text = std::string(l.size() == 2 ? "[G·dk,Dkv] = " : "[G·dk] = ") + tensor_index_text(expected);
        if (rows != want)
            throw usage_error(what + " " + name + " has shape " + tensor_index_text(it->second.shape) + ", but " +
                              (c.grouped() ? "--kv-heads " + std::to_string(G) + " with --heads " + std::to_string(H)
                                           : "--heads " + std::to_string(H) + " (no --kv-heads)") +
                              " and D = " + std::to_string(d) + " need " + want_text +
                              (c.grouped() || rows >= d || rows <= 0 || d % rows != 0 || (rows % (d / H)) != 0
                                   ? std::string()
                                   : "; a w_k of " + std::to_string(rows) + " rows is grouped-query: give --kv-heads " +
                                         std::to_string(rows / (d / H))));
    };
    const auto take_kv = [&](const std::string& name, bool needed, const char* why_absent, const layout& l) {
        kv_rows_match(name, l);
        if (!c.grouped()) return take(name, needed, why_absent, l);
        // grouped: the rows were checked above; only Dkv is a size of the run
        const layout rest(l.begin() + 1, l.end());
        const auto it = file.find(name);
        if (it != file.end() && it->second.shape.size() == l.size()) {
            loaded_tensor& t = it->second;
            std::vector<std::size_t> tail(t.shape.begin() + 1, t.shape.end());
            if (!rest.empty()) sizes.from_file(what + " " + name, tail, rest);
            if (!needed) throw usage_error(what + " holds " + name + ", but " + why_absent + " says there is none");
            if (t.non_finite > 0) warnings.push_back({"params", what + ": " + name + " holds NaN or infinite values"});
            return optional_tensor(std::move(t.values));
        }
        if (it != file.end())
            throw error(what + " " + name + ": shape " + tensor_index_text(it->second.shape) + " has " +
                        std::to_string(it->second.shape.size()) + " axes; expected " + std::to_string(l.size()));
        return take(name, needed, why_absent, l);  // absent: take says why
    };
    parameters p;
    if (!c.sources.from_projections) {
        p.w_q = *take("w_q", true, "", {D, Din});
        p.b_q = take("b_q", c.qkv_bias, "--no-qkv-bias", {D});
        p.w_k = *take_kv("w_k", true, "", {D, Dkv});
        p.b_k = take_kv("b_k", c.qkv_bias, "--no-qkv-bias", {D});
        p.w_v = *take_kv("w_v", true, "", {D, Dkv});
        p.b_v = take_kv("b_v", c.qkv_bias, "--no-qkv-bias", {D});
    }
    p.w_o = take("w_o", c.out_proj, "--no-out-proj", {D, D});
    p.b_o = take("b_o", c.out_proj && c.out_bias, "--no-out-proj", {D});  // out_bias: a model's o_proj without one
    // a model layer's norm before attention (model_layer.hpp: GPT-2's ln_1, Llama's input_layernorm)
    if (c.norm != norm_kind::none) {
        p.norm_weight = take("norm_weight", true, "", {Din});
        p.norm_bias = take("norm_bias", c.norm == norm_kind::layer_norm && file.count("norm_bias") != 0, "RMSNorm has no bias", {Din});
    }
    // the rest of a model's block (model_layer.hpp), its shapes checked against D there
    if (c.block.on()) {
        const auto weight = [&](const char* name) -> optional_tensor {
            const auto it = file.find(name);
            if (it == file.end()) return std::nullopt;
            if (it->second.non_finite > 0) warnings.push_back({"mlp", what + ": " + name + " holds NaN or infinite values"});
            return std::move(it->second.values);
        };
        block_weights b;
        b.conv1d = c.sources.model_arch == "gpt2";
        b.norm_weight = *weight("mlp_norm_weight");
        b.norm_bias = weight("mlp_norm_bias");
        b.w_gate = weight("w_gate");
        b.w_up = *weight("w_up");
        b.b_up = weight("b_up");
        b.w_down = *weight("w_down");
        b.b_down = weight("b_down");
        b.out_norm_weight = weight("out_norm_weight");
        b.out_norm_bias = weight("out_norm_bias");
        p.block = std::move(b);
    }
    return p;
}

void check_file_combination(const input_paths& p) {
    if (!p.tokens.empty()) {
        if (p.params.empty())
            throw usage_error("--tokens needs --params with a model's embedding tables (a GPT-2, BERT or Llama checkpoint)");
        if (!p.input.empty() || !p.q.empty())
            throw usage_error(std::string("--tokens cannot be used with ") + (p.input.empty() ? "--q/--k/--v" : "--input") +
                              ": the tokens' embeddings are the input");
        if (!p.kv_input.empty()) throw usage_error("--tokens cannot be used with --kv-input (a model's layer is self-attention)");
    }
    if (!p.vocab.empty() && p.tokens.empty())
        throw usage_error("--vocab " + printable_text(p.vocab) + " labels the ids of --tokens, which is not given");
    const int given = !p.q.empty() + !p.k.empty() + !p.v.empty();
    if (given == 0) return;
    if (given != 3) {
        std::string got;
        for (const auto& [flag, path] : {std::pair{"--q", &p.q}, {"--k", &p.k}, {"--v", &p.v}})
            if (!path->empty()) got += (got.empty() ? "" : " ") + std::string(flag);
        throw usage_error("--q, --k and --v go together (got only " + got +
                          "); they start the run at the projections stage");
    }
    for (const auto& [flag, path] : {std::pair{"--input", &p.input}, {"--kv-input", &p.kv_input}})
        if (!path->empty())
            throw usage_error(std::string(flag) + " " + *path +
                              " cannot be used with --q/--k/--v (they replace the input and its projections)");
}

/// The sizes a --mask-file of shape [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk] implies (a
/// leading 1 is shared by every batch item). A 2-D shape that is also [B,Sk], a
/// key-padding mask, is an error naming both readings and the flag for each.
void take_mask_sizes(const loaded_tensor& t, const std::string& what, size_table& sizes) {
    const auto& s = t.shape;
    const std::string path = what.substr(what.find(' ') + 1);  // what = "--mask-file m.npy"
    if (s.size() == 2) {
        const auto fits = [&](size_name n, std::size_t v) { return !sizes.known(n) || sizes.get(n) == std::int64_t(v); };
        const bool as_key_padding = sizes.known(B) && sizes.get(B) == std::int64_t(s[0]) && s[0] > 1 && fits(Sk, s[1]);
        const bool as_attn_mask = fits(Sq, s[0]) && fits(Sk, s[1]);
        const std::string key_padding_flag = "--key-padding-mask " + path + " (true = padded key; with "
                                             "--mask-convention keep if 1 marks real tokens)";
        if (as_key_padding && as_attn_mask)
            throw usage_error(what + ": shape " + tensor_index_text(s) + " reads two ways: [Sq,Sk], a mask of " +
                              std::to_string(s[0]) + " queries by " + std::to_string(s[1]) + " keys, or [B,Sk], " +
                              "a key-padding mask of one row per batch item (B = " + std::to_string(s[0]) +
                              "). For [B,Sk] give " + key_padding_flag + "; for [Sq,Sk] save it as " +
                              tensor_index_text({1, s[0], s[1]}));
        if (as_key_padding)
            throw usage_error(what + ": shape " + tensor_index_text(s) + " is [B,Sk], a key-padding mask of one row " +
                              "per batch item, not [Sq,Sk] (" + sizes.source(Sq) + "): give " + key_padding_flag);
        sizes.from_file(what, s, {Sq, Sk});
    } else if (s.size() == 3 || (s.size() == 4 && s[1] == 1)) {
        const std::vector<std::size_t> bqk{s[0], s[s.size() - 2], s[s.size() - 1]};
        if (bqk[0] == 1) sizes.from_file(what, {bqk[1], bqk[2]}, {Sq, Sk});  // shared by every batch item
        else sizes.from_file(what, bqk, {B, Sq, Sk});
    } else {
        throw error(what + ": shape " + tensor_index_text(s) +
                    " is not a mask shape: expected [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk]");
    }
}

/// What neither a flag nor a file gave: the recorded run's size `r` (one that equalled
/// its default follows it), else CLI.md's defaults (a model width follows the input
/// width a file shows: a [B,S,512] input means D = 512; a key-padding mask alone
/// means self-attention over its keys).
void resolve_sizes(config& c, const size_table& sizes, const config* r, bool key_padding_given) {
    if (c.past > 0) {  // a decoding step: Sk = N + Sq, x [B,N+Sq,Din]
        if (!sizes.known(Sq) && sizes.known(Sk) && sizes.get(Sk) <= c.past)
            throw usage_error(sizes.source(Sk) + ", which leaves no new token after --past " + std::to_string(c.past) +
                              " (Sk = N + Sq, Sq >= 1)");
        c.seq = sizes.get_or(Sq, sizes.known(Sk) ? sizes.get(Sk) - c.past : (r ? r->seq : 4));
        c.kv_seq = sizes.known(Sk) ? sizes.get(Sk) : decoding_step_keys(c.past, c.seq);
    }
    c.batch = sizes.get_or(B, r ? r->batch : 1);
    if (c.past == 0) c.seq = sizes.get_or(Sq, r ? r->seq : (key_padding_given && sizes.known(Sk) ? sizes.get(Sk) : 4));
    c.d_model = sizes.get_or(D, r ? r->d_model : (sizes.known_from_file(Din) ? sizes.get(Din) : 8));
    c.d_in = sizes.get_or(Din, !r || r->d_in == r->d_model ? c.d_model : r->d_in);
    if (c.past == 0) c.kv_seq = sizes.get_or(Sk, !r || r->kv_seq == r->seq ? c.seq : r->kv_seq);
    c.d_kv_in = sizes.get_or(Dkv, !r || r->d_kv_in == r->d_in ? c.d_in : r->d_kv_in);
}

/// The size flags in size_name order.
std::array<std::optional<std::int64_t>, size_count> flag_values(const size_flags& f) {
    return {f.batch, f.seq, f.kv_seq, f.d_model, f.d_in, f.d_kv_in};
}

/// Every size flag, before a file is read or a size derived from it: each at least 1.
void check_size_flags(const size_flags& f) {
    const auto values = flag_values(f);
    for (std::size_t n = 0; n < size_count; ++n)
        if (values[n] && *values[n] <= 0)
            throw usage_error(std::string(size_flag_names[n]) + " " + std::to_string(*values[n]) + " must be at least 1");
}

}  // namespace

given_tensors read_given_files(const input_paths& paths, read_budget* budget) {
    given_tensors given;
    const auto read = [budget](const char* flag, const std::string& path,
                               const char* dump_name) -> std::optional<named_tensor> {
        if (path.empty()) return std::nullopt;
        const std::string what = flag_and_file(flag, path);
        return named_tensor{what, read_one_tensor(what, path, dump_name, budget)};
    };
    given.x = read("--input", paths.input, "input.x");
    given.x_kv = read("--kv-input", paths.kv_input, "input.x_kv");
    given.q = read("--q", paths.q, "projections.q");
    given.k = read("--k", paths.k, "projections.k");
    given.v = read("--v", paths.v, "projections.v");
    if (!paths.params.empty()) {
        given.params_what = flag_and_file("--params", paths.params);
        given.model_flags = paths.model;
        read_params_file(given.params_what, paths.params, paths.model, paths.tokens, budget, given);
    }
    if (!paths.vocab.empty()) {
        const std::string what = flag_and_file("--vocab", paths.vocab);
        given.token_labels = token_labels(read_vocab(paths.vocab, what, budget), paths.tokens, what);
    }
    given.mask = read("--mask-file", paths.mask, "mask.mask");
    given.key_padding_mask = read("--key-padding-mask", paths.key_padding_mask, "key_padding_mask");
    given.mask_only = paths.mask_only;
    return given;
}

loaded_inputs load_inputs(config base, const size_flags& flags, const input_paths& paths) {
    check_size_flags(flags);
    check_file_combination(paths);
    config& c = base;
    c.sources.from_projections = !paths.q.empty();
    if (c.separate_kv && !paths.q.empty())
        throw usage_error("--cross draws a separate x_kv, but --q/--k/--v start the run after the inputs");
    c.separate_kv = c.separate_kv || !paths.kv_input.empty();  // --cross asks for x_kv too
    c.sources.x_from_file = !paths.input.empty();
    c.sources.x_kv_from_file = !paths.kv_input.empty();
    c.sources.params_from_file = !paths.params.empty();
    c.sources.tokens_from_text = paths.tokens_from_text && !paths.tokens.empty();
    c.mask.from_file = !paths.mask.empty();
    c.mask.key_padding = !paths.key_padding_mask.empty();
    read_budget budget(c.limits.max_memory == 0 ? read_budget::unlimited : c.limits.max_memory);
    return check_inputs(c, flags, read_given_files(paths, &budget));
}

loaded_inputs check_inputs(config base, const size_flags& flags, given_tensors given, const config* recorded) {
    check_size_flags(flags);
    loaded_inputs out;
    config& c = base;
    size_table sizes;
    const auto values = flag_values(flags);
    for (std::size_t n = 0; n < size_count; ++n) sizes.from_flag(size_name(n), values[n]);

    given_inputs& g = out.given;
    warning_list& warnings = out.warnings;
    const auto take = [&](std::optional<named_tensor>& t, const char* stage, const layout& l) -> optional_tensor {
        if (!t) return std::nullopt;
        warn_non_finite(*t, stage, warnings);
        sizes.from_file(t->what, t->tensor.shape, l);
        return std::move(t->tensor.values);
    };
    if (!given.tokens.empty()) {
        if (c.past > 0) throw usage_error("--tokens cannot be used with --past (a decoding step starts from a cache)");
        c.sources.tokens = given.tokens;
        c.sources.token_labels = given.token_labels;
        c.sources.x_from_file = true;
        g.embed = std::move(given.embed);
    }
    g.x = take(given.x, "input", c.past > 0 ? layout{B, Sk, Din} : layout{B, Sq, Din});  // [B,N+Sq,Din] in a decoding step
    g.x_kv = take(given.x_kv, "input", {B, Sk, Dkv});
    if (c.sources.from_projections) {
        if (!given.q || !given.k || !given.v) throw error("the run starts at the projections, but Q, K and V are not all given");
        projections qkv;
        qkv.q = *take(given.q, "projections", {B, Sq, D});
        qkv.k = *take(given.k, "projections", {B, Sk, D});
        qkv.v = *take(given.v, "projections", {B, Sk, D});
        g.qkv = std::move(qkv);
    }
    if (given.model) {
        apply_model_layer(c, *given.model, given.model_json, given.model_flags, given.params_what, &warnings);
        // BERT's embeddings.LayerNorm (--tokens): its eps is layer_norm_eps, 1e-12 in BERT's own config
        if (!given.tokens.empty() && given.model->names.arch == model_arch::bert && !(given.model_json && given.model_json->norm_eps))
            c.norm_eps = 1e-12f;
        given.params = std::move(given.model->weights);
        given.model->weights.clear();
    }
    if (!given.params_what.empty())
        g.params = take_parameters(std::move(given.params), c, given.params_what, sizes, warnings);
    // The masks last, so that a 2-D mask knows B from the other files.
    if (given.mask) take_mask_sizes(given.mask->tensor, given.mask->what, sizes);
    if (given.key_padding_mask)
        sizes.from_file(given.key_padding_mask->what, given.key_padding_mask->tensor.shape, {B, Sk});

    resolve_sizes(c, sizes, recorded, given.key_padding_mask.has_value());
    if (sizes.known_from_file(D) && c.heads > 0 && c.d_model % c.heads != 0)  // validate() would blame --d-model
        throw usage_error(sizes.source(D) + ", which is not divisible by --heads " + std::to_string(c.heads));
    validate(c);
    if (given.model && given.model_json) check_hf_positions(c, given.model_json->attention, given.model_json->what);
    // Before any size is derived from the flags (a mask expanded to [B,1,Sq,Sk]): the
    // leanest run's estimate against --max-memory (exit 1), and, with no limit, what a
    // machine can address. The run's own plan is checked later (plan_memory). attn mask
    // computes no stage but the mask, a row at a time: its own need is checked instead.
    if (c.limits.max_memory != 0) {
        if (given.mask_only)
            check_mask_views_memory(c, c.limits.max_memory);
        else
            check_least_memory(c, c.limits.max_memory);
    }
    check_addressable(c);

    const auto batch = static_cast<std::size_t>(c.batch);
    if (given.mask) {
        const named_tensor& m = *given.mask;
        const mask_convention read_as = given.mask_is_keep ? mask_convention::keep : c.mask.file_convention;
        g.mask = expand_attn_mask(mask_keep_values(m.tensor, read_as, m.what), m.tensor.shape, batch);
        if (!given.mask_is_keep) mask_convention_hints(*g.mask, read_as, false, m.what, warnings);
    }
    if (given.key_padding_mask) {
        const named_tensor& m = *given.key_padding_mask;
        const xt::xarray<bool> keys =
            expand_key_padding(mask_keep_values(m.tensor, c.mask.key_padding_convention, m.what), batch,
                               static_cast<std::size_t>(c.seq), static_cast<std::size_t>(c.kv_seq));
        mask_convention_hints(keys, c.mask.key_padding_convention, true, m.what, warnings);
        g.mask = g.mask ? xt::xarray<bool>(*g.mask && keys) : keys;
    }
    out.cfg = c;
    return out;
}

}  // namespace attn
