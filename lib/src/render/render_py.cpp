// --format py (render_py.hpp): a header and the helpers check() and check_layout(), then
// one block per stage of the run, in CLI.md's order: a heading, the formula, what to
// write there (explain.md's words), the code (--explain's torch line, one statement a
// line) and, for a shown stage, a check of each of its tensors against attn's numbers.
#include "attn/render/render_py.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <optional>
#include <vector>
#include <cmath>
#include <string_view>

#include "attn/compute/tensor_stats.hpp"
#include "attn/render/render_stats.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/positions.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/render/table_explain.hpp"
#include "attn/teach/explain.hpp"
#include "attn/teach/mistake_text.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

constexpr std::size_t py_comment_width = 92;  // "# " and the text

/// The numbers --format py embeds for stage `name` of a run of `c` (the views: none).
double py_numbers_of(const config& c, std::string_view name) {
    const double B = double(c.batch), Sq = double(c.seq), Sk = double(c.kv_seq), D = double(c.d_model),
                 H = double(c.heads), Din = double(c.d_in), Dkv = double(c.d_kv_in);
    if (name == "input") return B * Sq * Din + (c.cross() ? B * Sk * Dkv : 0);
    if (name == "params")
        return D * Din + 2 * D * Dkv + (c.qkv_bias ? 3 * D : 0) + (c.out_proj ? D * D + D : 0);
    if (name == "projections") return B * Sq * D + 2 * B * (c.past > 0 ? Sq : Sk) * c.kv_width();
    if (name == "cache") return 2 * B * c.past * c.kv_width();
    if (name == "append") return 2 * B * Sk * c.kv_width();
    if (name == "repeat_kv") return 2 * B * Sk * D;
    if (name == "view" || name == "transpose" || name == "merge") return 0;
    if (name == "mask") return B * Sq * Sk;
    if (name == "dropout") return 2 * B * H * Sq * Sk;
    if (name == "context" || name == "concat" || name == "output" || name == "residual") return B * Sq * D;
    const double F = double(c.block.width);
    if (name == "mlp_norm") return B * Sq * D + 2 * D;
    if (name == "mlp") return (c.block.gated ? 3 : 2) * B * Sq * F + B * Sq * D;
    if (name == "block") return (c.block.post_norm ? 2 : 1) * B * Sq * D;
    return B * H * Sq * Sk;  // scores, scaled, masked, softmax
}

/// The mistakes whose PyTorch line py_with_mistake writes (way 0), in mistake_table's order;
/// a script for another would assert the mistaken numbers against the right code.
const std::vector<mistake>& py_written_mistakes() {
    static const std::vector<mistake> written{
        mistake::softmax_axis,         mistake::missing_scale,         mistake::wrong_scale,
        mistake::mask_inverted,        mistake::fill_value,            mistake::q_k_swapped,
        mistake::missing_bias,         mistake::dropout_not_rescaled,  mistake::dropout_keep_inverted,
        mistake::weights_transposed,   mistake::log_softmax,           mistake::sigmoid_instead_of_softmax,
        mistake::scale_multiplied,     mistake::kv_heads_tiled,        mistake::rope_positions_from_zero,
        mistake::rope_pairs_mixed,     mistake::alibi_sign};
    return written;
}

bool py_writes_mistake(mistake m) {
    const std::vector<mistake>& written = py_written_mistakes();
    return std::find(written.begin(), written.end(), m) != written.end();
}

/// "0.471608", "1.0", "-inf", "nan": a float32 in the fewest digits that read back as the
/// same float, as a Python float (inf and nan are names the script defines).
std::string py_float(float v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    return python_float_text(v);
}

/// The elements of `t` as nested Python lists, one row of the last axis a line, the
/// lines after the first indented by `indent` plus their depth.
std::string py_nested_list(const tensor& t, std::size_t indent) {
    const tensor_shape shape(t.values.shape().begin(), t.values.shape().end());
    const bool boolean = t.type == element_type::boolean;
    const float* first = t.values.data();
    std::string text;
    std::vector<std::size_t> at(shape.size(), 0);
    // walks every element in row-major order, opening and closing brackets as the index moves
    const std::size_t rank = shape.size();
    if (rank == 0) return py_float(*first);
    std::size_t total = 1;
    for (std::size_t n : shape) total *= n;
    if (total == 0) return "[]";
    for (std::size_t e = 0; e < total; ++e) {
        std::size_t opening = 0;  // axes whose index is 0 here, from the innermost out
        for (std::size_t a = rank; a-- > 0 && at[a] == 0;) ++opening;
        if (e != 0) {
            text += opening == 0 ? ", " : ",\n" + std::string(indent + rank - opening, ' ');
        }
        text += std::string(opening, '[');
        std::ptrdiff_t offset = 0;
        for (std::size_t a = 0; a < rank; ++a) offset += static_cast<std::ptrdiff_t>(at[a]) * t.strides[a];
        const float v = first[offset];
        text += boolean ? (v != 0.0f ? "True" : "False") : py_float(v);
        std::size_t closing = 0;  // axes at their last index here
        for (std::size_t a = rank; a-- > 0 && at[a] + 1 == shape[a];) ++closing;
        text += std::string(closing, ']');
        for (std::size_t a = rank; a-- > 0;) {  // the next index
            if (++at[a] < shape[a]) break;
            at[a] = 0;
        }
    }
    return text;
}

