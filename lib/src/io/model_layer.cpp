// A model's own weight names -> attn's weights (model_layer.hpp).
#include "attn/io/model_layer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <utility>

#include "attn/compute/error.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

/// The name one attention weight has in each architecture: prefix + before + L + after
/// (`before` empty for a file without layers).
struct name_pattern {
    model_arch arch;
    const char* before;  // "h."
    const char* after;   // ".attn.c_attn.weight"
    const char* shown;   // "GPT-2's h.L.attn.c_attn.weight", for "expected ..."
};

constexpr std::array<name_pattern, 4> model_patterns{{
    {model_arch::gpt2, "h.", ".attn.c_attn.weight", "GPT-2's h.L.attn.c_attn.weight"},
    {model_arch::bert, "encoder.layer.", ".attention.self.query.weight",
     "BERT's encoder.layer.L.attention.self.query.weight"},
    {model_arch::llama, "layers.", ".self_attn.q_proj.weight", "Llama's layers.L.self_attn.q_proj.weight"},
    {model_arch::mha, "", "in_proj_weight", "nn.MultiheadAttention's in_proj_weight"},
}};

const name_pattern& pattern_of(model_arch a) {
    for (const name_pattern& p : model_patterns)
        if (p.arch == a) return p;
    return model_patterns[0];
}

bool name_ends_with(const std::string& s, std::string_view end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

/// A prefix is empty or ends with a dot ("transformer."): "xh.0..." is not GPT-2's h.0.
bool is_prefix(const std::string& p) { return p.empty() || p.back() == '.'; }

/// Whether `name` is p's name: its prefix and layer, if so.
std::optional<std::pair<std::string, std::int64_t>> match_pattern(const name_pattern& p, const std::string& name) {
    if (!name_ends_with(name, p.after)) return std::nullopt;
    std::string rest = name.substr(0, name.size() - std::string_view(p.after).size());
    if (*p.before == '\0') {
        if (!is_prefix(rest)) return std::nullopt;
        return std::pair{rest, std::int64_t{-1}};
    }
    std::size_t digits = 0;
    while (digits < rest.size() && digits < 10 && std::isdigit(static_cast<unsigned char>(rest[rest.size() - 1 - digits])))
        ++digits;
    if (digits == 0 || digits >= 10 || digits == rest.size()) return std::nullopt;
    const std::string number = rest.substr(rest.size() - digits);
    if (number.size() > 1 && number[0] == '0') return std::nullopt;  // "h.01": not a layer number
    rest.resize(rest.size() - digits);
    if (!name_ends_with(rest, p.before)) return std::nullopt;
    rest.resize(rest.size() - std::string_view(p.before).size());
    if (!is_prefix(rest)) return std::nullopt;
    return std::pair{rest, std::stoll(number)};
}

/// The architecture `p` in `names`: the first prefix found, and the layers under it.
std::optional<model_names> find_pattern(const name_pattern& p, const std::vector<std::string>& names) {
    std::optional<model_names> found;
    std::set<std::int64_t> layers;
    for (const std::string& name : names) {
        const auto m = match_pattern(p, name);
        if (!m) continue;
        if (!found) found = model_names{p.arch, m->first, {}};
        if (m->first == found->prefix && m->second >= 0) layers.insert(m->second);
    }
    if (found) found->layers.assign(layers.begin(), layers.end());
    return found;
}

constexpr std::array<const char*, 8> attn_names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"};

/// attn's own names: w_q ... b_o, bare or as our dumps write them (params.w_q).
bool has_attn_names(const std::vector<std::string>& names) {
    for (const std::string& name : names)
        for (const char* own : attn_names)
            if (name == own || name == std::string("params.") + own) return true;
    return false;
}

/// "layers 0 to 11", "layers 0, 2, 5", "layer 3".
std::string layers_text(const std::vector<std::int64_t>& layers) {
    if (layers.size() == 1) return "layer " + std::to_string(layers[0]);
    std::string list;
    for (std::size_t i = 0; i < layers.size();) {
        std::size_t end = i;
        while (end + 1 < layers.size() && layers[end + 1] == layers[end] + 1) ++end;
        list += (list.empty() ? "" : ", ") + std::to_string(layers[i]) +
                (end > i + 1 ? " to " + std::to_string(layers[end]) : end == i + 1 ? ", " + std::to_string(layers[end]) : "");
        i = end + 1;
    }
    return "layers " + list;
}

/// "wte.weight, h.0.ln_1.weight, ... (12 more)": the first few names of a file.
std::string some_names(const std::vector<std::string>& names) {
    constexpr std::size_t shown = 4;
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", " : "") + quoted_field(names[i]);
    if (names.size() > shown) text += ", ... (" + std::to_string(names.size() - shown) + " more)";
    return names.empty() ? "no tensors" : "found " + text;
}

