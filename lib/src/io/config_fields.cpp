// The config's keys, one row each (config_fields.hpp).
#include "attn/io/config_fields.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "attn/compute/checked.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/text/number_text.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {
namespace {

using ordered_json = nlohmann::ordered_json;
using maybe_json = std::optional<ordered_json>;

/// The float32 config_to_json wrote as the double nearest its shortest decimal form.
float float_of_written(double value) {
    const std::string text = shortest_text(value);
    float f = 0.0f;
    if (std::from_chars(text.data(), text.data() + text.size(), f).ec == std::errc()) return f;
    return to_float32(value);
}

std::vector<std::string> convention_names() {
    std::vector<std::string> names;
    for (mask_convention m : {mask_convention::keep, mask_convention::mha, mask_convention::additive})
        names.emplace_back(mask_convention_name(m));
    return names;
}

std::vector<std::string> position_names() {
    std::vector<std::string> names;
    for (position_encoding p : {position_encoding::none, position_encoding::rope, position_encoding::alibi,
                                position_encoding::sinusoidal})
        names.emplace_back(position_encoding_name(p));
    return names;
}

std::vector<std::string> rope_style_names() {
    return {std::string(rope_pairing_name(rope_pairing::half)), std::string(rope_pairing_name(rope_pairing::interleaved))};
}

std::vector<std::string> norm_names() { return {"layer_norm", "rms_norm"}; }

std::vector<std::string> mistake_ids() {
    std::vector<std::string> ids;
    for (mistake m : all_mistakes()) ids.emplace_back(mistake_id(m));
    return ids;
}

/// A mask convention's key: "keep", "mha" or "additive".
void read_convention(config_reader& k, const char* key, mask_convention& into) {
    const auto m = parse_mask_convention(k.text(key));
    if (!m) k.wrong(key, "keep, mha or additive");
    into = *m;
}

/// Every key, in the order config_to_json writes them: the list config_fields() gives.
const std::vector<config_field> all_fields{
    // --- shapes (CLI.md's dimension letters)
    {"batch", "--batch", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.batch; },
     [](config_reader& k, config& c) { c.batch = k.whole("batch"); }, nullptr},
    {"seq", "--seq", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.seq; },
     [](config_reader& k, config& c) { c.seq = k.whole("seq"); }, nullptr},
    {"kv_seq", "--kv-seq", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.kv_seq; },
     [](config_reader& k, config& c) { c.kv_seq = k.whole("kv_seq"); }, nullptr},
    {"d_model", "--d-model", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.d_model; },
     [](config_reader& k, config& c) { c.d_model = k.whole("d_model"); }, nullptr},
    {"heads", "--heads", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.heads; },
     [](config_reader& k, config& c) { c.heads = k.whole("heads"); },
     [](const config& flags, config& c) { c.heads = flags.heads; }},
    {"head_dim", "", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.head_dim(); }, nullptr, nullptr},
    {"d_in", "--d-in", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.d_in; },
     [](config_reader& k, config& c) { c.d_in = k.whole("d_in"); }, nullptr},
    {"d_kv_in", "--d-kv-in", true, R"({"type": "integer", "minimum": 1})", "", nullptr,
     [](const config& c) -> maybe_json { return c.d_kv_in; },
     [](config_reader& k, config& c) { c.d_kv_in = k.whole("d_kv_in"); }, nullptr},
    {"cross", "--cross", true, R"({"type": "boolean"})", "keys and values come from x_kv", nullptr,
     [](const config& c) -> maybe_json { return c.cross(); }, nullptr,
     [](const config&, config& c) { c.separate_kv = true; }},

    // --- parameters
    {"qkv_bias", "--no-qkv-bias", true, R"({"type": "boolean"})", "", nullptr,
     [](const config& c) -> maybe_json { return c.qkv_bias; },
     [](config_reader& k, config& c) { c.qkv_bias = k.flag("qkv_bias"); },
     [](const config& flags, config& c) { c.qkv_bias = flags.qkv_bias; }},
    {"out_proj", "--no-out-proj", true, R"({"type": "boolean"})", "", nullptr,
     [](const config& c) -> maybe_json { return c.out_proj; },
     [](config_reader& k, config& c) { c.out_proj = k.flag("out_proj"); },
     [](const config& flags, config& c) { c.out_proj = flags.out_proj; }},
    {"seed", "--seed", true, R"({"type": "integer", "minimum": 0})",
     "torch.manual_seed(seed), as an unsigned 64-bit value", nullptr,
     [](const config& c) -> maybe_json { return c.seed; },
     [](config_reader& k, config& c) { c.seed = k.unsigned_whole("seed"); },
     [](const config& flags, config& c) { c.seed = flags.seed; }},

    // --- masks
    {"mask", "--mask", true,
     R"({"type": "string", "pattern": "^(none|(causal|padding|window|random)(\\+(causal|padding|window|random))*)$"})",
     "", nullptr, [](const config& c) -> maybe_json { return mask_kinds_to_string(c.mask); },
     [](config_reader& k, config& c) {
         try {
             parse_mask_kinds(k.text("mask"), c.mask);
         } catch (const usage_error&) {
             k.wrong("mask", "none, or causal, padding, window, random joined by '+'");
         }
     },
     [](const config& flags, config& c) {
         c.mask.causal = flags.mask.causal;
         c.mask.padding = flags.mask.padding;
         c.mask.window = flags.mask.window;
         c.mask.random = flags.mask.random;
         if (!c.mask.padding) c.mask.lengths.clear();  // the dump's, for a kind no longer asked for
         if (!c.mask.window) c.mask.window_size.reset();
     }},
    {"causal_align", "--causal-align", false, R"({"const": "lower-right"})",
     "only with --causal-align lower-right: query i may attend keys j <= i + kv_seq - seq (absent: "
     "upper-left, j <= i)",
     nullptr,
     [](const config& c) -> maybe_json {
         if (c.mask.causal_align != causal_alignment::lower_right) return std::nullopt;
         return "lower-right";
     },
     [](config_reader& k, config& c) {
         const auto align = parse_causal_alignment(k.text("causal_align"));
         if (!align) k.wrong("causal_align", "upper-left or lower-right");
         c.mask.causal_align = *align;
     },
     [](const config& flags, config& c) { c.mask.causal_align = flags.mask.causal_align; }},
    {"lengths", "--lengths", false, R"({"type": "array", "items": {"type": "integer", "minimum": 0}})",
     "padding only", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.mask.padding) return std::nullopt;
         return c.mask.lengths;
     },
     [](config_reader& k, config& c) {
         if (!k.at("lengths").is_array()) k.wrong("lengths", "a list of whole numbers");
         for (const nlohmann::json& n : k.at("lengths")) {
             if (!n.is_number_integer()) k.wrong("lengths", "a list of whole numbers");
             c.mask.lengths.push_back(n.get<std::int64_t>());
         }
     },
     [](const config& flags, config& c) { c.mask.lengths = flags.mask.lengths; }},
    {"window", "--window", false, R"({"type": "integer", "minimum": 0})", "window only", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.mask.window) return std::nullopt;
         return *c.mask.window_size;
     },
     [](config_reader& k, config& c) { c.mask.window_size = k.whole("window"); },
     [](const config& flags, config& c) { c.mask.window_size = flags.mask.window_size; }},
    {"mask_seed", "--mask-seed", false, R"({"type": "integer", "minimum": 0})", "random only", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.mask.random) return std::nullopt;
         return c.mask.random_seed;
     },
     [](config_reader& k, config& c) { c.mask.random_seed = k.unsigned_whole("mask_seed"); },
     [](const config& flags, config& c) { c.mask.random_seed = flags.mask.random_seed; }},
    {"mask_keep", "--mask-keep", false, R"({"type": "number", "minimum": 0, "maximum": 1})",
     "random only", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.mask.random) return std::nullopt;
         return c.mask.random_keep;
     },
     [](config_reader& k, config& c) { c.mask.random_keep = k.number_from("mask_keep", 0.0, 1.0); },
     [](const config& flags, config& c) { c.mask.random_keep = flags.mask.random_keep; }},
    // A mask file given on top of a dump is read as its own convention says (keep, or --mask-convention's).
    {"mask_file", "--mask-file", false, R"({"const": true})",
     "only when --mask-file gave an explicit mask (ANDed with mask)", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.mask.from_file) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.mask.from_file = k.flag("mask_file"); },
     [](const config& flags, config& c) { c.mask.file_convention = flags.mask.file_convention; }},
    {"mask_convention", "--mask-convention", false, "{}",
     "only with mask_file: how the file was read (--mask-convention)", convention_names,
     [](const config& c) -> maybe_json {
         if (!c.mask.from_file) return std::nullopt;
         return std::string(mask_convention_name(c.mask.file_convention));
     },
     [](config_reader& k, config& c) { read_convention(k, "mask_convention", c.mask.file_convention); },
     [](const config& flags, config& c) { c.mask.file_convention = flags.mask.file_convention; }},
    {"key_padding", "--key-padding-mask", false, R"({"const": true})",
     "only when --key-padding-mask gave a key padding mask (ANDed with mask)", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.mask.key_padding) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.mask.key_padding = k.flag("key_padding"); },
     [](const config& flags, config& c) { c.mask.key_padding_convention = flags.mask.key_padding_convention; }},
    {"key_padding_convention", "--mask-convention", false, "{}",
     "only with key_padding: how that file was read (mha: true = padded key)", convention_names,
     [](const config& c) -> maybe_json {
         if (!c.mask.key_padding) return std::nullopt;
         return std::string(mask_convention_name(c.mask.key_padding_convention));
     },
     [](config_reader& k, config& c) {
         read_convention(k, "key_padding_convention", c.mask.key_padding_convention);
     },
     [](const config& flags, config& c) { c.mask.key_padding_convention = flags.mask.key_padding_convention; }},

    // --- the fill and the softmax
    {"fill", "--fill", true, R"({"oneOf": [{"const": "-inf"}, {"type": "number"}]})", "", nullptr,
     [](const config& c) -> maybe_json {
         if (std::isinf(c.fill)) return "-inf";
         // the double nearest the float's shortest decimal form: -0.1, not -0.10000000149011612
         return std::stod(fill_to_string(c.fill));
     },
     [](config_reader& k, config& c) {
         const nlohmann::json& fill = k.at("fill");
         if (fill.is_string() && fill.get<std::string>() == "-inf")
             c.fill = -std::numeric_limits<float>::infinity();
         else if (fill.is_number() && std::isfinite(float_of_written(fill.get<double>())) &&  // -1e39 is no -inf
                  fill_underflow(fill.get<double>()).empty())
             c.fill = float_of_written(fill.get<double>());
         else
             k.wrong("fill", "\"-inf\" or a number float32 holds");
     },
     [](const config& flags, config& c) { c.fill = flags.fill; }},
    {"fill_text", "--fill", false, R"({"type": "string"})",
     "only when the fill was typed otherwise than fill prints it, e.g. -1e9 (fill holds its value)", nullptr,
     [](const config& c) -> maybe_json {
         if (fill_text(c) == fill_to_string(c.fill)) return std::nullopt;
         return c.fill_text;  // as typed: "-1e9"
     },
     [](config_reader& k, config& c) {  // printed in formulas, so it must say the same number as "fill"
         const std::string typed = k.text("fill_text");
         char* end = nullptr;
         const double value = typed.size() <= 32 ? std::strtod(typed.c_str(), &end) : 0.0;
         const bool written = typed == "-inf" || (is_decimal_number(typed) && fill_underflow(value).empty());
         const bool same = written && end == typed.c_str() + typed.size() && typed.size() <= 32 &&
                           (std::isinf(c.fill) ? value == c.fill : float_of_written(value) == c.fill);
         if (!same)
             k.wrong("fill_text", "the fill as typed, a number that reads as \"fill\" (" + fill_to_string(c.fill) + ")");
         c.fill_text = typed;
     },
     [](const config& flags, config& c) { c.fill_text = flags.fill_text; }},
    {"safe_softmax", "--safe-softmax", false, R"({"const": true})",
     "only with --safe-softmax: a row with no allowed key got 0 weights (not NaN or uniform)", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.safe_softmax) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.safe_softmax = k.flag("safe_softmax"); },
     [](const config& flags, config& c) { c.safe_softmax = flags.safe_softmax; }},
    {"mistake", "--mistake", false, "{}",
     "only with --mistake ID: the run made this mistake on purpose (attn check's ids)", mistake_ids,
     [](const config& c) -> maybe_json {
         if (c.mistake == mistake::none) return std::nullopt;
         return std::string(mistake_id(c.mistake));
     },
     [](config_reader& k, config& c) {
         const auto m = parse_mistake(k.text("mistake"));
         if (!m) k.wrong("mistake", "a mistake id such as softmax_axis");
         c.mistake = *m;
     },
     [](const config& flags, config& c) { c.mistake = flags.mistake; }},

    // --- where the tensors came from, so that a replay knows which were read from files
    {"from_projections", "--q", false, R"({"const": true})",
     "only with --q --k --v: no input or params stage", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.sources.from_projections) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.sources.from_projections = k.flag("from_projections"); }, nullptr},
    {"input_file", "--input", false, R"({"const": true})", "only when --input gave x", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.sources.x_from_file) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.sources.x_from_file = k.flag("input_file"); }, nullptr},
    {"kv_input_file", "--kv-input", false, R"({"const": true})", "only when --kv-input gave x_kv", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.sources.x_kv_from_file) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.sources.x_kv_from_file = k.flag("kv_input_file"); }, nullptr},
    {"params_file", "--params", false, R"({"const": true})", "only when --params gave the weights", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.sources.params_from_file) return std::nullopt;
         return true;
     },
     [](config_reader& k, config& c) { c.sources.params_from_file = k.flag("params_file"); }, nullptr},

    // --- dropout: absent when it was never asked for
    {"dropout", "--dropout", false, R"({"type": "number", "minimum": 0, "maximum": 1})",
     "only when --dropout or --train was given", nullptr,
     [](const config& c) -> maybe_json {
         if (!(c.dropout.p > 0.0 || c.dropout.train)) return std::nullopt;
         return c.dropout.p;
     },
     [](config_reader& k, config& c) { c.dropout.p = k.number_from("dropout", 0.0, 1.0); },
     [](const config& flags, config& c) { c.dropout.p = flags.dropout.p; }},
    {"train", "--train", false, R"({"type": "boolean"})", "with dropout: training mode adds the dropout stage",
     nullptr,
     [](const config& c) -> maybe_json {
         if (!(c.dropout.p > 0.0 || c.dropout.train)) return std::nullopt;
         return c.dropout.train;
     },
     [](config_reader& k, config& c) { c.dropout.train = k.flag("train"); },
     [](const config& flags, config& c) { c.dropout.train = flags.dropout.train; }},
    {"dropout_seed", "--dropout-seed", false, R"({"type": "integer", "minimum": 0})",
     "only when the dropout stage exists", nullptr,
     [](const config& c) -> maybe_json {
         if (!c.dropout.applied()) return std::nullopt;
         return c.dropout.seed;
     },
     [](config_reader& k, config& c) { c.dropout.seed = k.unsigned_whole("dropout_seed"); },
     [](const config& flags, config& c) { c.dropout.seed = flags.dropout.seed; }},

    // --- a decoding step, grouped heads, flash: always written (absent in older dumps)
    {"past", "--past", false, R"({"type": "integer", "minimum": 0})",
     "--past N: tokens in the KV cache (0: no cache); a decoding step has kv_seq = past + seq", nullptr,
     [](const config& c) -> maybe_json { return c.past; },
     [](config_reader& k, config& c) {
         c.past = k.whole("past");
         if (c.past > 0 && !checked_add(c.past, c.seq))
             k.wrong("past", "a cache length N with N + seq (" + std::to_string(c.seq) + ") within a 64-bit size");
     },
     [](const config& flags, config& c) { c.past = flags.past; }},
    {"kv_heads", "--kv-heads", false, R"({"type": "integer", "minimum": 1})",
     "--kv-heads G: key/value heads (= heads without it; < heads: grouped-query)", nullptr,
     [](const config& c) -> maybe_json { return c.kv_head_count(); },
     [](config_reader& k, config& c) {
         const std::int64_t kv_heads = k.whole("kv_heads");
         c.kv_heads = kv_heads == c.heads ? 0 : kv_heads;
     },
     [](const config& flags, config& c) { c.kv_heads = flags.kv_heads; }},
    {"flash_block", "--flash-block", false, R"({"type": "integer", "minimum": 0})",
     "--flash-block N, keys per block of the flash stage; 0 = no flash stage", nullptr,
     [](const config& c) -> maybe_json { return c.flash_block; },
     [](config_reader& k, config& c) { c.flash_block = k.whole("flash_block"); },
     [](const config& flags, config& c) { c.flash_block = flags.flash_block; }},

    // --- positions: always written, so that a dump replays with --from
    {"pos", "--pos", false, "{}", "--pos: how the positions entered", position_names,
     [](const config& c) -> maybe_json { return std::string(position_encoding_name(c.pos)); },
     [](config_reader& k, config& c) {
         const auto p = parse_position_encoding(k.text("pos"));
         if (!p) k.wrong("pos", "none, rope, alibi or sinusoidal");
         c.pos = *p;
     },
     [](const config& flags, config& c) { c.pos = flags.pos; }},
    {"rope_base", "--rope-base", false, R"({"type": "number", "exclusiveMinimum": 0})",
     "--rope-base (read with --pos rope)", nullptr,
     [](const config& c) -> maybe_json { return c.rope_base; },
     [](config_reader& k, config& c) { c.rope_base = k.number("rope_base"); },
     [](const config& flags, config& c) { c.rope_base = flags.rope_base; }},
    {"rope_style", "--rope-style", false, "{}", "--rope-style (read with --pos rope)", rope_style_names,
     [](const config& c) -> maybe_json { return std::string(rope_pairing_name(c.rope_style)); },
     [](config_reader& k, config& c) {
         const auto r = parse_rope_pairing(k.text("rope_style"));
         if (!r) k.wrong("rope_style", "half or interleaved");
         c.rope_style = *r;
     },
     [](const config& flags, config& c) { c.rope_style = flags.rope_style; }},

    {"rope_scaling", "--params", false,
     R"({"type": "object", "required": ["rope_type", "factor"], "properties": {"rope_type": {"enum": ["linear", "llama3"]}, "factor": {"type": "number", "exclusiveMinimum": 0}, "low_freq_factor": {"type": "number"}, "high_freq_factor": {"type": "number"}, "original_max_position_embeddings": {"type": "number"}}})",
     "only for a model layer whose config.json rescales rope (Llama 3.1's llama3, linear): inv_freq as "
     "Hugging Face's modeling_rope_utils computes it",
     nullptr,
     [](const config& c) -> maybe_json {
         const rope_scaling_spec& s = c.rope_scaling;
         if (s.type == rope_scaling_spec::kind::none) return std::nullopt;
         ordered_json j{{"rope_type", s.type == rope_scaling_spec::kind::linear ? "linear" : "llama3"},
                        {"factor", s.factor}};
         if (s.type == rope_scaling_spec::kind::llama3) {
             j["low_freq_factor"] = s.low_freq_factor;
             j["high_freq_factor"] = s.high_freq_factor;
             j["original_max_position_embeddings"] = s.original_max_positions;
         }
         return j;
     },
     [](config_reader& k, config& c) {
         const nlohmann::json& j = k.at("rope_scaling");
         const auto number = [&](const char* key) {
             if (!j.contains(key) || !j.at(key).is_number() || !(j.at(key).get<double>() > 0.0))
                 k.wrong("rope_scaling", std::string("an object whose ") + key + " is a positive number");
             return j.at(key).get<double>();
         };
         if (!j.is_object() || !j.contains("rope_type") || !j.at("rope_type").is_string())
             k.wrong("rope_scaling", "an object with rope_type linear or llama3");
         const std::string type = j.at("rope_type").get<std::string>();
         rope_scaling_spec& s = c.rope_scaling;
         if (type == "linear") s.type = rope_scaling_spec::kind::linear;
         else if (type == "llama3") s.type = rope_scaling_spec::kind::llama3;
         else k.wrong("rope_scaling", "an object with rope_type linear or llama3");
         s.factor = number("factor");
         if (s.type == rope_scaling_spec::kind::llama3) {
             s.low_freq_factor = number("low_freq_factor");
             s.high_freq_factor = number("high_freq_factor");
             s.original_max_positions = number("original_max_position_embeddings");
         }
     },
     nullptr},

    // --- a model's own layer, only then
    {"model", "--params", false, R"({"type": "string"})",
     "only with --params in a model's own names: which layer of which file, e.g. \"gpt2 layer 1 of "
     "model.safetensors\"",
     nullptr,
     [](const config& c) -> maybe_json {
         if (c.sources.model.empty()) return std::nullopt;
         return c.sources.model;
     },
     [](config_reader& k, config& c) {  // a path may be long: kept to 256 bytes, printed escaped
         if (!k.at("model").is_string()) k.wrong("model", "a string");
         const std::string& model = k.at("model").get_ref<const std::string&>();
         c.sources.model = printable_text(model.substr(0, character_boundary(model, 256)));
     },
     nullptr},
    // norm and tokens: runs that do not replay (config_from_json says why)
    {"norm", "--params", false, "{}",
     "only for a model layer with a norm before attention (GPT-2's ln_1, Llama's RMSNorm): the norm stage",
     norm_names,
     [](const config& c) -> maybe_json {
         if (c.norm == norm_kind::none) return std::nullopt;
         return c.norm == norm_kind::layer_norm ? "layer_norm" : "rms_norm";
     },
     nullptr, nullptr},
    {"norm_eps", "--params", false, R"({"type": "number", "minimum": 0})", "with norm: its eps", nullptr,
     [](const config& c) -> maybe_json {
         if (c.norm == norm_kind::none) return std::nullopt;
         return std::stod(fill_to_string(c.norm_eps));  // 1e-05, not 9.999999747378752e-06
     },
     nullptr, nullptr},
    {"block", "--params", false,
     R"({"type": "object", "properties": {"norm": {"enum": ["layer_norm", "rms_norm"]}, "eps": {"type": "number", "minimum": 0}, )"
     R"("post_norm": {"type": "boolean"}, "activation": {"enum": ["gelu_new", "gelu", "silu"]}, "gated": {"type": "boolean"}, )"
     R"("bias": {"type": "boolean"}, "width": {"type": "integer", "minimum": 1}}})",
     "only for a model layer whose file holds its MLP: the stages after attention (residual, mlp_norm, mlp, block)",
     nullptr,
     [](const config& c) -> maybe_json {
         if (!c.block.on()) return std::nullopt;
         ordered_json b;
         b["norm"] = c.block.norm == norm_kind::layer_norm ? "layer_norm" : "rms_norm";
         b["eps"] = std::stod(fill_to_string(c.block.eps));
         b["post_norm"] = c.block.post_norm;
         b["activation"] = std::string(activation_name(c.block.act));
         b["gated"] = c.block.gated;
         b["bias"] = c.block.bias;
         b["width"] = c.block.width;
         return b;
     },
     nullptr, nullptr},
    {"out_bias", "--params", false, R"({"const": false})",
     "only when the output projection has no bias (a Llama layer's o_proj)", nullptr,
     [](const config& c) -> maybe_json {
         if (c.out_bias) return std::nullopt;
         return false;
     },
     [](config_reader& k, config& c) { c.out_bias = k.flag("out_bias"); }, nullptr},
    {"tokens", "--tokens", false, R"({"type": "array", "items": {"type": "integer", "minimum": 0}})",
     "only with --tokens: the token ids layer 0 started from (stage embed)", nullptr,
     [](const config& c) -> maybe_json {
         if (c.sources.tokens.empty()) return std::nullopt;
         return c.sources.tokens;
     },
     nullptr, nullptr},
    {"token_text", "--vocab", false, R"({"type": "array", "items": {"type": "string"}})",
     "only with --tokens and --vocab: each id's token from the vocabulary, escaped", nullptr,
     [](const config& c) -> maybe_json {
         if (c.sources.token_labels.empty()) return std::nullopt;
         return c.sources.token_labels;
     },
     nullptr, nullptr},
};

}  // namespace

const std::vector<config_field>& config_fields() {
    return all_fields;
}

ordered_json config_to_json(const config& c) {
    ordered_json j = ordered_json::object();
    for (const config_field& f : config_fields())
        if (maybe_json value = f.value(c)) j[f.key] = std::move(*value);
    return j;
}

ordered_json config_schema() {
    ordered_json required = ordered_json::array(), properties = ordered_json::object();
    for (const config_field& f : config_fields()) {
        if (f.required) required.push_back(f.key);
        ordered_json p = ordered_json::parse(f.schema);
        if (f.choices != nullptr) p["enum"] = f.choices();
        if (*f.doc != '\0') p["description"] = f.doc;
        properties[f.key] = std::move(p);
    }
    return {{"type", "object"}, {"required", std::move(required)}, {"properties", std::move(properties)}};
}

}  // namespace attn