/// The statements of a --explain torch line, one a line, and its trailing comment.
struct py_code {
    std::vector<std::string> statements;
    std::string comment;
};

py_code py_split_torch_line(const std::string& line) {
    py_code code;
    std::string text = line;
    const std::size_t hash = text.find("  # ");
    if (hash != std::string::npos) {
        code.comment = text.substr(hash + 4);
        text.erase(hash);
    }
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = text.find("; ", start);
        code.statements.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 2;
    }
    return code;
}

bool py_starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

/// `text` with its first `from` replaced by `to` (unchanged when it has none).
std::string py_replaced(std::string text, std::string_view from, std::string_view to) {
    const std::size_t at = text.find(from);
    if (at != std::string::npos) text.replace(at, from.size(), to);
    return text;
}

/// The statements of stage `name` as c.mistake (way 0) makes it; the others unchanged.
std::vector<std::string> py_with_mistake(const config& c, std::string_view name, std::vector<std::string> code) {
    const mistake m = c.mistake;
    if (m == mistake::rope_pairs_mixed && (name == "rope" || name == "cache")) {
        // the right lines of the other pairing, cos, sin and the cached keys' rotation too
        config other = c;
        other.mistake = mistake::none;
        other.rope_style = rotation_pairing(c);
        return py_split_torch_line(explain_stage(other, name).torch).statements;
    }
    if (m == mistake::none || info_of(*mistake_stage(m, 0)).name != name) return code;
    const std::string query_positions =  // torch.arange(N, N + Sq), as explain_rope writes it
        "torch.arange(" + std::to_string(first_query_position(c)) + ", " + std::to_string(first_query_position(c) + c.seq) + ")";
    for (std::string& s : code) {
        switch (m) {
            case mistake::softmax_axis: s = py_replaced(s, "dim=-1", "dim=-2"); break;
            case mistake::missing_scale: s = py_replaced(s, " / math.sqrt(dk)", ""); break;
            case mistake::wrong_scale: s = py_replaced(s, "math.sqrt(dk)", "math.sqrt(D)"); break;
            case mistake::mask_inverted:  // the mask itself, true where attending is not allowed
                if (py_starts_with(s, "mask = ")) s = "mask = ~(" + s.substr(7) + ")";
                break;
            case mistake::fill_value: {
                const float fill = mistaken_fill(c, 0);
                const std::string text = std::isinf(fill) ? std::string(fill < 0 ? "float('-inf')" : "float('inf')")
                                                          : py_float(fill);
                const std::size_t comma = s.find("(~mask, ");
                if (comma != std::string::npos) s = s.substr(0, comma + 8) + text + ")";
                break;
            }
            case mistake::q_k_swapped: s = py_replaced(s, "q @ k.transpose(-2, -1)", "k @ q.transpose(-2, -1)"); break;
            case mistake::missing_bias:
                for (const char* letter : {"q", "k", "v"}) {
                    const std::string layer = std::string("w_") + letter + "(";
                    const std::size_t at = s.find(layer);
                    if (at == std::string::npos) continue;
                    const std::size_t close = s.find(')', at);
                    const std::string input = s.substr(at + layer.size(), close - at - layer.size());
                    s = s.substr(0, at) + input + " @ w_" + letter + ".weight.T" + s.substr(close + 1);
                }
                break;
            case mistake::dropout_not_rescaled:
                if (py_starts_with(s, "weights = ")) s = "weights = weights * keep";
                break;
            case mistake::dropout_keep_inverted: s = py_replaced(s, "(keep / ", "(~keep / "); break;
            case mistake::weights_transposed: s = py_replaced(s, "weights @ v", "weights.transpose(-2, -1) @ v"); break;
            case mistake::kv_heads_tiled:  // tiling: k.repeat(1, H // G, 1, 1)
                s = py_replaced(py_replaced(s, "k.repeat_interleave(H // G, dim=1)", "k.repeat(1, H // G, 1, 1)"),
                                "v.repeat_interleave(H // G, dim=1)", "v.repeat(1, H // G, 1, 1)");
                break;
            case mistake::log_softmax: s = py_replaced(s, "torch.softmax(", "torch.log_softmax("); break;
            case mistake::sigmoid_instead_of_softmax:  // torch.softmax(x, dim=-1) -> torch.sigmoid(x)
                if (py_starts_with(s, "weights = torch.softmax(")) s = py_replaced(py_replaced(s, "torch.softmax(", "torch.sigmoid("), ", dim=-1)", ")");
                break;
            case mistake::scale_multiplied: s = py_replaced(s, " / math.sqrt(dk)", " * math.sqrt(dk)"); break;
            case mistake::rope_positions_from_zero: s = py_replaced(s, query_positions, "torch.arange(0, Sq)"); break;
            case mistake::alibi_sign: s = py_replaced(s, "(j - i).float()", "(i - j).float()"); break;
            default: break;
        }
    }
    return code;
}

