// A model's config.json and its architecture's computation, merged with the flags (model_config.hpp).
#include "attn/io/model_config.hpp"

#include <cmath>
#include <filesystem>
#include <system_error>

#include "attn/compute/error.hpp"
#include "attn/compute/rope_frequencies.hpp"
#include "attn/io/json_document.hpp"
#include "attn/text/utf8_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

/// One of the keys that config.json may say a setting with; the first present wins.
const nlohmann::json* first_key(const nlohmann::json& j, std::initializer_list<const char*> keys, std::string& which) {
    for (const char* key : keys) {
        const auto it = j.find(key);
        if (it != j.end() && !it->is_null()) {
            which = key;
            return &*it;
        }
    }
    return nullptr;
}

std::optional<std::int64_t> whole_key(const nlohmann::json& j, std::initializer_list<const char*> keys,
                                      std::string& which, const std::string& what) {
    const nlohmann::json* v = first_key(j, keys, which);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer() || (v->is_number_unsigned() && v->get<std::uint64_t>() > (std::uint64_t(1) << 40)) ||
        v->get<std::int64_t>() < 1 || v->get<std::int64_t>() > (std::int64_t(1) << 40))
        throw error(what + ": " + which + " is " + json_excerpt(*v) + "; expected a whole number of at least 1");
    return v->get<std::int64_t>();
}

std::optional<double> positive_key(const nlohmann::json& j, std::initializer_list<const char*> keys, std::string& which,
                                   const std::string& what) {
    const nlohmann::json* v = first_key(j, keys, which);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number() || !(v->get<double>() > 0.0) || !std::isfinite(v->get<double>()))
        throw error(what + ": " + which + " is " + json_excerpt(*v) + "; expected a positive number");
    return v->get<double>();
}

/// "m.safetensors", the file part of "--params m.safetensors".
std::string file_of(const std::string& what) { return what.substr(what.find(' ') + 1); }

/// A setting both config.json and a flag may give: config.json's (a flag that says otherwise is an
/// error naming both), else the flag's; nullopt when neither gives it.
template <class T>
std::optional<T> json_else_flag(const std::optional<hf_config>& json, std::optional<T> hf_config::*value,
                                std::string hf_config::*key, const std::optional<T>& flag, const char* flag_name) {
    if (!json || !(*json.*value)) return flag;
    const T said = *(*json.*value);
    if (flag && *flag != said)
        throw usage_error(std::string(flag_name) + " " + std::to_string(*flag) + " contradicts " + json->what + ": " +
                          *json.*key + " is " + std::to_string(said) + " (leave " + flag_name + " out)");
    return said;
}

/// config.json's num_key_value_heads against the rows of the layer's w_k [G·dk,Dkv] (dk = D / H).
void check_kv_rows(const config& c, const model_layer& m, const hf_config& json, const std::string& what) {
    const auto q = m.weights.find("w_q"), k = m.weights.find("w_k");
    if (q == m.weights.end() || k == m.weights.end() || q->second.shape.size() != 2 || k->second.shape.size() != 2) return;
    const auto D = static_cast<std::int64_t>(q->second.shape[0]), rows = static_cast<std::int64_t>(k->second.shape[0]);
    if (c.heads <= 0 || D % c.heads != 0 || c.kv_heads <= 0 || c.kv_heads > D) return;  // validate() says why
    const std::int64_t dk = D / c.heads;
    if (rows == c.kv_heads * dk) return;
    throw error(json.what + ": " + json.kv_heads_key + " is " + std::to_string(c.kv_heads) + ", but " + what +
                "'s w_k has shape " + tensor_index_text(k->second.shape) + ": " + std::to_string(c.kv_heads) +
                " key/value heads of dk = D / H = " + std::to_string(D) + " / " + std::to_string(c.heads) + " = " +
                std::to_string(dk) + " need " + std::to_string(c.kv_heads * dk) + " rows");
}

