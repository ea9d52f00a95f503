#include "attn/stage_text.hpp"

#include <cstdio>

#include "attn/trace.hpp"

namespace attn {
namespace {

std::string input_formula(const config& c) {
    std::string x = c.x_from_file ? "x from --input [B,Sq,Din]" : "x = torch.randn(B,Sq,Din)";
    if (!c.cross()) return x + "; keys and values also come from x (self-attention)";
    return x + "; " + (c.x_kv_from_file ? "x_kv from --kv-input [B,Sk,Dkv]" : "x_kv = torch.randn(B,Sk,Dkv)") +
           " (cross-attention: keys and values come from x_kv)";
}

std::string params_formula(const config& c) {
    if (c.qkv_bias) return c.out_proj ? "y = x·Wᵀ + b" : "y = x·Wᵀ + b (no output projection)";
    return c.out_proj ? "y = x·Wᵀ for q, k, v (no bias); y = x·Wᵀ + b for the output"
                      : "y = x·Wᵀ (no biases, no output projection)";
}

std::string projections_formula(const config& c) {
    if (c.from_projections) return "Q, K, V from --q --k --v (no input and no weights before them)";
    const std::string x_kv = c.cross() ? "X_kv" : "X";
    const auto one = [&](const char* out, const std::string& x, const char* letter) {
        std::string f = std::string(out) + " = " + x + "·W_" + letter + "ᵀ";
        if (c.qkv_bias) f += std::string(" + b_") + letter;
        return f;
    };
    return one("Q", "X", "q") + ", " + one("K", x_kv, "k") + ", " + one("V", x_kv, "v");
}

std::string mask_formula(const config& c) {
    const mask_spec& m = c.mask;
    std::string terms;
    const auto add = [&](bool on, const std::string& term) {
        if (on) terms += (terms.empty() ? "" : " AND ") + term;
    };
    add(m.causal, "(j <= i)");
    add(m.padding, "(j < lengths[b])");
    add(m.window, "(|i - j| <= " + (m.window_size ? std::to_string(*m.window_size) : std::string("W")) + ")");
    add(m.random, "(rand[b,0,i,j] < mask_keep)");
    add(m.from_file && m.file_convention == mask_convention::keep, "file[b,i,j]");
    add(m.from_file && m.file_convention == mask_convention::mha, "NOT file[b,i,j] (mha: true = not allowed)");
    add(m.from_file && m.file_convention == mask_convention::additive, "(file[b,i,j] == 0) (additive)");
    add(m.key_padding, "NOT key_padding_mask[b,j]");
    return "mask[b,0,i,j] = " + terms + "; true = query i may attend key j, the same for every head";
}

}  // namespace

std::string stage_formula(const config& c, std::string_view name) {
    if (name == "input") return input_formula(c);
    if (name == "params") return params_formula(c);
    if (name == "projections") return projections_formula(c);
    if (name == "mask") return mask_formula(c);
    if (name == "masked") return "masked = scaled.masked_fill(mask == false, " + fill_text(c) + ")";
    if (name == "softmax") return std::string("weights = softmax(") + (c.mask.any() ? "masked" : "scaled") + ", dim=-1)";
    if (name == "dropout") {
        char p[32];
        std::snprintf(p, sizeof p, "%g", c.dropout.p);
        return std::string("weights · keep / (1 - ") + p + ")";
    }
    const stage_info* info = find_stage_info(name);
    return info ? std::string(info->formula) : std::string();
}

std::string stage_absence(const config& c, std::string_view name) {
    if (name == "mask" || name == "masked") {
        if (c.mask.any()) return {};
        return "no --mask or --mask-file, so every query may attend every key";
    }
    if (name == "dropout") {
        if (c.dropout.applied()) return {};
        if (c.dropout.p > 0.0) return "eval mode (--dropout acts only with --train), so the weights go on unchanged";
        return "no --dropout, so the weights go on unchanged";
    }
    return {};
}

}  // namespace attn