/// The Python expression that holds stage `stage`'s tensor `name` in the script.
std::string py_embed_variable(const config& c, const std::string& name);

std::string py_variable(const config& c, std::string_view stage, const std::string& name) {
    if (stage == "embed") return py_embed_variable(c, name);
    if (stage == "params") return name.substr(0, 1) == "w" ? name + ".weight" : "w_" + name.substr(2) + ".bias";
    if (stage == "merge") return "merged";
    if (stage == "residual") return "residual";  // the block's: the residual stream, then h, ... (py_block_code)
    if (stage == "mlp_norm") return name == "x" ? "h" : "mlp_norm_" + name;
    if (stage == "mlp") return name == "out" ? "mlp_out" : name;
    if (stage == "block") return "block_" + name;
    if (stage == "mask") return "mask.expand(" + std::to_string(c.batch) + ", 1, Sq, Sk)";  // [Sq,Sk] broadcasts
    if (stage == "cache") return "past_" + name;  // the cached k and v, before torch.cat
    if (stage == "flash")  // each block's m, l, rescale, acc stacked on a block axis; its own context
        return name == "context" ? "flash_context" : "torch.stack(" + name + "_blocks, dim=3)";
    return name;
}

/// `path` as a Python expression for the same bytes: os.fsdecode(b"...") with every byte but
/// letters, digits and . _ / - written \xNN, so that no name can end the literal.
std::string py_path(const std::string& path) {
    std::string text = "os.fsdecode(b\"";
    for (const char ch : path) {
        const auto b = static_cast<unsigned char>(ch);
        if (std::isalnum(b) != 0 || ch == '.' || ch == '_' || ch == '/' || ch == '-') {
            text += ch;
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", b);
            text += hex;
        }
    }
    return text + "\")";
}

/// The input stage's statements with explain's placeholders (x = torch.tensor(data)) replaced
/// by the files loaded as attn read them (load_tensor, in the header).
py_code py_loaded_inputs(const py_code& code, const render_options& options) {
    py_code loaded;
    for (const std::string& s : code.statements) {
        if (s == "x = torch.tensor(data)")
            loaded.statements.push_back("x = load_tensor(" + py_path(options.input_file) + ", \"input.x\")  # --input");
        else if (s == "x_kv = torch.tensor(data_kv)")
            loaded.statements.push_back("x_kv = load_tensor(" + py_path(options.kv_input_file) +
                                        ", \"input.x_kv\")  # --kv-input");
        else
            loaded.statements.push_back(s);
    }
    return loaded;  // explain's comment names `data`: the lines above say where x comes from
}

/// One weight a checkpoint's layer gave attn, as config::sources.weight_sources says it
/// ("h.0.attn.c_attn.weight[:, 0:16]ᵀ (Conv1D stores [in, out])"): the tensor's name in the
/// file, the slice taken ("[:, 0:16]", digits, colons, commas and spaces only) and whether it
/// is transposed. nullopt for a name the script cannot write safely as a Python string.
struct py_source {
    std::string name, slice;
    bool transposed = false;
};

std::optional<py_source> py_parse_source(std::string from) {
    const std::size_t note = from.find(" (");
    if (note != std::string::npos) from.erase(note);
    const std::string T = "ᵀ";
    py_source s;
    if (from.size() >= T.size() && from.compare(from.size() - T.size(), T.size(), T) == 0) {
        s.transposed = true;
        from.erase(from.size() - T.size());
    }
    const std::size_t open = from.find('[');
    s.name = from.substr(0, open);
    if (open != std::string::npos) {
        s.slice = from.substr(open);
        const std::size_t close = s.slice.find(']');
        if (close == std::string::npos) return std::nullopt;
        s.slice.erase(close + 1);  // "[0] for every token" -> "[0]"
        for (const char ch : s.slice.substr(1, s.slice.size() - 2))
            if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == ':' || ch == ',' || ch == ' ') && s.slice != "[ids]")
                return std::nullopt;
    }
    if (s.name.empty() || s.name.size() > 200) return std::nullopt;
    for (const char ch : s.name)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-')) return std::nullopt;
    return s;
}

/// The weights a --params run loads, as (attn's name, its source), in the params stage's order
/// then the norm's and the embedding's: a model's from config::sources.weight_sources; attn's
/// own names (w_q ... b_o, "params.w_q" in a dump) as themselves.
std::vector<std::pair<std::string, py_source>> py_param_sources(const config& c) {
    std::vector<std::pair<std::string, py_source>> sources;
    if (!c.sources.weight_sources.empty()) {
        for (const auto& [weight, from] : c.sources.weight_sources)
            if (const auto parsed = py_parse_source(from)) sources.emplace_back(weight, *parsed);
            else return {};
        return sources;
    }
    for (const char* letter : {"q", "k", "v", "o"}) {
        if (*letter == 'o' && !c.out_proj) continue;
        sources.emplace_back(std::string("w_") + letter, py_source{std::string("w_") + letter, "", false});
        if (*letter == 'o' ? c.out_bias : c.qkv_bias)
            sources.emplace_back(std::string("b_") + letter, py_source{std::string("b_") + letter, "", false});
    }
    return sources;
}

