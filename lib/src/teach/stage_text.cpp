#include "attn/teach/stage_text.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attn/compute/mask.hpp"
#include "attn/compute/trace.hpp"
#include "attn/teach/mistake_text.hpp"
#include "attn/teach/prose.hpp"
#include "attn/text/join.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

std::string input_formula(const config& c) {
    if (c.past > 0)
        return prose("stages.formula.input.step",
                     {{"x", prose(c.sources.x_from_file ? "stages.formula.input.step.x.read" : "stages.formula.input.step.x.drawn")}});
    const std::string x = prose(c.sources.x_from_file ? "stages.formula.input.x.read" : "stages.formula.input.x.drawn");
    if (!c.cross()) return prose("stages.formula.input.self", {{"x", x}});
    const std::string x_kv =
        prose(c.sources.x_kv_from_file ? "stages.formula.input.x_kv.read" : "stages.formula.input.x_kv.drawn");
    return prose("stages.formula.input.cross", {{"x", x}, {"x_kv", x_kv}});
}

std::string params_formula(const config& c) {
    if (c.qkv_bias) return prose(c.out_proj ? "stages.formula.params" : "stages.formula.params.no_out_proj");
    return prose(c.out_proj ? "stages.formula.params.no_bias" : "stages.formula.params.no_bias_no_out_proj");
}

/// "(j <= i)"; when Sq != Sk the alignment too: "(j <= i, upper-left)" or
/// "(j <= i + Sk - Sq = i + 2)" (lower-right, torch.tril's diagonal Sk - Sq).
std::string causal_condition(const config& c) {
    if (c.seq == c.kv_seq) return "(j <= i)";
    if (c.mask.causal_align == causal_alignment::upper_left) return "(j <= i, upper-left)";
    const std::int64_t d = c.kv_seq - c.seq;
    return "(j <= i + Sk - Sq = i " + std::string(d > 0 ? "+ " : "- ") + std::to_string(d > 0 ? d : -d) + ")";
}

std::string mask_formula(const config& c) {
    const mask_spec& m = c.mask;
    std::string terms;
    const auto add = [&](bool on, const std::string& term) {
        if (on) terms += (terms.empty() ? "" : " AND ") + term;
    };
    add(m.causal, causal_condition(c));
    add(m.padding, "(j < lengths[b])");
    add(m.window, std::string(c.past > 0 ? "(|N + i - j| <= " : "(|i - j| <= ") +  // a step: query i is token N + i
                      (m.window_size ? std::to_string(*m.window_size) : std::string("W")) + ")");
    add(m.random, "(rand[b,0,i,j] < mask_keep)");
    add(m.from_file && m.file_convention == mask_convention::keep, "file[b,i,j]");
    add(m.from_file && m.file_convention == mask_convention::mha, "NOT file[b,i,j] (mha: true = not allowed)");
    add(m.from_file && m.file_convention == mask_convention::additive, "(file[b,i,j] == 0) (additive)");
    add(m.key_padding, "NOT key_padding_mask[b,j]");
    return prose("stages.formula.mask", {{"terms", terms}});
}

/// "weights = softmax(masked, dim=-1)", and with --safe-softmax what it does to an empty row.
std::string softmax_formula(const config& c) {
    const char* logits = softmax_input(c);
    if (!c.safe_softmax) return prose("stages.formula.softmax", {{"logits", logits}});
    return prose("stages.formula.softmax.safe", {{"logits", logits}});  // validate(): the fill is -inf
}