std::string expected_names() {
    std::string text = "expected ";
    for (const name_pattern& p : model_patterns) text += std::string(p.shown) + ", ";
    return text + "or attn's w_q b_q w_k b_k w_v b_v w_o b_o";
}

/// The architecture the names look like, for a message about a forced --arch.
std::optional<model_names> detected(const std::vector<std::string>& names) {
    if (has_attn_names(names)) return model_names{model_arch::attn, "", {}};
    for (const name_pattern& p : model_patterns)
        if (auto found = find_pattern(p, names)) return found;
    // names without dots are meant as attn's own (a misspelt w_q): its reader says which is unexpected
    const bool flat = !names.empty() && std::all_of(names.begin(), names.end(), [](const std::string& n) {
        return n.find('.') == std::string::npos;
    });
    if (flat) return model_names{model_arch::attn, "", {}};
    return std::nullopt;
}

}  // namespace

std::string_view model_arch_name(model_arch a) {
    switch (a) {
        case model_arch::gpt2: return "gpt2";
        case model_arch::bert: return "bert";
        case model_arch::llama: return "llama";
        case model_arch::mha: return "mha";
        case model_arch::attn: break;
    }
    return "attn";
}

std::optional<model_arch> parse_model_arch(std::string_view name) {
    for (model_arch a : {model_arch::attn, model_arch::gpt2, model_arch::bert, model_arch::llama, model_arch::mha})
        if (model_arch_name(a) == name) return a;
    return std::nullopt;
}

std::string_view model_arch_title(model_arch a) {
    switch (a) {
        case model_arch::gpt2: return "GPT-2";
        case model_arch::bert: return "BERT";
        case model_arch::llama: return "Llama";
        case model_arch::mha: return "nn.MultiheadAttention";
        case model_arch::attn: break;
    }
    return "attn";
}

model_names detect_model(const std::vector<std::string>& names, std::optional<model_arch> forced, const std::string& what) {
    const std::optional<model_names> found = detected(names);
    if (!forced) {
        if (found) return *found;
        throw error(what + ": no attention weights I know: " + some_names(names) + "; " + expected_names());
    }
    const std::string file = what.substr(what.find(' ') + 1);
    if (*forced == model_arch::attn) {
        if (found && found->arch != model_arch::attn)
            throw usage_error("--arch attn: " + file + " holds no w_q (attn's own names); its names are " +
                              std::string(model_arch_title(found->arch)) + "'s: give --arch " +
                              std::string(model_arch_name(found->arch)) + " or leave --arch out");
        return model_names{model_arch::attn, "", {}};
    }
    if (auto own = find_pattern(pattern_of(*forced), names)) return *own;
    throw usage_error("--arch " + std::string(model_arch_name(*forced)) + ": " + file + " has no " +
                      pattern_of(*forced).shown +
                      (found ? "; its names are " + std::string(model_arch_title(found->arch)) + "'s: give --arch " +
                                   std::string(model_arch_name(found->arch)) + " or leave --arch out"
                             : "; " + some_names(names)));
}

std::int64_t choose_layer(const model_names& m, std::optional<std::int64_t> layer, const std::string& what) {
    const std::string file = what.substr(what.find(' ') + 1);
    if (m.arch == model_arch::attn || m.arch == model_arch::mha) {
        if (layer)
            throw usage_error("--layer " + std::to_string(*layer) + ": " + file + " holds one attention layer (" +
                              std::string(model_arch_title(m.arch)) + "'s names, no layer numbers); leave --layer out");
        return -1;
    }
    const std::int64_t L = layer.value_or(0);
    if (std::find(m.layers.begin(), m.layers.end(), L) == m.layers.end())
        throw usage_error("--layer " + std::to_string(L) + ": " + file + " holds " + std::string(model_arch_title(m.arch)) +
                          " " + layers_text(m.layers) + (layer ? "" : " (give --layer L)"));
    return L;
}