/// `name` as a Python string literal (py_parse_source allows only letters, digits and . _ -).
std::string py_string(const std::string& name) { return "\"" + name + "\""; }

/// The expression of a source: param(P, "h.0.attn.c_attn.weight")[:, 0:16].T
std::string py_source_expression(const py_source& s) {
    std::string e = "param(P, " + py_string(s.name) + ")";
    if (!s.slice.empty() && s.slice != "[ids]" && s.slice.find("for") == std::string::npos) e += s.slice;
    return e + (s.transposed ? ".T" : "");
}

/// The variable an embedding table is called in --explain's line: the name's last part before
/// ".weight" ("bert.embeddings.word_embeddings.weight" -> "word_embeddings").
std::string py_table_variable(const std::string& name) {
    std::string stem = name;
    if (stem.size() > 7 && stem.compare(stem.size() - 7, 7, ".weight") == 0) stem.erase(stem.size() - 7);
    const std::size_t dot = stem.rfind('.');
    return dot == std::string::npos ? stem : stem.substr(dot + 1);
}

/// The params stage of a --params run: each weight loaded from P into the layers the setup
/// made (nn.Linear's own draws replaced), and the norm's weight and bias.
std::vector<std::string> py_loaded_params(const config& c) {
    std::vector<std::string> code;
    for (const auto& [weight, source] : py_param_sources(c)) {
        const std::string e = py_source_expression(source);
        if (weight.size() == 3 && weight[0] == 'w' && weight[1] == '_')
            code.push_back(weight + ".weight.copy_(" + e + ")");
        else if (weight.size() == 3 && weight[0] == 'b' && weight[1] == '_')
            code.push_back("w_" + weight.substr(2) + ".bias.copy_(" + e + ")");
        else if (weight == "norm_weight")
            code.push_back("weight = " + e + "  # the norm's");
        else if (weight == "norm_bias")
            code.push_back("bias = " + e);
    }
    if (c.out_proj && !c.out_bias) code.push_back("w_o.bias = None  # the file's output projection has no bias");
    return code;
}

/// The expression of attn's weight `weight` of a --params run (w_up, mlp_norm_weight, ...), or
/// "None" when the file has none (a bias).
std::string py_weight(const config& c, const std::string& weight) {
    for (const auto& [name, source] : py_param_sources(c))
        if (name == weight) return py_source_expression(source);
    return "None";
}

/// The stages after attention (config::block) as the model's code writes them, on the weights
/// loaded from P: GPT-2's Conv1D as torch.addmm with its [in, out] weight, nn.Linear's as F.linear.
std::vector<std::string> py_block_code(const config& c, stage_id id) {
    const block_spec& b = c.block;
    const std::string D = std::to_string(c.d_model), F = std::to_string(b.width);
    const auto norm = [&](const std::string& x, const std::string& weight, const std::string& bias) {
        return torch_norm_line(b.norm, x, weight, bias, c.d_model, b.eps);
    };
    const bool conv1d = c.sources.model_arch == "gpt2";
    const auto linear = [&](const std::string& x, const char* weight, const char* bias, const std::string& out) {
        if (conv1d)  // transformers' Conv1D: addmm(bias, x.view(-1, in), weight [in, out]).view(..., out)
            return "torch.addmm(" + py_weight(c, bias) + ", " + x + ".view(-1, " + x + ".size(-1)), " + py_weight(c, weight) +
                   ").view(B, Sq, " + out + ")";
        return "torch.nn.functional.linear(" + x + ", " + py_weight(c, weight) + ", " + py_weight(c, bias) + ")";
    };
    switch (id) {
        case stage_id::residual: {
            // the layer's input: before the norm (pre-norm), or x as the layer reads it (post-norm)
            std::string x = b.post_norm || c.norm == norm_kind::none ? "x" : "layer_input";
            if (c.past > 0) x += "[:, " + std::to_string(c.past) + ":]";  // the new tokens' rows
            return {"residual = out + " + x + "  # attn_output + residual"};
        }
        case stage_id::mlp_norm: {
            std::vector<std::string> code{"mlp_norm_weight = " + py_weight(c, "mlp_norm_weight")};
            if (b.norm == norm_kind::layer_norm) code.push_back("mlp_norm_bias = " + py_weight(c, "mlp_norm_bias"));
            code.push_back("h = " + norm("residual", "mlp_norm_weight", "mlp_norm_bias"));
            return code;
        }
        case stage_id::mlp: {
            std::vector<std::string> code;
            if (b.gated) code.push_back("gate = " + linear("h", "w_gate", "b_gate", F));
            code.push_back("up = " + linear("h", "w_up", "b_up", F));
            switch (b.act) {
                case activation::gelu_tanh:  // Hugging Face's NewGELUActivation, op by op
                    code.push_back("hidden = 0.5 * up * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (up + 0.044715 * torch.pow(up, 3.0))))");
                    break;
                case activation::gelu_erf: code.push_back("hidden = torch.nn.functional.gelu(up)"); break;
                case activation::silu:
                    code.push_back(b.gated ? "hidden = torch.nn.functional.silu(gate) * up"
                                           : "hidden = torch.nn.functional.silu(up)");
                    break;
            }
            code.push_back("mlp_out = " + linear("hidden", "w_down", "b_down", D));
            return code;
        }
        default:  // block
            if (!b.post_norm) return {"block_x = residual + mlp_out  # residual + feed_forward_hidden_states"};
            return {"block_sum = mlp_out + h", "block_x = " + norm("block_sum", py_weight(c, "out_norm_weight"),
                                                                   py_weight(c, "out_norm_bias"))};
    }
}