/// Heads: config.json, else --heads; a model file needs one of them.
void take_heads(config& c, const model_layer& m, const std::optional<hf_config>& json, const model_choice& flags,
                const std::string& what) {
    const auto heads = json_else_flag(json, &hf_config::heads, &hf_config::heads_key, flags.heads, "--heads");
    if (!heads)
        throw usage_error(what + " holds " + (m.names.arch == model_arch::mha ? "an " : "a ") +
                          std::string(model_arch_title(m.names.arch)) + " layer, whose head count " +
                          (json ? json->what + " does not give (no n_head or num_attention_heads)"
                                : "a config.json beside it would give, and there is none") +
                          ": give --heads H");
    c.heads = *heads;
    const auto q = m.weights.find("w_q");  // w_q [D,Din]: H must divide D
    if (q != m.weights.end() && q->second.shape.size() == 2 && c.heads > 0 &&
        static_cast<std::int64_t>(q->second.shape[0]) % c.heads != 0) {
        const std::string says = std::to_string(c.heads) + ", which does not divide the width D = " +
                                 std::to_string(q->second.shape[0]) + " of " + what + "'s w_q";
        if (json && json->heads) throw error(json->what + ": " + json->heads_key + " is " + says);
        throw usage_error("--heads " + says);
    }
    if (const auto kv = json_else_flag(json, &hf_config::kv_heads, &hf_config::kv_heads_key, flags.kv_heads, "--kv-heads")) {
        c.kv_heads = *kv;
        if (json && json->kv_heads) check_kv_rows(c, m, *json, what);  // blamed on its key, not on --kv-heads
    } else {
        // kv heads from k's rows: w_k [G·dk,D] with dk = D / H (w_q [D,Din])
        const auto k = m.weights.find("w_k");
        if (q != m.weights.end() && k != m.weights.end() && q->second.shape.size() == 2 && k->second.shape.size() == 2) {
            const auto D = static_cast<std::int64_t>(q->second.shape[0]), rows = static_cast<std::int64_t>(k->second.shape[0]);
            if (c.heads > 0 && D % c.heads == 0 && rows % (D / c.heads) == 0 && rows < D) c.kv_heads = rows / (D / c.heads);
        }
    }
}

/// Llama's rotary positions: --pos rope, the base from rope_theta.
void take_positions(config& c, const model_layer& m, const std::optional<hf_config>& json, const model_choice& flags,
                    const std::string& what) {
    if (m.names.arch != model_arch::llama) return;
    if (flags.pos && *flags.pos != position_encoding::rope)
        throw usage_error("--pos " + std::string(position_encoding_name(*flags.pos)) + " contradicts " + what +
                          ": a Llama layer rotates q and k by their positions (--pos rope); leave --pos out");
    c.pos = position_encoding::rope;
    if (flags.rope_style && *flags.rope_style != rope_pairing::half)
        throw usage_error("--rope-style " + std::string(rope_pairing_name(*flags.rope_style)) + " contradicts " + what +
                          ": a Llama layer pairs dimension i with i + dk/2 (Hugging Face's rotate_half, --rope-style "
                          "half); leave --rope-style out");
    c.rope_style = rope_pairing::half;  // Hugging Face's rotate_half
    if (json && json->rope_theta)
        c.rope_base = *json_else_flag(json, &hf_config::rope_theta, &hf_config::rope_theta_key, flags.rope_base, "--rope-base");
    const auto q = m.weights.find("w_q");  // w_q [D,Din]: dk = D / H (position 0: the angles' inv_freq)
    const std::int64_t D = q != m.weights.end() && !q->second.shape.empty() ? static_cast<std::int64_t>(q->second.shape[0]) : 0;
    if (c.heads > 0 && D % c.heads == 0 && (D / c.heads) % 2 != 0) {  // rope rotates pairs: dk even
        const std::string says = std::to_string(c.heads) + ": dk = D / H = " + std::to_string(D) + " / " +
                                 std::to_string(c.heads) + " = " + std::to_string(D / c.heads) +
                                 " is odd, and a Llama layer rotates pairs of coordinates";
        if (json && json->heads) throw error(json->what + ": " + json->heads_key + " is " + says);
        throw usage_error("--heads " + says);
    }
    const std::string problem =
        c.heads > 0 && D % c.heads == 0 ? rope_base_problem(c.rope_base, static_cast<std::size_t>(D / c.heads), 0) : "";
    if (json && json->rope_theta && !problem.empty())
        throw error(json->what + ": " + json->rope_theta_key + " is " + shortest_text(c.rope_base) + ": " + problem);
}

}  // namespace

hf_config parse_hf_config(const std::string& text, const std::string& what) {
    const nlohmann::json j = parse_json_document(text, what);
    if (!j.is_object()) throw error(what + ": " + json_excerpt(j) + "; expected a JSON object (Hugging Face's config.json)");
    hf_config h;
    h.what = what;
    if (const auto it = j.find("model_type"); it != j.end() && !it->is_null()) {
        if (!it->is_string()) throw error(what + ": model_type is " + json_excerpt(*it) + "; expected a string");
        h.model_type = quoted_field(it->get<std::string>());
    }
    h.heads = whole_key(j, {"n_head", "num_attention_heads"}, h.heads_key, what);
    h.kv_heads = whole_key(j, {"num_key_value_heads"}, h.kv_heads_key, what);
    h.width = whole_key(j, {"n_embd", "hidden_size", "d_model"}, h.width_key, what);
    h.norm_eps = positive_key(j, {"layer_norm_epsilon", "layer_norm_eps", "rms_norm_eps"}, h.norm_eps_key, what);
    h.rope_theta = positive_key(j, {"rope_theta"}, h.rope_theta_key, what);
    for (const char* key : {"activation_function", "hidden_act"})
        if (const auto it = j.find(key); it != j.end() && !it->is_null()) {
            if (!it->is_string()) throw error(what + ": " + key + " is " + json_excerpt(*it) + "; expected a string");
            h.activation = quoted_field(it->get<std::string>());
            h.activation_key = key;
            break;
        }
    h.attention = parse_hf_attention_keys(j, what);
    return h;
}