/// "self-attention: Q, K, V from x; seed 24; no output projection".
std::string run_text(const config& c, bool seed_secret) {
    const char* sources = c.sources.from_projections ? "stages.run.sources.given"
                          : c.cross()        ? "stages.run.sources.cross"
                                             : "stages.run.sources.self";
    const std::string files = prose(sources, {{"input", !c.sources.tokens.empty() ? (c.sources.tokens_from_text ? " (--text, stage embed)" : " (--tokens, stage embed)") : c.sources.x_from_file ? " (--input)" : ""},
                                              {"kv_input", c.sources.x_kv_from_file ? " (--kv-input)" : ""}});
    std::vector<std::string> parts{
        c.past > 0 ? prose("stages.run.step", {{"past", c.past}, {"new", c.seq}, {"input", c.sources.x_from_file ? " (--input)" : ""}})
                   : prose(c.cross() ? "stages.run.cross" : "stages.run.self", {{"sources", files}})};
    if (c.grouped()) {
        const std::int64_t G = c.kv_head_count();
        parts.push_back(prose("stages.run.grouped", {{"G", G}, {"heads_word", G == 1 ? "head" : "heads"},
                                                     {"H", c.heads}, {"per", c.heads / G}}));
    }
    // the seed draws the weights (unless --params gives them, or --q --k --v come without an output
    // layer) and x (unless --input, --tokens or --q --k --v): a run that draws nothing names no seed
    const bool weights_drawn = !c.sources.params_from_file && !(c.sources.from_projections && !c.out_proj);
    const bool x_drawn = !c.sources.from_projections && (!c.sources.x_from_file || (c.cross() && !c.sources.x_kv_from_file));
    if (weights_drawn || x_drawn)
        parts.push_back(seed_secret ? prose("stages.run.seed_secret") : prose("stages.run.seed", {{"seed", c.seed}}));
    if (!c.sources.from_projections && !c.qkv_bias) parts.push_back(prose("stages.run.no_qkv_bias"));
    if (!c.out_proj) parts.push_back(prose("stages.run.no_out_proj"));
    if (c.mistake != mistake::none)
        parts.push_back(prose("stages.run.mistake",
                              {{"id", std::string(mistake_id(c.mistake))},
                               {"stage", std::string(info_of(*mistake_stage(c.mistake, c.mistake_variant)).name)}}));
    return join(parts, "; ");
}

/// "B=2  Sq=5  Sk=5  Din=8  D=8  H=4  dk=2  √dk=1.4142" (Dkv with cross-attention).
std::string sizes_text(const config& c) {
    std::vector<std::string> parts{"B=" + std::to_string(c.batch), "Sq=" + std::to_string(c.seq),
                                   "Sk=" + std::to_string(c.kv_seq)};
    if (c.past > 0) parts.push_back("N=" + std::to_string(c.past));
    if (!c.sources.from_projections) {
        parts.push_back("Din=" + std::to_string(c.d_in));
        if (c.d_kv_in != c.d_in || c.cross()) parts.push_back("Dkv=" + std::to_string(c.d_kv_in));
    }
    parts.push_back("D=" + std::to_string(c.d_model));
    parts.push_back("H=" + std::to_string(c.heads));
    if (c.grouped()) parts.push_back("G=" + std::to_string(c.kv_head_count()));
    parts.push_back("dk=" + std::to_string(c.head_dim()));
    parts.push_back("√dk=" + short_number(std::sqrt(static_cast<float>(c.head_dim()))));  // as stage 7 divides
    return join(parts, "  ");
}

/// "causal+padding (lengths 3,0), fill -inf", or "none (...)".
std::string mask_text(const config& c) {
    const mask_spec& m = c.mask;
    if (!m.any()) return prose("stages.run.mask.none");
    std::vector<std::string> details;
    if (m.causal && m.causal_align == causal_alignment::lower_right) details.push_back("lower-right");
    if (m.padding) details.push_back("lengths " + join(m.lengths, ","));
    if (m.window) details.push_back("window " + (m.window_size ? std::to_string(*m.window_size) : std::string("W")));
    if (m.random) details.push_back("mask-seed " + std::to_string(m.random_seed) + ", keep " + short_number(m.random_keep));
    std::vector<std::string> masks;
    if (m.causal || m.padding || m.window || m.random)
        masks.push_back(mask_kinds_to_string(m) + (details.empty() ? "" : " (" + join(details, "; ") + ")"));
    if (m.from_file)
        masks.push_back(m.file_convention == mask_convention::keep
                            ? std::string("--mask-file")
                            : "--mask-file (" + std::string(mask_convention_name(m.file_convention)) + ")");
    if (m.key_padding) masks.push_back("--key-padding-mask");
    return join(masks, " AND ") + ", fill " + fill_text(c) + (c.safe_softmax ? ", --safe-softmax" : "");
}