/// The embed stage's tables and ids, before --explain's line (x = wte.weight[ids] + ...).
std::vector<std::string> py_embed_setup(const config& c) {
    std::vector<std::string> code;
    std::string ids;
    for (const std::int64_t id : c.sources.tokens) ids += (ids.empty() ? "" : ", ") + std::to_string(id);
    code.push_back("ids = torch.tensor([[" + ids + "]])  # --tokens");
    code.push_back("S = " + std::to_string(c.sources.tokens.size()));
    for (const auto& [weight, source] : py_param_sources(c))
        if (weight.compare(0, 6, "embed_") == 0)
            code.push_back(py_table_variable(source.name) + " = Table(param(P, " + py_string(source.name) + "))");
    return code;
}

/// The expression that holds the embed stage's tensor `name` (token, position, token_type).
std::string py_embed_variable(const config& c, const std::string& name) {
    for (const auto& [weight, source] : py_param_sources(c)) {
        if (weight != "embed_" + name) continue;
        const std::string table = py_table_variable(source.name) + ".weight";
        if (name == "token") return table + "[ids]";
        if (name == "position") return table + "[torch.arange(S)]";
        return table + "[torch.zeros(S, dtype=torch.long)]";  // token_type: row 0 for every token
    }
    return name;
}

/// The sizes line of a run that starts at the projections (--q --k --v: no input stage).
std::string py_sizes_line(const config& c) {
    std::string line = "B, Sq, Sk, D, H, dk = " + std::to_string(c.batch) + ", " + std::to_string(c.seq) + ", " +
                       std::to_string(c.kv_seq) + ", " + std::to_string(c.d_model) + ", " + std::to_string(c.heads) +
                       ", " + std::to_string(c.head_dim());
    if (c.grouped()) line += "\nG = " + std::to_string(c.kv_head_count());
    if (c.out_proj)  // the one layer attn draws: torch.manual_seed(seed), then nn.Linear(D, D)
        line += "\ntorch.manual_seed(" + std::to_string(c.seed) + ")\nw_o = nn.Linear(" + std::to_string(c.d_model) +
                ", " + std::to_string(c.d_model) + (c.out_bias ? "" : ", bias=False") + ")";
    return line;
}

/// The flash stage (--flash-block N) as a loop over blocks of N keys: --explain's torch line
/// (explain_flash), each block's m, l, rescale and acc kept for the checks, and the context of
/// tests/reference/make_flash_fixtures.py (a row with no allowed key: 0). One statement.
std::string py_flash_loop(const config& c) {
    const std::string biased = c.pos == position_encoding::alibi ? "    s = s + bias[..., j:j+N]\n" : "";
    const std::string masked = c.mask.any() ? "    s = s.masked_fill(~mask[..., j:j+N], fill)\n" : "";
    return "N" + std::string(c.mask.any() ? ", fill" : "") + " = " + std::to_string(c.flash_block) +
           (c.mask.any() ? ", " + py_float(c.fill) : std::string()) +
           "\n"
           "m, l, acc = torch.full((B, H, Sq), -inf), torch.zeros(B, H, Sq), torch.zeros(B, H, Sq, dk)\n"
           "m_blocks, l_blocks, rescale_blocks, acc_blocks = [], [], [], []\n"
           "for j in range(0, Sk, N):\n"
           "    s = (q @ k[:, :, j:j+N].transpose(-2, -1)) / math.sqrt(dk)\n" +
           biased + masked +
           "    m_new = torch.maximum(m, s.amax(-1))\n"
           "    m_safe = torch.where(m_new == -inf, 0, m_new)  # FlashAttention-2: no -inf - -inf\n"
           "    rescale = torch.exp(m - m_safe)\n"
           "    p = torch.exp(s - m_safe[..., None])\n"
           "    l = rescale * l + sum(p.unbind(-1))  # summed left to right, as attn sums\n"
           "    acc = rescale[..., None] * acc + p @ v[:, :, j:j+N]\n"
           "    m = m_new\n"
           "    m_blocks.append(m), l_blocks.append(l), rescale_blocks.append(rescale), acc_blocks.append(acc)\n"
           "flash_context = acc / torch.where(l == 0, 1, l)[..., None]  # a row with no allowed key: 0";
}

void write_py_comment(std::ostream& out, const std::string& text) {
    for (const std::string& row : table::wrap_words(text, py_comment_width)) out << "# " << row << '\n';
}