std::vector<std::string> layer_tensor_names(const model_names& m, std::int64_t layer) {
    const std::string L = std::to_string(layer), P = m.prefix;
    std::vector<std::string> names;
    const auto add = [&](const std::string& stem, std::initializer_list<const char*> ends) {
        for (const char* end : ends) names.push_back(P + stem + end);
    };
    switch (m.arch) {
        case model_arch::gpt2:
            for (const char* part : {"ln_1.", "attn.c_attn.", "attn.c_proj.", "ln_2.", "mlp.c_fc.", "mlp.c_proj."})
                add("h." + L + "." + part, {"weight", "bias"});
            break;
        case model_arch::bert:
            for (const char* part : {"attention.self.query.", "attention.self.key.", "attention.self.value.",
                                     "attention.output.dense.", "attention.output.LayerNorm.", "intermediate.dense.",
                                     "output.dense.", "output.LayerNorm."})
                add("encoder.layer." + L + "." + part, {"weight", "bias"});
            break;
        case model_arch::llama:
            add("layers." + L + ".input_layernorm.", {"weight"});
            add("layers." + L + ".post_attention_layernorm.", {"weight"});
            for (const char* part : {"self_attn.q_proj.", "self_attn.k_proj.", "self_attn.v_proj.", "self_attn.o_proj.",
                                     "mlp.gate_proj.", "mlp.up_proj.", "mlp.down_proj."})
                add("layers." + L + "." + part, {"weight", "bias"});
            break;
        case model_arch::mha:
            add("", {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
            break;
        case model_arch::attn:
            for (const char* own : attn_names) names.insert(names.end(), {own, std::string("params.") + own});
            break;
    }
    return names;
}

std::optional<layer_width> layer_input_width(const model_names& m, std::int64_t layer,
                                             const std::map<std::string, std::vector<std::size_t>>& shapes) {
    const std::string L = std::to_string(layer), P = m.prefix;
    std::string weight;
    std::size_t axis = 1;
    switch (m.arch) {
        case model_arch::gpt2: weight = P + "h." + L + ".attn.c_attn.weight", axis = 0; break;
        case model_arch::bert: weight = P + "encoder.layer." + L + ".attention.self.query.weight"; break;
        case model_arch::llama: weight = P + "layers." + L + ".self_attn.q_proj.weight"; break;
        case model_arch::mha: weight = P + "in_proj_weight"; break;
        case model_arch::attn: return std::nullopt;
    }
    const auto it = shapes.find(weight);
    if (it == shapes.end() || it->second.size() != 2) return std::nullopt;
    return layer_width{weight, it->second, it->second[axis]};
}

namespace {

/// Building one model_layer: the file's tensors, taken by name, with their shapes checked.
class layer_mapper {
public:
    layer_mapper(std::map<std::string, loaded_tensor> file, const model_names& m, std::int64_t layer, std::string what)
        : file_(std::move(file)), what_(std::move(what)) {
        out_.names = m;
        out_.layer = layer;
    }

    bool has(const std::string& name) const { return file_.count(name) != 0; }

    /// The tensor `name`, which must exist and have `rank` axes.
    loaded_tensor& need(const std::string& name, std::size_t rank, const char* stored) {
        const auto it = file_.find(name);
        if (it == file_.end())
            throw error(what_ + ": no tensor " + name + " (" + std::string(model_arch_title(out_.names.arch)) +
                        " layers have it)");
        if (it->second.shape.size() != rank) bad_shape(name, stored);
        return it->second;
    }

    [[noreturn]] void bad_shape(const std::string& name, const char* stored) const {
        throw error(what_ + ": " + quoted_field(name) + " has shape " + tensor_index_text(file_.at(name).shape) + "; " +
                    std::string(model_arch_title(out_.names.arch)) + " stores it " + stored);
    }

    void put(const std::string& weight, loaded_tensor t, std::string from) {
        count_non_finite(t);
        out_.weights[weight] = std::move(t);
        out_.sources.push_back({weight, std::move(from)});
    }

    /// A tensor taken as it is (nn.Linear [out, in], a bias, a norm's weight).
    void as_is(const std::string& weight, const std::string& name, std::size_t rank, const char* stored) {
        put(weight, std::move(need(name, rank, stored)), name);
    }

    /// W[:, first:first+count]ᵀ of W [in, out] (a Conv1D's columns, transposed into nn.Linear's [out, in]).
    void columns_transposed(const std::string& weight, const std::string& name, std::size_t first, std::size_t count,
                            std::string from) {
        const loaded_tensor& W = file_.at(name);
        const std::size_t in = W.shape[0], cols = W.shape[1];
        loaded_tensor t;
        t.shape = {count, in};
        t.values = xt::xarray<float>::from_shape(t.shape);
        for (std::size_t o = 0; o < count; ++o)
            for (std::size_t i = 0; i < in; ++i) t.values.data()[o * in + i] = W.values.data()[i * cols + first + o];
        put(weight, std::move(t), std::move(from));
    }

    /// rows [first, first+count) of a [rows, width] or [rows] tensor.
    void rows(const std::string& weight, const std::string& name, std::size_t first, std::size_t count, std::string from) {
        const loaded_tensor& W = file_.at(name);
        const std::size_t width = W.shape.size() == 2 ? W.shape[1] : 1;
        loaded_tensor t;
        t.shape = W.shape;
        t.shape[0] = count;
        t.values = xt::xarray<float>::from_shape(t.shape);
        std::copy_n(W.values.data() + first * width, count * width, t.values.data());
        put(weight, std::move(t), std::move(from));
    }

    model_layer& result() { return out_; }

private:
    std::map<std::string, loaded_tensor> file_;
    std::string what_;
    model_layer out_;
};

std::string range(std::size_t first, std::size_t count) {
    return std::to_string(first) + ":" + std::to_string(first + count);
}

/// w_q, w_k, w_v, and b_q, b_k, b_v when the file has the bias [3D], from a weight that stacks them:
/// a Conv1D's [D,3D] (GPT-2's c_attn: its column thirds, transposed) or [3D,D] (in_proj_weight: its
/// row thirds). Returns D. Messages name `stored` for a weight of another rank, `stored_3d` of other sizes.
std::size_t split_qkv(layer_mapper& m, const std::string& weight, const std::string& bias, bool conv1d,
                      const char* stored, const char* stored_3d) {
    const loaded_tensor& W = m.need(weight, 2, stored);
    const std::size_t D = W.shape[conv1d ? 0 : 1];
    if (W.shape[conv1d ? 1 : 0] != 3 * D) m.bad_shape(weight, stored_3d);
    const bool has_bias = m.has(bias);
    if (has_bias && m.need(bias, 1, "[3D]").shape[0] != 3 * D) m.bad_shape(bias, "[3D]");
    const char* letters[] = {"q", "k", "v"};
    for (std::size_t i = 0; i < 3; ++i) {
        const std::string third = range(i * D, D);
        if (conv1d)
            m.columns_transposed(std::string("w_") + letters[i], weight, i * D, D,
                                 weight + "[:, " + third + "]ᵀ (Conv1D stores [in, out])");
        else
            m.rows(std::string("w_") + letters[i], weight, i * D, D, weight + "[" + third + "]");
        if (has_bias) m.rows(std::string("b_") + letters[i], bias, i * D, D, bias + "[" + third + "]");
    }
    return D;
}

void map_gpt2(layer_mapper& m, const std::string& stem) {
    const std::string attn = stem + "attn.";
    const char* conv1d = "[D,3D] (Conv1D: [in, out])";
    const std::size_t D = split_qkv(m, attn + "c_attn.weight", attn + "c_attn.bias", true, conv1d, conv1d);
    const loaded_tensor& P = m.need(attn + "c_proj.weight", 2, "[D,D] (Conv1D: [in, out])");
    if (P.shape[0] != D || P.shape[1] != D) m.bad_shape(attn + "c_proj.weight", "[D,D] (Conv1D: [in, out])");
    m.columns_transposed("w_o", attn + "c_proj.weight", 0, D, attn + "c_proj.weightᵀ (Conv1D stores [in, out])");
    if (m.has(attn + "c_proj.bias")) m.as_is("b_o", attn + "c_proj.bias", 1, "[D]");
    m.as_is("norm_weight", stem + "ln_1.weight", 1, "[D]");
    if (m.has(stem + "ln_1.bias")) m.as_is("norm_bias", stem + "ln_1.bias", 1, "[D]");
    m.result().norm = norm_kind::layer_norm;
}

/// BERT's and Llama's nn.Linear layers, as they are: q, k, v, o.
void map_linear(layer_mapper& m, const std::array<std::string, 4>& layers) {
    const char* letters[] = {"q", "k", "v", "o"};
    for (std::size_t i = 0; i < 4; ++i) {
        m.as_is(std::string("w_") + letters[i], layers[i] + "weight", 2, "[out, in] (nn.Linear)");
        if (m.has(layers[i] + "bias")) m.as_is(std::string("b_") + letters[i], layers[i] + "bias", 1, "[out]");
    }
}

/// A norm's weight [D] (and bias) as `weight`, `bias`.
void map_norm(layer_mapper& m, const std::string& weight, const std::string& bias, const std::string& stem, std::size_t D) {
    const loaded_tensor& w = m.need(stem + "weight", 1, "[D]");
    if (w.shape[0] != D) m.bad_shape(stem + "weight", "[D]");
    m.as_is(weight, stem + "weight", 1, "[D]");
    if (!bias.empty() && m.has(stem + "bias")) {
        if (m.need(stem + "bias", 1, "[D]").shape[0] != D) m.bad_shape(stem + "bias", "[D]");
        m.as_is(bias, stem + "bias", 1, "[D]");
    }
}

/// An MLP's linear layer, [out, in] with out = `rows` (0: any) and in = `cols`, as `weight`, and
/// its bias [out] as `bias` when there is one. GPT-2's Conv1D stores [in, out]: kept so (torch's
/// addmm reads it so; block_weights::conv1d). Returns out.
std::size_t map_mlp_linear(layer_mapper& m, const std::string& weight, const std::string& bias, const std::string& stem,
                           std::size_t rows, std::size_t cols, bool conv1d) {
    const char* stored = conv1d ? "[in, out] (Conv1D)" : "[out, in] (nn.Linear)";
    const loaded_tensor& W = m.need(stem + "weight", 2, stored);
    const std::size_t out = W.shape[conv1d ? 1 : 0], in = W.shape[conv1d ? 0 : 1];
    if (in != cols || (rows != 0 && out != rows)) m.bad_shape(stem + "weight", stored);
    m.as_is(weight, stem + "weight", 2, stored);
    if (m.has(stem + "bias")) {
        if (m.need(stem + "bias", 1, "[out]").shape[0] != out) m.bad_shape(stem + "bias", "[out]");
        m.as_is(bias, stem + "bias", 1, "[out]");
    }
    return out;
}

/// The layer's MLP and the norms around it (model_layer::block), when the file holds its up
/// weight (`up`); a file of attention weights alone has no block.
void map_block(layer_mapper& m, model_arch arch, const std::string& stem) {
    const std::size_t D = m.result().weights.at("w_q").shape[1];
    block_spec& b = m.result().block;
    switch (arch) {
        case model_arch::gpt2:
            if (!m.has(stem + "mlp.c_fc.weight")) return;
            map_norm(m, "mlp_norm_weight", "mlp_norm_bias", stem + "ln_2.", D);
            b.width = static_cast<std::int64_t>(map_mlp_linear(m, "w_up", "b_up", stem + "mlp.c_fc.", 0, D, true));
            map_mlp_linear(m, "w_down", "b_down", stem + "mlp.c_proj.", D, static_cast<std::size_t>(b.width), true);
            b.norm = norm_kind::layer_norm;
            break;
        case model_arch::bert:
            if (!m.has(stem + "intermediate.dense.weight")) return;
            map_norm(m, "mlp_norm_weight", "mlp_norm_bias", stem + "attention.output.LayerNorm.", D);
            b.width = static_cast<std::int64_t>(map_mlp_linear(m, "w_up", "b_up", stem + "intermediate.dense.", 0, D, false));
            map_mlp_linear(m, "w_down", "b_down", stem + "output.dense.", D, static_cast<std::size_t>(b.width), false);
            map_norm(m, "out_norm_weight", "out_norm_bias", stem + "output.LayerNorm.", D);
            b.norm = norm_kind::layer_norm;
            b.post_norm = true;
            break;
        case model_arch::llama:
            if (!m.has(stem + "mlp.up_proj.weight")) return;
            map_norm(m, "mlp_norm_weight", "", stem + "post_attention_layernorm.", D);
            b.width = static_cast<std::int64_t>(map_mlp_linear(m, "w_up", "b_up", stem + "mlp.up_proj.", 0, D, false));
            map_mlp_linear(m, "w_gate", "b_gate", stem + "mlp.gate_proj.", static_cast<std::size_t>(b.width), D, false);
            map_mlp_linear(m, "w_down", "b_down", stem + "mlp.down_proj.", D, static_cast<std::size_t>(b.width), false);
            if (m.result().weights.count("b_gate")) throw error(stem + "mlp.gate_proj.bias: attn reads Llama's MLP without biases");
            b.norm = norm_kind::rms_norm;
            b.gated = true;
            break;
        case model_arch::mha:
        case model_arch::attn: return;
    }
    b.bias = m.result().weights.count("b_up") != 0;
    if (b.bias != (m.result().weights.count("b_down") != 0))
        throw error(stem + ": the MLP has a bias on one of its linear layers only; expected both or none");
}

void map_mha(layer_mapper& m, const std::string& P) {
    split_qkv(m, P + "in_proj_weight", P + "in_proj_bias", false, "[3D,D]", "[3D,D] (q, k, v stacked)");
    m.as_is("w_o", P + "out_proj.weight", 2, "[D,D] (nn.Linear)");
    if (m.has(P + "out_proj.bias")) m.as_is("b_o", P + "out_proj.bias", 1, "[D]");
}

}  // namespace

model_layer map_model_layer(std::map<std::string, loaded_tensor> file, const model_names& names, std::int64_t layer,
                            const std::string& what) {
    layer_mapper m(std::move(file), names, layer, what);
    const std::string L = std::to_string(layer), P = names.prefix;
    switch (names.arch) {
        case model_arch::gpt2:
            map_gpt2(m, P + "h." + L + ".");
            map_block(m, names.arch, P + "h." + L + ".");
            break;
        case model_arch::bert: {
            const std::string a = P + "encoder.layer." + L + ".attention.";
            map_linear(m, {a + "self.query.", a + "self.key.", a + "self.value.", a + "output.dense."});
            map_block(m, names.arch, P + "encoder.layer." + L + ".");
            break;
        }
        case model_arch::llama: {
            const std::string a = P + "layers." + L + ".self_attn.";
            map_linear(m, {a + "q_proj.", a + "k_proj.", a + "v_proj.", a + "o_proj."});
            m.as_is("norm_weight", P + "layers." + L + ".input_layernorm.weight", 1, "[D]");
            m.result().norm = norm_kind::rms_norm;
            map_block(m, names.arch, P + "layers." + L + ".");
            break;
        }
        case model_arch::mha:
            map_mha(m, P);
            break;
        case model_arch::attn:
            throw error(what + ": attn's own names are read as they are, not mapped");
    }
    model_layer& out = m.result();
    // the q, k, v biases come together or not at all (a file with some of them is damaged)
    const int biases = int(out.weights.count("b_q") + out.weights.count("b_k") + out.weights.count("b_v"));
    if (biases != 0 && biases != 3)
        throw error(what + ": only some of the q, k, v biases of " + std::string(model_arch_title(names.arch)) +
                    (layer >= 0 ? " layer " + L : std::string()) + " are there; expected all three or none");
    // the params stage's order: w_q b_q w_k b_k w_v b_v w_o b_o, then the norm
    const auto order = [](const std::string& w) {
        const std::array<const char*, 19> names{"w_q",    "b_q",    "w_k",         "b_k",
                                                "w_v",    "b_v",    "w_o",         "b_o",
                                                "norm_weight",     "norm_bias",   "mlp_norm_weight",
                                                "mlp_norm_bias",   "w_gate",      "w_up",
                                                "b_up",   "w_down", "b_down",      "out_norm_weight",
                                                "out_norm_bias"};
        return std::find(names.begin(), names.end(), w) - names.begin();
    };
    std::stable_sort(out.sources.begin(), out.sources.end(),
                     [&](const weight_source& a, const weight_source& b) { return order(a.weight) < order(b.weight); });
    return std::move(out);
}

}  // namespace attn