/// "p=0.5, training mode: stage 11, keep drawn with --dropout-seed 0".
std::string dropout_text(const config& c) {
    const std::string p = short_number(c.dropout.p);
    if (c.dropout.applied()) return prose("stages.run.dropout.train", {{"p", p}, {"seed", c.dropout.seed}});
    return prose(c.dropout.p > 0.0 ? "stages.run.dropout.eval" : "stages.run.dropout.identity", {{"p", p}});
}

}  // namespace

std::string short_number(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.4f", v);
    std::string s = text;
    if (s.find('.') != std::string::npos) {
        s.erase(s.find_last_not_of('0') + 1);
        if (s.back() == '.') s.pop_back();
    }
    return s;
}

std::string python_number(double v) {
    if (std::isnan(v)) return "float('nan')";
    if (std::isinf(v)) return v < 0 ? "float('-inf')" : "float('inf')";
    return python_float_text(v);
}

std::string python_fill(const config& c) {
    if (std::isinf(c.fill)) return c.fill < 0 ? "float('-inf')" : "float('inf')";
    const std::string typed = fill_text(c);
    const bool integer = typed.find_first_of(".eE") == std::string::npos;
    if (!integer) return typed;
    char* end = nullptr;
    errno = 0;
    (void)std::strtoll(typed.c_str(), &end, 10);
    return errno == 0 && end == typed.c_str() + typed.size() ? typed : python_number(std::strtod(typed.c_str(), nullptr));
}

std::string projections_formula(const config& c, bool transposed, bool bias) {
    const std::string x_q = c.past > 0 ? "X[:, N:]" : "X";  // a decoding step: the new tokens
    const std::string x_kv = c.cross() ? "X_kv" : x_q;
    const auto one = [&](const char* out, const std::string& x, const char* letter) {
        std::string f = std::string(out) + " = " + x + "·W_" + letter + (transposed ? "ᵀ" : "");
        if (bias && c.qkv_bias) f += std::string(" + b_") + letter;
        return f;
    };
    return one("Q", x_q, "q") + ", " + one("K", x_kv, "k") + ", " + one("V", x_kv, "v");
}

std::vector<run_line> stage_sources(const config& c, stage_id id) {
    std::vector<run_line> sources;
    for (const auto& [weight, from] : c.sources.weight_sources) {
        const bool norm = weight.rfind("norm_", 0) == 0, embed = weight.rfind("embed_", 0) == 0;
        if (id == stage_id::params && !norm && !embed) sources.push_back({weight, from});
        if (id == stage_id::norm && norm) sources.push_back({weight.substr(5), from});
        if (id == stage_id::embed && embed) sources.push_back({weight.substr(6), from});
    }
    return sources;
}

/// "gpt2 layer 1 of m.safetensors; norm: LayerNorm, eps 1e-05".
std::string model_text(const config& c) {
    std::string text = c.sources.model;
    if ((c.sources.model_arch == "gpt2" || c.sources.model_arch == "llama") && c.mask.causal && c.fill == -std::numeric_limits<float>::max())
        text += std::string("; causal") +
                (c.mask.window ? ", a sliding window of " + std::to_string(*c.mask.window_size + 1) + " keys" : "") +
                ", fill torch.finfo(torch.float32).min, as its code";
    if (c.rope_scaling.type != rope_scaling_spec::kind::none)
        text += std::string("; rope_scaling ") + (c.rope_scaling.type == rope_scaling_spec::kind::linear ? "linear" : "llama3") +
                " (factor " + shortest_text(c.rope_scaling.factor) + ")";
    if (c.norm != norm_kind::none) {
        text += std::string("; norm ") + (c.norm == norm_kind::layer_norm ? "LayerNorm" : "RMSNorm") + " (eps " +
                short_eps(c) + ") before the projections";
    }
    if (c.block.on())
        text += std::string("; then the residual and the MLP (") + std::string(activation_name(c.block.act)) +
                (c.block.gated ? ", gated" : "") + ", width " + std::to_string(c.block.width) +
                (c.block.post_norm ? ", post-norm" : "") + ")";
    return text;
}