/// The bytes of a well-formed UTF-8 character at text[i], or 0.
std::size_t utf8_length(const std::string& text, std::size_t i) {
    const auto b = static_cast<unsigned char>(text[i]);
    const std::size_t n = b < 0x80 ? 1 : b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    if (n == 0 || i + n > text.size()) return 0;
    for (std::size_t k = 1; k < n; ++k)
        if ((static_cast<unsigned char>(text[i + k]) & 0xC0) != 0x80) return 0;
    const auto b1 = static_cast<unsigned char>(n > 1 ? text[i + 1] : 0);
    if ((b == 0xE0 && b1 < 0xA0) || (b == 0xED && b1 > 0x9F) || (b == 0xF0 && b1 < 0x90) || (b == 0xF4 && b1 > 0x8F))
        return 0;  // overlong, a surrogate, past U+10FFFF
    return n;
}

/// The command as the script's first line, a comment Python reads: one line (a control
/// character is '?'), UTF-8 (a byte that is not is written \xff), and no encoding
/// declaration (PEP 263: "coding:" or "coding=" on line 1 or 2 names the file's encoding;
/// it is written "coding\x3a").
std::string py_first_line(const std::string& command) {
    std::string line;
    for (std::size_t i = 0; i < command.size();) {
        const std::size_t n = utf8_length(command, i);
        const auto b = static_cast<unsigned char>(command[i]);
        if (n == 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02x", b);
            line += hex;
            ++i;
            continue;
        }
        line += n == 1 && (b < 0x20 || b == 0x7F) ? std::string("?") : command.substr(i, n);
        i += n;
    }
    for (std::size_t at = 0; (at = line.find("coding", at)) != std::string::npos; at += 6)
        if (at + 6 < line.size() && (line[at + 6] == ':' || line[at + 6] == '='))
            line.replace(at + 6, 1, line[at + 6] == ':' ? "\\x3a" : "\\x3d");
    return line;
}

void write_py_header(const config& c, const std::string& command, std::ostream& out) {
    out << "# " << py_first_line(command) << "\n#\n";
    write_py_comment(out,
                  "Multi-head attention in PyTorch, stage by stage, each stage checked against the numbers attn "
                  "computed for the same run (within 1e-6, NaN where attn has NaN). Run it with python3 and "
                  "PyTorch (1.13, CPU): it prints a line for each check and stops at the first that fails.");
    write_py_comment(out,
                  "A lab: under each stage's heading, delete the code, write it again from the comment "
                  "above it, and run the script until every check passes.");
    if (c.mistake != mistake::none)
        write_py_comment(out, "Made with --mistake " + std::string(mistake_id(c.mistake)) +
                               ": the stage it changes is written wrong on purpose, and the checks after it "
                               "assert attn's mistaken numbers.");
    const bool loads = c.sources.x_from_file || c.sources.x_kv_from_file || c.sources.params_from_file ||
                       c.sources.from_projections || c.mask.from_file || c.mask.key_padding;  // load_tensor below
    out << (loads ? "import json\nimport math\nimport os\n\nimport numpy as np\n" : "import math\n\n");
    out << R"py(import torch
from torch import nn

torch.set_grad_enabled(False)  # plain tensors: no autograd history
inf, nan = math.inf, math.nan  # as attn's numbers below write them


def f32(rows):
    """attn's numbers, as a float32 tensor."""
    return torch.tensor(rows, dtype=torch.float32)


def check(name, got, want):
    """Asserts that this script's tensor `got` holds attn's numbers `want`."""
    assert tuple(got.shape) == tuple(want.shape), f"{name}: shape {tuple(got.shape)}, attn's is {tuple(want.shape)}"
    if want.dtype == torch.bool:
        wrong = got.bool() != want
    else:
        wrong = ~torch.isclose(got.float(), want, rtol=1e-5, atol=1e-6, equal_nan=True)
    if wrong.any():
        first = tuple(int(i) for i in wrong.nonzero()[0])
        raise AssertionError(f"{name}: {int(wrong.sum())} of {want.numel()} numbers differ from attn's, "
                             f"the first at {first}: {got[first].item():.8g} here, {want[first].item():.8g} in attn")
    exact = want.dtype == torch.bool or torch.equal(got[~want.isnan()], want[~want.isnan()])
    print(f"ok  {name}" + ("" if exact else " (within 1e-6)"))


def check_layout(name, got, shape, stride):
    """Asserts that this script's tensor `got` has attn's shape and strides (a view moves no data)."""
    assert tuple(got.shape) == shape, f"{name}: shape {tuple(got.shape)}, attn's is {shape}"
    assert got.stride() == stride, f"{name}: strides {got.stride()}, attn's are {stride}"
    print(f"ok  {name} {shape}, strides {stride}")

)py";
    if (loads)
        out << R"py(
def load_tensor(path, member):
    """The tensor attn read from `path`, as float32: .npy; .npz (its array `member`, as attn's dumps
    name it, else its only one); .json (nested lists, as tensor.tolist())."""
    extension = os.path.splitext(path)[1].lower()
    if extension == ".json":
        with open(path, encoding="utf-8") as f:
            return torch.tensor(json.load(f), dtype=torch.float64).float()
    data = np.load(path)
    if extension == ".npz":
        data = data[member] if member in data.files else data[data.files[0]]
    return torch.from_numpy(np.array(data, dtype=np.float32))

)py";
    if (c.sources.params_from_file)
        out << R"py(