std::optional<hf_config> read_hf_config_beside(const std::string& weights_path) {
    const std::filesystem::path path = std::filesystem::path(weights_path).parent_path() / "config.json";
    const std::string what = printable_text(path.string());
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return std::nullopt;
    return parse_hf_config(
        read_bounded_text(path.string(), what, max_hf_config_bytes, "1 MiB; a Hugging Face config.json is a few kB"), what);
}

namespace {

/// The block after attention (model_layer::block) with config.json's activation and eps, each
/// model's default without them; off, with a warning, for an activation attn does not compute.
void take_block(config& c, const model_layer& m, const std::optional<hf_config>& json, warning_list& warnings) {
    c.block = m.block;
    if (!c.block.on()) return;
    const model_arch arch = m.names.arch;
    std::string name = arch == model_arch::llama ? "silu" : arch == model_arch::bert ? "gelu" : "gelu_new";
    if (json && json->activation) name = *json->activation;
    if (name == "gelu_new") c.block.act = activation::gelu_tanh;
    else if (name == "gelu") c.block.act = activation::gelu_erf;
    else if (name == "silu" || name == "swish") c.block.act = activation::silu;
    else {
        warnings.push_back({"", json->what + ": " + json->activation_key + " is \"" + name +
                                         "\"; attn computes gelu_new, gelu and silu: the stages after attention "
                                         "(residual, mlp_norm, mlp, block) are left out"});
        c.block = block_spec{};
        return;
    }
    const double eps = arch == model_arch::llama ? 1e-6 : arch == model_arch::bert ? 1e-12 : 1e-5;
    c.block.eps = static_cast<float>(json && json->norm_eps ? *json->norm_eps : eps);
}

}  // namespace

void apply_model_layer(config& c, const model_layer& m, const std::optional<hf_config>& json, const model_choice& flags,
                       const std::string& what, warning_list* warnings) {
    take_heads(c, m, json, flags, what);
    if (json && json->width) {
        const auto q = m.weights.find("w_q");
        if (q != m.weights.end() && q->second.shape.size() == 2 &&
            static_cast<std::int64_t>(q->second.shape[1]) != *json->width)
            throw error(json->what + ": " + json->width_key + " is " + std::to_string(*json->width) + ", but " + what +
                        " has weights of width " + std::to_string(q->second.shape[1]));
    }
    // the norm before attention: GPT-2's ln_1 (eps 1e-5 unless config.json says), Llama's RMSNorm (1e-6)
    c.norm = m.norm;
    if (m.norm != norm_kind::none)
        c.norm_eps = static_cast<float>(json && json->norm_eps ? *json->norm_eps : m.norm == norm_kind::rms_norm ? 1e-6 : 1e-5);
    c.qkv_bias = c.qkv_bias && m.weights.count("b_q") != 0;  // --no-qkv-bias against a file with biases: take_parameters says so
    c.out_bias = m.weights.count("b_o") != 0;
    take_positions(c, m, json, flags, what);
    // GPT-2 and Llama are decoders: each token attends to itself and the tokens before it, and
    // the scores it may not see become torch.finfo(torch.float32).min (not -inf), as their code writes
    if (m.names.arch == model_arch::gpt2 || m.names.arch == model_arch::llama) {
        if (!flags.mask_given) c.mask.causal = true;
        if (!flags.fill_given) {
            c.fill = finfo_float32_min;
            c.fill_text = "-3.4028234663852886e+38";  // Python's repr of torch.finfo(torch.float32).min
        }
    }
    c.sources.model = std::string(model_arch_name(m.names.arch)) + (m.layer >= 0 ? " layer " + std::to_string(m.layer) : "") +
              " of " + utf8_escaped(file_of(what));  // a path may hold any bytes; JSON and npz hold UTF-8
    c.sources.model_arch = std::string(model_arch_name(m.names.arch));
    warning_list unseen;
    if (json) apply_hf_attention_keys(c, m, json->attention, flags.mask_given, json->what, what, warnings ? *warnings : unseen);
    take_block(c, m, json, warnings ? *warnings : unseen);
    c.sources.weight_sources.clear();
    std::string not_utf8 = is_utf8(file_of(what)) ? std::string() : file_of(what);
    for (const weight_source& s : m.sources) {
        c.sources.weight_sources.emplace_back(s.weight, utf8_escaped(printable_text(s.from)));
        if (not_utf8.empty() && !is_utf8(s.from)) not_utf8 = s.from;
    }
    if (!not_utf8.empty() && warnings)  // said once: every format writes the names escaped
        warnings->push_back({"", "the file name " + quoted_field(utf8_escaped(printable_text(not_utf8))) +
                                     " is not UTF-8: the model's name and where its weights came from are written "
                                     "with each such byte escaped as \\xNN (the config's \"model\" too)"});
}

}  // namespace attn