std::vector<run_line> run_summary(const config& c, bool seed_secret) {
    std::vector<run_line> lines{{"run", run_text(c, seed_secret)}, {"sizes", sizes_text(c)}, {"mask", mask_text(c)}};
    if (!c.sources.model.empty()) lines.insert(lines.begin() + 1, {"model", model_text(c)});
    if (c.dropout.p > 0.0 || c.dropout.train) lines.push_back({"dropout", dropout_text(c)});
    return lines;
}

const char* softmax_input(const config& c) {
    return c.mask.any() ? "masked" : c.pos == position_encoding::alibi ? "biased" : "scaled";
}

std::string short_eps(const config& c) {
    return significant_text(c.norm_eps);
}

std::string torch_norm_line(norm_kind norm, const std::string& x, const std::string& weight, const std::string& bias,
                            std::int64_t width, float eps) {
    const std::string e = significant_text(eps);
    if (norm == norm_kind::rms_norm)
        return weight + " * (" + x + " * torch.rsqrt(" + x + ".pow(2).mean(-1, keepdim=True) + " + e + "))";
    return "torch.nn.functional.layer_norm(" + x + ", [" + std::to_string(width) + "], " + weight + ", " + bias +
           ", eps=" + e + ")";
}

std::string stage_title(const config& c, std::string_view name) {
    if (std::string made = mistake_title(c, name); !made.empty()) return made;
    const stage_info* info = find_stage_info(name);
    return info ? std::string(info->title) : std::string();
}

std::string stage_formula(const config& c, std::string_view name) {
    if (std::string made = mistake_formula(c, name); !made.empty()) return made;  // --mistake ID, on purpose
    if (name == "input") return input_formula(c);
    if (name == "params") return params_formula(c);
    if (name == "norm")
        return c.norm == norm_kind::rms_norm
                   ? "x = weight · (x · torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + " + short_eps(c) + "))"
                   : "x = F.layer_norm(x, [Din], weight, bias, eps=" + short_eps(c) + ")";
    if (name == "projections")
        return c.sources.from_projections ? prose("stages.formula.projections.given") : projections_formula(c);
    if (name == "mask") return mask_formula(c);
    if (name == "masked") {
        std::string formula = prose("stages.formula.masked", {{"fill", fill_text(c)}});
        if (c.pos == position_encoding::alibi) formula.replace(formula.find("scaled"), 6, "biased");  // ALiBi's scores
        return formula;
    }
    if (name == "rope" && c.rope_style == rope_pairing::interleaved)
        return "q·cos + rotate_every_two(q)·sin, k·cos + rotate_every_two(k)·sin; θ = pos / base^(2i/dk), pairs (2i, 2i+1)";
    if (name == "softmax") return softmax_formula(c);
    if (name == "dropout") {
        return prose("stages.formula.dropout", {{"p", significant_text(c.dropout.p)}});
    }
    if (name == "flash") {
        const std::int64_t N = std::max<std::int64_t>(c.flash_block, 1);
        return prose("stages.formula.flash", {{"N", N}, {"nb", (c.kv_seq + N - 1) / N}});
    }
    const stage_info* info = find_stage_info(name);
    return info ? std::string(info->formula) : std::string();
}

std::string stage_absence(const config& c, stage_id id) {
    if (id == stage_id::mask || id == stage_id::masked) {
        if (c.mask.any()) return {};
        return prose("stages.absence.mask");
    }
    if (id == stage_id::dropout) {
        if (c.dropout.applied()) return {};
        return prose(c.dropout.p > 0.0 ? "stages.absence.dropout.eval" : "stages.absence.dropout.none");
    }
    return {};
}

}  // namespace attn