def read_safetensors(path):
    """A .safetensors file's tensors as numpy arrays: an 8-byte little-endian header length, the
    JSON header (name -> dtype, shape, data_offsets), then the data. F16, BF16 and F64 become float32
    exactly as attn converts them."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    types = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2", "BOOL": "?", "U8": "u1", "I8": "i1",
             "I16": "<i2", "I32": "<i4", "I64": "<i8"}
    arrays = {}
    for name, t in header.items():
        if name == "__metadata__" or t["dtype"] not in types:  # not a weight attn reads
            continue
        begin, end = t["data_offsets"]
        a = np.frombuffer(data[begin:end], dtype=types[t["dtype"]]).reshape(t["shape"])
        if t["dtype"] == "BF16":  # the upper 16 bits of a float32
            a = (a.astype(np.uint32) << 16).view(np.float32)
        arrays[name] = a
    return arrays


def load_params(path):
    """The tensors of --params, by name: .safetensors, a sharded checkpoint's index (.json with a
    weight_map), .npz (np.savez, or attn's dump: params.w_q ...) or .json ({"w_q": [[...]], ...})."""
    if path.endswith(".safetensors"):
        return read_safetensors(path)
    if path.endswith(".npz"):
        return dict(np.load(path))
    with open(path, encoding="utf-8") as f:
        document = json.load(f)
    if "weight_map" in document:
        arrays = {}
        for shard in sorted(set(document["weight_map"].values())):
            arrays.update(read_safetensors(os.path.join(os.path.dirname(path), shard)))
        return arrays
    return {name: np.array(rows, dtype=np.float64).astype(np.float32) for name, rows in document.items()}


def param(P, name):
    """Tensor `name` of P as float32 (in attn's dumps, w_q is params.w_q)."""
    a = P[name] if name in P else P["params." + name]
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


class Table:
    """An embedding table, named as the model names it (wte.weight, embed_tokens.weight)."""

    def __init__(self, weight):
        self.weight = weight

)py";
}

/// The checks of a shown stage: a tensor's numbers, or a view's shape and strides; with
/// --stats each followed by "# stats: ..." (the tensor's, as the table says them).
void write_py_checks(const config& c, const stage& s, const render_options& options, std::ostream& out) {
    const bool view = s.id() == stage_id::view || s.id() == stage_id::transpose || s.id() == stage_id::merge;
    for (const tensor& t : s.tensors) {
        const std::string label = std::string(s.name()) + "." + t.name;
        const std::string variable = py_variable(c, s.name(), t.name);
        if (view) {
            const tensor_shape shape(t.values.shape().begin(), t.values.shape().end());
            out << "check_layout(\"" << label << "\", " << variable << ", " << python_tuple(shape) << ", "
                << python_tuple(t.strides) << ")\n";
        } else {
            const std::string opening = "check(\"" + label + "\", " + variable + ", " +
                                        (t.type == element_type::boolean ? "torch.tensor(" : "f32(");
            out << opening << py_nested_list(t, opening.size()) << "))\n";
        }
        if (options.stats)
            out << "# " << label << ' '
                << stats_line(stats_of(t, stats_kind_of(s.id(), t.name), static_cast<double>(c.head_dim())), s.name(),
                              options.precision)
                << '\n';
    }
}

}  // namespace

void check_py_run(const config& c, const render_options& options) {
    const auto refuse = [](const std::string& what) {
        throw usage_error("--format py: " + what);
    };
    const auto with_from = [&](const char* flags) {  // a replay: the files are inside the dump
        refuse(std::string("the script loads the files attn read; with --from they are inside the dump: pass them as ") +
               flags + " files");
    };
    if ((c.sources.x_from_file && c.sources.tokens.empty() && options.input_file.empty()) ||
        (c.sources.x_kv_from_file && options.kv_input_file.empty()))
        with_from("--input and --kv-input");
    if (c.sources.from_projections && (options.q_file.empty() || options.k_file.empty() || options.v_file.empty()))
        with_from("--q, --k and --v");
    if (c.sources.from_projections && (c.past > 0 || c.sources.params_from_file))
        refuse("no script for --q --k --v with --past or --params yet");
    if (c.sources.params_from_file && options.params_file.empty()) with_from("--params");
    if ((c.mask.from_file && options.mask_file.empty()) || (c.mask.key_padding && options.key_padding_file.empty()))
        with_from("--mask-file and --key-padding-mask");
    if (c.sources.params_from_file && py_param_sources(c).empty())
        refuse("--params: a weight's name in the file is not one the script can write (letters, digits, . _ - only)");
    if (!c.sources.tokens.empty()) {
        bool table = false;
        for (const auto& [weight, source] : py_param_sources(c)) table = table || weight == "embed_token";
        if (!table) refuse("--tokens: the script finds no token table of the model to look the ids up in");
    }
    if (c.flash_block > 0 && c.mistake != mistake::none)  // the loop is the right recurrence only
        refuse("no script for the flash stage with --mistake yet (the loop computes the right scores)");
    if (c.mistake != mistake::none && (!py_writes_mistake(c.mistake) || c.mistake_variant != 0)) {
        std::string written;
        for (mistake m : py_written_mistakes()) written += (written.empty() ? "" : ", ") + std::string(mistake_id(m));
        refuse("no PyTorch line for --mistake " + std::string(mistake_id(c.mistake)) +
               (c.mistake_variant != 0 ? " way " + std::to_string(c.mistake_variant) : std::string()) +
               " yet (the script writes " + written + ")");
    }
    if (options.batch_index || options.head || options.row)
        refuse("the script checks whole tensors; leave out --batch-index, --head and --row");
    for (const stage_info& info : stage_table) {
        if (!stage_in_run(c, info.id) || !options.shows(info.id)) continue;
        const double n = py_numbers_of(c, info.name);
        if (n > double(py_max_numbers))
            refuse("stage " + std::string(info.name) + " has " + std::to_string(static_cast<long long>(n)) +
                   " numbers, more than the " + std::to_string(py_max_numbers) +
                   " a script embeds per stage: make the run smaller (--seq, --kv-seq, --batch, --heads, "
                   "--d-model, --d-in) or check fewer stages (--stage)");
    }
}

void render_py(const trace& t, const render_options& options, const std::string& command, std::ostream& out) {
    const config& c = t.cfg;
    write_py_header(c, command, out);
    if (c.sources.params_from_file) {
        out << "\n# ── the weights file: every tensor of --params, by name, as numpy arrays ──\n";
        out << "P = load_params(" << py_path(options.params_file) << ")  # --params\n";
    }
    for (const stage_info& info : stage_table) {
        if (!stage_in_run(c, info.id)) continue;
        const stage_explanation e = explain_stage(c, info.id);
        py_code code = py_split_torch_line(e.torch);
        if (info.id == stage_id::input) {  // the setup (sizes, seed, layers) first, then x
            std::vector<std::string> setup, input;
            for (const std::string& s : code.statements) {
                if (py_starts_with(s, "import ") || py_starts_with(s, "from ")) continue;
                (input.empty() && !py_starts_with(s, "x = ") ? setup : input).push_back(s);
            }
            out << "\n# ── setup: this run's sizes, then the layers as attn draws them (weights before x) ──\n";
            for (const std::string& s : setup) out << s << '\n';
            code.statements = input;
        }
        if (info.id == stage_id::input && !c.sources.tokens.empty()) {  // x is the embed stage's
            std::vector<std::string> kept;
            for (const std::string& st : code.statements)
                if (st != "x = torch.tensor(data)") kept.push_back(st);
            code = {kept, ""};
        } else if (info.id == stage_id::input && (c.sources.x_from_file || c.sources.x_kv_from_file)) {
            code = py_loaded_inputs(code, options);
        }
        if (info.id == stage_id::params)  // drawn in the setup, before x; or loaded from --params here
            code = {c.sources.params_from_file ? py_loaded_params(c) : std::vector<std::string>{}, ""};
        if (info.id == stage_id::embed) {
            std::vector<std::string> statements = py_embed_setup(c);
            statements.insert(statements.end(), code.statements.begin(), code.statements.end());
            code.statements = statements;
        }
        if (info.id == stage_id::projections && c.sources.from_projections)
            code = {{py_sizes_line(c), "q = load_tensor(" + py_path(options.q_file) + ", \"projections.q\")  # --q",
                     "k = load_tensor(" + py_path(options.k_file) + ", \"projections.k\")  # --k",
                     "v = load_tensor(" + py_path(options.v_file) + ", \"projections.v\")  # --v"},
                    ""};
        if (info.id == stage_id::mask) {
            std::vector<std::string> files;
            if (c.mask.from_file)
                files.push_back("mask_file = load_tensor(" + py_path(options.mask_file) + ", \"mask.mask\")  # --mask-file");
            if (c.mask.key_padding)
                files.push_back("key_padding_mask = load_tensor(" + py_path(options.key_padding_file) +
                                ", \"key_padding_mask\")" +
                                (c.mask.key_padding_convention == mask_convention::additive ? "" : ".bool()") +
                                "  # --key-padding-mask");
            code.statements.insert(code.statements.begin(), files.begin(), files.end());
        }
        if (info.id == stage_id::flash) code = {{py_flash_loop(c)}, ""};
        if (info.id == stage_id::norm && c.block.on() && !c.block.post_norm)  // kept for the residual (15a)
            code.statements.insert(code.statements.begin(), "layer_input = x  # the residual stream, added back after attention");
        if (info.id >= stage_id::residual) code = {py_block_code(c, info.id), ""};
        out << "\n# ── " << info.step.text() << " · " << info.name << " ── " << stage_formula(c, info.name) << '\n';
        write_py_comment(out, info.id == stage_id::params ? "Made in the setup, before x. " + e.words
                                                          : "Your turn: " + e.words);
        if (!code.comment.empty()) write_py_comment(out, code.comment);
        const std::vector<std::string> statements = py_with_mistake(c, info.name, code.statements);
        if (statements != code.statements) write_py_comment(out, mistake_warning(c));
        for (const std::string& s : statements) out << s << '\n';
        if (const stage* shown = t.find(info.name); shown != nullptr && options.shows(info.id))
            write_py_checks(c, *shown, options, out);
    }
    out << "\nprint(\"every check passed: these are attn's numbers\")\n";
}

}  // namespace attn
