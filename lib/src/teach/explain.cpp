// --explain (explain.hpp): one function per stage, in CLI.md's order, then the opening and
// the summary. The sentences are share/attn/text/explain.md's; here the values they name.
// The PyTorch lines are seed notebook 000's: constructors carry this run's numbers (to be
// pasted), reshapes the letters; the memory texts follow each step's strides (tensor.hpp).
#include "attn/teach/explain.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

#include "attn/compute/memory.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/positions.hpp"
#include "attn/compute/run_plan.hpp"
#include "attn/compute/trace.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/teach/prose.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/join.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

using layout = tensor_layout;

std::string str(std::int64_t n) { return std::to_string(n); }

/// "[2,5,4,2]", as attn writes shapes.
std::string shape_text(const tensor_shape& shape) { return tensor_index_text(shape); }

/// "(40, 8, 2, 1)", as PyTorch prints t.stride().
std::string stride_text(const layout& t) { return python_tuple(t.strides); }

/// The run's sizes under their letters (CLI.md), and the layouts PyTorch gives
/// the notebook's tensors at each step.
struct run_shapes {
    std::size_t B, Sq, Sk, D, H, dk, Din, Dkv;
    bool cross;
    std::size_t N, G, Dg, Sn;  // cached tokens, kv heads, k v's width G·dk, and the tokens k v are projected from

    explicit run_shapes(const config& c)
        : B(c.batch),
          Sq(c.seq),
          Sk(c.kv_seq),
          D(c.d_model),
          H(c.heads),
          dk(c.head_dim()),
          Din(c.d_in),
          Dkv(c.d_kv_in),
          cross(c.cross()),
          N(c.past),
          G(c.kv_head_count()),
          Dg(c.kv_width()),
          Sn(c.past > 0 ? c.seq : c.kv_seq),
          plan(make_plan(c)) {}

    run_plan plan;  // the layouts PyTorch gives the notebook's tensors at each step

    /// Tensor `name` of stage `id`.
    layout of(stage_id id, const char* name) const { return plan.tensor_of(id, name).layout; }
    /// q, k or v as stage `reader` reads it: after rope, append or repeat_kv, when the run has them.
    layout read_by(stage_id reader, const char* name) const { return of(plan.source_of(name, reader), name); }
    /// scores' k.transpose(-2, -1)
    layout k_turned() const { return transposed(read_by(stage_id::scores, "k"), 2, 3); }

    /// matmul of 4-D tensors reshapes each operand to [B·H, rows, cols] for bmm:
    /// a copy when no view gives that shape.
    bool matmul_copies(const layout& operand) const {
        return !viewed(operand, {B * H, operand.shape[2], operand.shape[3]});
    }

    std::string bsd(std::size_t s) const { return shape_text({B, s, D}); }
    std::string bshd(std::size_t s) const { return shape_text({B, s, H, dk}); }
    std::string bhsd(std::size_t s) const { return shape_text({B, H, s, dk}); }
    std::string plane() const { return shape_text({B, H, Sq, Sk}); }  // [B,H,Sq,Sk]
};

/// "q [2,5,8] -> [2,5,4,2]; k, v [2,6,8] -> [2,6,4,2]", or "q, k, v ..." when Sq = Sk.
std::string qkv_shapes(const run_shapes& r, const std::string& from_q, const std::string& to_q,
                       const std::string& from_k, const std::string& to_k) {
    if (r.Sq == r.Sk) return "q, k, v " + from_q + " -> " + to_q;
    return "q " + from_q + " -> " + to_q + "; k, v " + from_k + " -> " + to_k;
}

/// "s" after a count other than 1: "1 head", "4 heads".
const char* plural(std::int64_t n) { return n == 1 ? "" : "s"; }

/// Section `id` of explain.md with this run's letters and their plurals ({B}, {s_B}, ...),
/// {plane} ([B,H,Sq,Sk] in numbers), and `more`.
std::string say(const run_shapes& r, const std::string& id, std::vector<prose_arg> more = {}) {
    const std::int64_t bh = r.B * r.H;
    more.insert(more.end(), {{"B", r.B},     {"s_B", plural(r.B)},     {"Sq", r.Sq},   {"s_Sq", plural(r.Sq)},
                             {"Sk", r.Sk},   {"s_Sk", plural(r.Sk)},   {"D", r.D},     {"s_D", plural(r.D)},
                             {"H", r.H},     {"s_H", plural(r.H)},     {"dk", r.dk},   {"s_dk", plural(r.dk)},
                             {"Din", r.Din}, {"s_Din", plural(r.Din)}, {"Dkv", r.Dkv}, {"s_Dkv", plural(r.Dkv)},
                             {"BH", bh},     {"s_BH", plural(bh)},     {"plane", r.plane()},
                             {"N", r.N},     {"s_N", plural(r.N)},     {"G", r.G},     {"s_G", plural(r.G)},
                             {"per", r.H / r.G}, {"s_per", plural(r.H / r.G)}, {"Dg", r.Dg}});
    return prose("explain." + id, more);
}

/// "x.stride() is (40, 8, 1): ... at b·40 + s·8 + i": what strides are, with x's.
std::string strides_explained(const run_shapes& r, const std::string& name, const layout& t, std::string_view letters) {
    std::string where;
    for (std::size_t a = 0; a < t.strides.size(); ++a)
        where += (a ? " + " : "") + std::string(1, letters[a]) + (t.strides[a] == 1 ? "" : "·" + str(t.strides[a]));
    const std::string index =
        std::string(1, letters[0]) + ", " + std::string(1, letters[1]) + ", " + std::string(1, letters[2]);
    return say(r, "strides", {{"name", name}, {"strides", stride_text(t)}, {"index", index}, {"where", where}});
}

/// The line that makes a run's starting point in PyTorch, in the order attn draws
/// (CLI.md): imports, this run's letters, torch.manual_seed, the nn.Linear layers
/// (each weight, then its bias), x, then x_kv for cross-attention. With the other
/// stages' lines after it, top to bottom, it is a script that runs.
std::string setup_line(const config& c, const run_shapes& r) {
    std::string line = "import math, torch; from torch import nn; B, Sq, Sk, D, H, dk = " + str(r.B) + ", " +
                       str(r.Sq) + ", " + str(r.Sk) + ", " + str(r.D) + ", " + str(r.H) + ", " + str(r.dk) + "; ";
    if (r.N > 0) line += "N = " + str(r.N) + "; ";  // a decoding step: N cached tokens
    if (r.G < r.H) line += "G = " + str(r.G) + "; ";  // grouped-query: G kv heads
    const std::string seed = "torch.manual_seed(" + str(c.seed) + "); ";
    const std::string qkv_bias = c.qkv_bias ? "" : ", bias=False";
    const auto linear = [](const std::string& name, std::int64_t in, std::int64_t out, const std::string& extra) {
        return name + " = nn.Linear(" + str(in) + ", " + str(out) + extra + "); ";
    };
    if (!c.sources.params_from_file) line += seed;
    line += linear("w_q", r.Din, r.D, qkv_bias) + linear("w_k", r.Dkv, r.Dg, qkv_bias) + linear("w_v", r.Dkv, r.Dg, qkv_bias);
    if (c.out_proj) line += linear("w_o", r.D, r.D, "");
    const auto randn = [](std::int64_t a, std::int64_t b, std::int64_t d) {
        return "torch.randn(" + str(a) + ", " + str(b) + ", " + str(d) + ")";
    };
    // x, then x_kv; a comment at the end says where they come from
    std::vector<std::string> comments;
    if (c.sources.params_from_file) comments.push_back("then load --params into the layers");
    if (c.sources.x_from_file) {
        line += "x = torch.tensor(data)";
        comments.push_back("data read from --input");
    } else {
        line += (c.sources.params_from_file ? seed : std::string()) + "x = " + randn(r.B, r.N + r.Sq, r.Din);
        if (!c.sources.params_from_file) comments.push_back("x drawn after the weights");
    }
    if (r.cross && c.sources.x_kv_from_file) {
        line += "; x_kv = torch.tensor(data_kv)";
        comments.push_back("data_kv read from --kv-input");
    } else if (r.cross) {
        line += "; x_kv = " + randn(r.B, r.Sk, r.Dkv);
    }
    if (r.N > 0) comments.push_back("a decoding step: x holds all N + Sq tokens");
    if (!comments.empty()) line += "  # " + join(comments, "; ");
    return line;
}

// --- 1-3: from tokens to queries, keys and values ---------------------------------------

stage_explanation explain_input(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, !c.sources.tokens.empty() ? "input.words.tokens" : c.sources.x_from_file ? "input.words.read" : "input.words.drawn");
    if (r.cross) e.words += " " + say(r, c.sources.x_kv_from_file ? "input.words.x_kv.read" : "input.words.x_kv.drawn");
    e.shapes = r.N > 0 ? "x [B,N+Sq,Din] = " + shape_text({r.B, r.N + r.Sq, r.Din})
                       : "x [B,Sq,Din] = " + shape_text({r.B, r.Sq, r.Din});
    if (r.cross) e.shapes += "; x_kv [B,Sk,Dkv] = " + shape_text({r.B, r.Sk, r.Dkv});
    e.torch = setup_line(c, r);
    const layout x = contiguous_layout({r.B, r.N + r.Sq, r.Din});
    e.memory = say(r, "input.memory", {{"strides_x", strides_explained(r, "x", x, "bsi")}});
    if (r.cross)
        e.memory +=
            " " + say(r, "input.memory.x_kv", {{"strides", stride_text(contiguous_layout({r.B, r.Sk, r.Dkv}))}});
    e.why = say(r, !c.sources.tokens.empty() ? "input.why.tokens" : c.sources.x_from_file ? "input.why.read" : "input.why.drawn");
    return e;
}

stage_explanation explain_params(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string qkv_bias = c.qkv_bias ? "" : ", bias=False";
    std::int64_t count = r.D * r.Din + 2 * r.D * r.Dkv + (c.qkv_bias ? 3 * r.D : 0);
    if (c.out_proj) count += r.D * r.D + r.D;
    e.words = say(r, c.out_proj ? "params.words.weights" : "params.words.weights.no_out_proj") + " " +
              say(r, c.qkv_bias ? "params.words.linear" : "params.words.linear.no_bias") + " " +
              (c.out_proj ? "" : say(r, "params.words.no_out_proj") + " ") +
              say(r, "params.words.count", {{"count", count}, {"s_count", plural(count)}});
    const std::string bias = c.qkv_bias ? ", b_q " + shape_text({r.D}) : "";
    e.shapes = "w_q " + shape_text({r.D, r.Din}) + " (D×Din)" + bias + "; w_k, w_v " + shape_text({r.D, r.Dkv}) +
               " (D×Dkv)" + (c.qkv_bias ? ", b_k, b_v " + shape_text({r.D}) : "");
    if (c.out_proj) e.shapes += "; w_o " + shape_text({r.D, r.D}) + " (D×D), b_o " + shape_text({r.D});
    const std::string layers = c.out_proj ? "w_q, w_k, w_v, w_o" : "w_q, w_k, w_v";
    e.torch = "[w.weight.shape for w in (" + layers + ")]  # made by the first line, before x: " +
              (c.sources.params_from_file ? "load --params into them" : "each weight [out, in], then its bias [out]");
    e.memory = say(r, "params.memory", {{"strides", stride_text(contiguous_layout({r.D, r.Din}))}});
    if (!c.sources.model_arch.empty()) {  // a model's own names: how its layout became nn.Linear's
        const std::size_t of = c.sources.model.find(" of ");  // "gpt2 layer 1 of m.safetensors"
        e.why = say(r, "params.why.model." + c.sources.model_arch,
                    {{"file", of == std::string::npos ? c.sources.model : c.sources.model.substr(of + 4)}});
    } else if (c.sources.params_from_file) {
        e.why = say(r, "params.why.read");
    } else {
        std::string bounds;
        std::vector<std::size_t> ins{r.Din};
        if (r.Dkv != r.Din) ins.push_back(r.Dkv);
        if (c.out_proj && r.D != r.Din && r.D != r.Dkv) ins.push_back(r.D);
        for (std::size_t in : ins)
            bounds += (bounds.empty() ? "" : ", ") + std::string("±") + short_number(1.0 / std::sqrt(double(in))) +
                      " for in = " + str(in);
        e.why = say(r, "params.why.drawn", {{"seed", c.seed}, {"bounds", bounds}});
    }
    return e;
}

stage_explanation explain_projections(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string kv_source = r.cross ? "x_kv" : r.N > 0 ? "x[:, N:]" : "x";
    e.words = say(r,
                  c.sources.from_projections ? "projections.words.given"
                  : r.cross          ? "projections.words.cross"
                                     : "projections.words.self",
                  {{"roles", say(r, "projections.roles")}});
    if (c.norm != norm_kind::none && !c.sources.from_projections) e.words += " " + say(r, "projections.words.norm");
    const std::string q_shape = r.bsd(r.Sq), k_shape = shape_text({r.B, r.Sn, r.Dg});
    if (c.sources.from_projections) {
        e.shapes = "q [B,Sq,D] = " + q_shape + "; k, v [B,Sk,D] = " + k_shape;
        e.torch = "q, k, v given by --q, --k, --v  # in a model: q = w_q(x); k = w_k(x); v = w_v(x)";
    } else {
        const auto product = [&](const std::string& in, const std::string& in_shape, std::size_t d_in,
                                 const std::string& letter, std::size_t d_out, const std::string& out_shape) {
            return in + " " + in_shape + " · w_" + letter + "ᵀ " + shape_text({d_in, d_out}) +
                   (c.qkv_bias ? " + b_" + letter + " " + shape_text({d_out}) : "") + " -> " + letter + " " + out_shape;
        };
        const std::string q_source = r.N > 0 ? "x[:, N:]" : "x";
        e.shapes = product(q_source, shape_text({r.B, r.Sq, r.Din}), r.Din, "q", r.D, q_shape) + "; " +
                   product(kv_source, shape_text({r.B, r.Sn, r.Dkv}), r.Dkv, "k", r.Dg, k_shape) + ", v likewise";
        e.einsum = "q: bqi,oi->bqo; k, v: bki,oi->bko";
        e.torch = std::string(r.N > 0 ? "x_new = x[:, N:]; " : "") + "q = w_q(" + (r.N > 0 ? "x_new" : "x") +
                  "); k = w_k(" + (r.N > 0 ? "x_new" : kv_source) + "); v = w_v(" + (r.N > 0 ? "x_new" : kv_source) + ")" +
                  (c.qkv_bias ? "  # each x @ w.weight.T + w.bias" : "  # each x @ w.weight.T (bias=False)");
    }
    const layout q = r.of(stage_id::projections, "q");
    const std::string strides_q = c.sources.from_projections  // no input stage has said what strides are
                                      ? strides_explained(r, "q", q, "bsd")
                                      : say(r, "projections.memory.q", {{"strides", stride_text(q)}});
    e.memory = say(r, "projections.memory", {{"strides_q", strides_q}});
    if (r.Sn != r.Sq || r.Dg != r.D)
        e.memory += " " + say(r, "projections.memory.kv", {{"strides", stride_text(r.of(stage_id::projections, "k"))}});
    e.why = say(r, "projections.why");
    return e;
}

// --- 4-5: into heads ------------------------------------------------------------------------

stage_explanation explain_view(const config&, const run_shapes& r) {
    stage_explanation e;
    std::string ranges;
    for (std::int64_t h = 0; h < std::min<std::int64_t>(r.H, 2); ++h)
        ranges += (h ? ", " : "") + std::string("head ") + str(h) + ": " +
                  (r.dk == 1 ? "feature " + str(h) : "features " + str(h * r.dk) + "-" + str(h * r.dk + r.dk - 1));
    if (r.H > 2) ranges += ", ...";
    e.words = say(r, "view.words", {{"ranges", ranges}});
    if (r.G == r.H && r.Sn == r.Sk) {
        e.shapes = qkv_shapes(r, r.bsd(r.Sq), r.bshd(r.Sq), r.bsd(r.Sk), r.bshd(r.Sk)) +
                   "   ([B,S,D] -> [B,S,H,dk]: " + str(r.D) + " = " + str(r.H) + " × " + str(r.dk) + ")";
        e.torch = "q = q.view(B, Sq, H, dk); k = k.view(B, Sk, H, dk); v = v.view(B, Sk, H, dk)";
    } else {  // k and v: the new tokens of a step, G heads
        e.shapes = "q " + r.bsd(r.Sq) + " -> " + r.bshd(r.Sq) + "; k, v " + shape_text({r.B, r.Sn, r.Dg}) + " -> " +
                   shape_text({r.B, r.Sn, r.G, r.dk}) + "   ([B,S,D] -> [B,S,H,dk]; k, v [B,S,G·dk] -> [B,S,G,dk])";
        const std::string S = r.N > 0 ? "Sq" : "Sk", G = r.G == r.H ? "H" : "G";
        e.torch = "q = q.view(B, Sq, H, dk); k = k.view(B, " + S + ", " + G + ", dk); v = v.view(B, " + S + ", " + G + ", dk)";
    }
    e.memory =
        say(r, "view.memory", {{"before", stride_text(r.of(stage_id::projections, "q"))}, {"after", stride_text(r.of(stage_id::view, "q"))}});
    e.why = say(r, r.H == 1 ? "view.why.one_head" : "view.why");
    return e;
}

/// Whether q, k and v are still contiguous after stage 5, and why not.
std::string transposed_contiguity(const run_shapes& r) {
    const bool q_ok = is_contiguous(r.of(stage_id::transpose, "q")), k_ok = is_contiguous(r.of(stage_id::transpose, "k"));
    if (q_ok && k_ok) return say(r, "transpose.contiguous");
    if (!q_ok && !k_ok) return say(r, "transpose.not_contiguous");
    return say(r, q_ok ? "transpose.q_contiguous" : "transpose.kv_contiguous");
}

stage_explanation explain_transpose(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words =
        say(r, "transpose.words", {{"q_matrix", shape_text({r.Sq, r.dk})}, {"k_matrix", shape_text({r.Sk, r.dk})}});
    e.shapes = r.G == r.H && r.Sn == r.Sk
                   ? qkv_shapes(r, r.bshd(r.Sq), r.bhsd(r.Sq), r.bshd(r.Sk), r.bhsd(r.Sk)) + "   ([B,S,H,dk] -> [B,H,S,dk])"
                   : "q " + r.bshd(r.Sq) + " -> " + r.bhsd(r.Sq) + "; k, v " + shape_text({r.B, r.Sn, r.G, r.dk}) +
                         " -> " + shape_text({r.B, r.G, r.Sn, r.dk}) + "   ([B,S,H,dk] -> [B,H,S,dk])";
    e.einsum = "bshd->bhsd";
    e.torch = "q = q.transpose(1, 2); k = k.transpose(1, 2); v = v.transpose(1, 2)";
    e.memory = say(r, "transpose.memory",
                   {{"before", stride_text(r.of(stage_id::view, "q"))},
                    {"after", stride_text(r.of(stage_id::transpose, "q"))},
                    {"contiguity", transposed_contiguity(r)}});
    e.why = say(r, "transpose.why");
    return e;
}

// --- 18-20: a decoding step's cache, and grouped-query heads ----------------------------------

stage_explanation explain_cache(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "cache.words");
    e.shapes = "x[:, :N] " + shape_text({r.B, r.N, r.Din}) + " · w_kᵀ " + shape_text({r.Din, r.Dg}) + " -> " +
               shape_text({r.B, r.N, r.Dg}) + " -> view " + shape_text({r.B, r.N, r.G, r.dk}) + " -> transpose " +
               shape_text({r.B, r.G, r.N, r.dk}) + ", v likewise";
    e.einsum = "bni,oi->bno";
    const std::string G = r.G == r.H ? "H" : "G";
    e.torch = "past_k = w_k(x[:, :N]).view(B, N, " + G + ", dk).transpose(1, 2); past_v = w_v(x[:, :N]).view(B, N, " +
              G + ", dk).transpose(1, 2)";
    if (c.pos == position_encoding::rope)  // a model's cache keeps its keys rotated, at positions 0..N-1
        e.torch += c.rope_style == rope_pairing::half
                       ? "; emb_past = torch.cat((torch.outer(torch.arange(0, N).float(), inv_freq),) * 2, -1); "
                         "past_k = past_k * emb_past.cos() + rotate_half(past_k) * emb_past.sin()"
                       : "; emb_past = torch.outer(torch.arange(0, N).float(), inv_freq).repeat_interleave(2, -1); "
                         "past_k = past_k * emb_past.cos() + rotate_every_two(past_k) * emb_past.sin()";
    e.torch += "  # N = " + str(r.N);
    const layout past = transposed(*viewed(contiguous_layout({r.B, r.N, r.Dg}), {r.B, r.N, r.G, r.dk}), 1, 2);
    e.memory = say(r, c.pos == position_encoding::rope ? "cache.memory.rope" : "cache.memory",
                   {{"strides", stride_text(past)}});
    // multiply-adds of the q, k, v projections: [tokens,Din] · [Din, D + 2·G·dk]
    const std::int64_t widths = r.D + 2 * r.Dg;
    const std::int64_t proj_step = r.B * r.Sq * r.Din * widths, proj_full = r.B * r.Sk * r.Din * widths;
    const std::int64_t cache_floats = 2 * r.B * r.G * r.N * r.dk;
    e.why = say(r, "cache.why", {{"proj_step", proj_step}, {"proj_full", proj_full},
                                 {"cache_floats", cache_floats}, {"s_cache_floats", plural(cache_floats)}});
    return e;
}

/// The full causal pass a decoding step's rows can be compared with: the run's own flags,
/// with --seq Sk in place of --seq Sq and without --past ("attn trace --seed 0 --batch 1 --seq
/// 5 ... --mask causal"), so that its last Sq rows are this step's. When the run reads a file or
/// draws by its sizes (a random mask, dropout), the command is said in words instead.
std::string full_pass_command(const config& c, const run_shapes& r) {
    const bool drawn = !c.sources.x_from_file && !c.sources.x_kv_from_file && !c.sources.params_from_file &&
                       c.sources.tokens.empty() && !c.sources.from_projections && !c.mask.from_file &&
                       !c.mask.key_padding && !c.mask.random && !c.dropout.applied();
    if (!drawn)
        return "the same command and files with --seq " + std::to_string(r.Sk) + " and without --past " +
               std::to_string(r.N);
    std::string cmd = "attn trace --seed " + std::to_string(c.seed) + " --batch " + std::to_string(c.batch) +
                      " --seq " + std::to_string(r.Sk) + " --d-model " + std::to_string(c.d_model) + " --heads " +
                      std::to_string(c.heads);
    if (c.d_in != c.d_model) cmd += " --d-in " + std::to_string(c.d_in);
    if (c.kv_heads > 0 && c.kv_heads != c.heads) cmd += " --kv-heads " + std::to_string(c.kv_heads);
    if (c.pos != position_encoding::none) cmd += " --pos " + std::string(position_encoding_name(c.pos));
    if (c.pos == position_encoding::rope) {
        if (c.rope_base != 10000.0) cmd += " --rope-base " + python_float_text(c.rope_base);
        if (c.rope_style != rope_pairing::half) cmd += " --rope-style " + std::string(rope_pairing_name(c.rope_style));
    }
    if (!c.qkv_bias) cmd += " --no-qkv-bias";
    if (!c.out_proj) cmd += " --no-out-proj";
    std::string kinds;  // the step's own masks: causal only when it is
    if (c.mask.causal) kinds += "causal";
    if (c.mask.padding) kinds += std::string(kinds.empty() ? "" : "+") + "padding";
    if (c.mask.window) kinds += std::string(kinds.empty() ? "" : "+") + "window";
    if (!kinds.empty()) cmd += " --mask " + kinds;
    if (c.mask.padding) {
        std::string lengths;
        for (const std::int64_t n : c.mask.lengths) lengths += (lengths.empty() ? "" : ",") + std::to_string(n);
        cmd += " --lengths " + lengths;
    }
    if (c.mask.window && c.mask.window_size) cmd += " --window " + std::to_string(*c.mask.window_size);
    if (!std::isinf(c.fill) || c.fill > 0) cmd += " --fill=" + fill_text(c);
    if (c.safe_softmax) cmd += " --safe-softmax";
    if (c.flash_block > 0) cmd += " --flash-block " + std::to_string(c.flash_block);
    if (c.mistake != mistake::none) cmd += " --mistake " + std::string(mistake_id(c.mistake));
    return cmd;
}

stage_explanation explain_append(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "append.words", {{"last", r.Sk - 1}});
    e.shapes = shape_text({r.B, r.G, r.N, r.dk}) + " + " + shape_text({r.B, r.G, r.Sq, r.dk}) + " -> " +
               shape_text({r.B, r.G, r.Sk, r.dk}) + "   ([B,G,N,dk] + [B,G,Sq,dk] -> [B,G,N+Sq,dk])";
    e.torch = "k = torch.cat((past_k, k), dim=2); v = torch.cat((past_v, v), dim=2)";
    e.memory = say(r, "append.memory", {{"strides", stride_text(contiguous_layout({r.B, r.G, r.Sk, r.dk}))},
                                        {"floats", 2 * r.B * r.G * r.Sk * r.dk}});
    const std::int64_t step = r.B * r.H * r.Sq * r.Sk, full = r.B * r.H * r.Sk * r.Sk;
    e.why = say(r, "append.why", {{"scores_step", step}, {"scores_full", full}, {"full_pass", full_pass_command(c, r)},
                                               {"causal", c.mask.causal ? " causal" : ""}});
    return e;
}

stage_explanation explain_repeat_kv(const config&, const run_shapes& r) {
    stage_explanation e;
    const std::size_t per = r.H / r.G;
    std::string groups;
    for (std::size_t g = 0; g < std::min<std::size_t>(r.G, 3); ++g)
        groups += (g ? "; " : "") + std::string("kv head ") + str(g) + " -> query heads " + str(g * per) +
                  (per > 1 ? "-" + str(g * per + per - 1) : "");
    if (r.G > 3) groups += "; ...";
    e.words = say(r, "repeat_kv.words", {{"groups", groups}});
    e.shapes = shape_text({r.B, r.G, r.Sk, r.dk}) + " -> " + shape_text({r.B, r.H, r.Sk, r.dk}) +
               "   ([B,G,Sk,dk] -> [B,H,Sk,dk]: each head " + str(per) + " times, one after another)";
    e.torch = "k = k.repeat_interleave(H // G, dim=1); v = v.repeat_interleave(H // G, dim=1)  # G = " + str(r.G);
    e.memory = say(r, "repeat_kv.memory", {{"strides", stride_text(contiguous_layout({r.B, r.H, r.Sk, r.dk}))},
                                           {"floats", 2 * r.B * r.H * r.Sk * r.dk}});
    e.why = say(r, "repeat_kv.why", {{"cache_floats", 2 * r.G * r.dk}, {"full_floats", 2 * r.H * r.dk}});
    return e;
}

// --- 6-11: scores and weights ---------------------------------------------------------------

/// What matmul copies before its batched product (both operands, one, or none),
/// and the new memory it writes.
std::string matmul_memory(const run_shapes& r, const layout& a, const std::string& a_name, const layout& b,
                          const std::string& b_name, const std::string& result, const layout& result_layout) {
    const bool copy_a = r.matmul_copies(a), copy_b = r.matmul_copies(b);
    const auto block = [&](const layout& t) { return shape_text({r.B * r.H, t.shape[2], t.shape[3]}); };
    std::string copies;
    if (copy_a && copy_b)
        copies = say(r, "matmul.copies_both",
                     {{"a", a_name}, {"a_blocks", block(a)}, {"b", b_name}, {"b_blocks", block(b)}});
    else if (copy_a || copy_b)
        copies = say(r, "matmul.copies_one",
                     {{"copied", copy_a ? a_name : b_name},
                      {"blocks", copy_a ? block(a) : block(b)},
                      {"other", copy_a ? b_name : a_name}});
    else if (r.B == 1 || r.H == 1)
        copies = say(r, "matmul.in_place.merged", {{"a", a_name}, {"b", b_name}, {"one", r.B == 1 ? "B" : "H"}});
    else
        copies = say(r, "matmul.in_place", {{"a", a_name}, {"b", b_name}});
    return say(r, "matmul", {{"copies", copies}, {"result", result}, {"strides", stride_text(result_layout)}});
}

stage_explanation explain_scores(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "scores.words", {{"matrix", shape_text({r.Sq, r.Sk})}});
    e.shapes = r.bhsd(r.Sq) + " · " + shape_text({r.B, r.H, r.dk, r.Sk}) + " -> " + r.plane() +
               "   ([B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk])";
    e.einsum = "bhqd,bhkd->bhqk";
    e.torch = "scores = q @ k.transpose(-2, -1)";
    e.memory = say(r, "scores.memory",
                   {{"strides", stride_text(r.k_turned())},
                    {"matmul", matmul_memory(r, r.read_by(stage_id::scores, "q"), "q", r.k_turned(), "kᵀ", "scores",
                                             contiguous_layout({r.B, r.H, r.Sq, r.Sk}))}});
    e.why = say(r, "scores.why");
    return e;
}

stage_explanation explain_scaled(const config&, const run_shapes& r) {
    stage_explanation e;
    const std::string root = short_number(std::sqrt(static_cast<float>(r.dk)));
    e.words = say(r, "scaled.words", {{"root", root}});
    e.shapes = r.plane() + " / " + root + " -> " + r.plane();
    e.torch = "scaled = scores / math.sqrt(dk)";
    e.memory = say(r, "scaled.memory");
    e.why = say(r, "scaled.why");
    return e;
}

// --- 25: a model's token embeddings (--tokens) ---------------------------------------------

stage_explanation explain_embed(const config& c, const run_shapes& r) {
    stage_explanation e;
    const bool bert = c.sources.model_arch == "bert", llama = c.sources.model_arch == "llama";
    e.words = say(r, llama ? "embed.words.llama" : bert ? "embed.words.bert" : "embed.words.gpt2");
    e.shapes = "ids [" + str(r.Sq) + "] -> token " + shape_text({r.B, r.Sq, r.Din}) +
               (llama ? std::string() : "; position " + shape_text({r.Sq, r.Din})) +
               (bert ? "; token_type " + shape_text({r.Sq, r.Din}) : std::string()) + " -> x " +
               shape_text({r.B, r.Sq, r.Din});
    e.torch = llama ? "x = embed_tokens.weight[ids]"
                    : bert ? "x = (word_embeddings.weight[ids] + token_type_embeddings.weight[0]) + "
                             "position_embeddings.weight[torch.arange(S)]"
                           : "x = wte.weight[ids] + wpe.weight[torch.arange(S)]";
    e.memory = say(r, "embed.memory");
    e.why = say(r, "embed.why");
    return e;
}

// --- 24: a model layer's norm before attention ----------------------------------------------

stage_explanation explain_norm(const config& c, const run_shapes& r) {
    stage_explanation e;
    const bool rms = c.norm == norm_kind::rms_norm;
    const std::size_t S = r.N > 0 ? r.Sk : r.Sq;
    e.words = say(r, rms ? "norm.words.rms_norm" : "norm.words.layer_norm");
    e.shapes = "x " + shape_text({r.B, S, r.Din}) + " -> x " + shape_text({r.B, S, r.Din}) + ", over the last axis; weight" +
               (rms ? " " : ", bias ") + shape_text({r.Din});
    e.torch = "x = " + torch_norm_line(c.norm, "x", "weight", "bias", static_cast<std::int64_t>(r.Din), c.norm_eps);
    e.memory = say(r, "norm.memory");
    e.why = say(r, "norm.why");
    return e;
}

// --- 16, 17, 21, 22: positions (--pos) -------------------------------------------------------

stage_explanation explain_positions(const config&, const run_shapes& r) {
    stage_explanation e;
    // x holds positions 0..S-1: the Sq tokens, or in a decoding step all N + Sq (the cache's too)
    const std::size_t S = r.N > 0 ? r.Sk : r.Sq;
    e.words = say(r, "positions.words", {{"first", 0}, {"last", static_cast<std::int64_t>(S) - 1}});
    e.shapes = "pe " + shape_text({S, r.Din}) + " + x " + shape_text({r.B, S, r.Din}) + " -> " +
               shape_text({r.B, S, r.Din}) + "   ([S,Din] broadcast over B)" +
               (r.cross ? "; x_kv " + shape_text({r.B, r.Sk, r.Dkv}) + " + pe_kv " + shape_text({r.Sk, r.Dkv}) : "");
    // the Annotated Transformer's PositionalEncoding, rows first..first+S-1 of its table
    const auto table = [&](const std::string& pe, const std::string& x, std::int64_t from, std::size_t S, std::size_t W) {
        const std::string width = str(static_cast<std::int64_t>(W));
        return "position = torch.arange(" + str(from) + ", " + str(from + static_cast<std::int64_t>(S)) +
               ").unsqueeze(1); div_term = torch.exp(torch.arange(0, " + width + ", 2) * -(math.log(10000.0) / " +
               width + ")); " + pe + " = torch.zeros(" + str(static_cast<std::int64_t>(S)) + ", " + width + "); " + pe +
               "[:, 0::2] = torch.sin(position * div_term); " + pe + "[:, 1::2] = torch.cos(position * div_term); " + x +
               " = " + x + " + " + pe;
    };
    e.torch = table("pe", "x", 0, S, r.Din);
    if (r.cross) e.torch += "; " + table("pe_kv", "x_kv", 0, r.Sk, r.Dkv);
    e.memory = say(r, "positions.memory");
    e.why = say(r, "positions.why");
    return e;
}

/// The score of the same q and k put at positions i and j: q_i · k_j after rope (this run's dk,
/// base and pairing). q = (1, 2, 3, ...), k = (-1, 0, 1, -1, 0, 1, ...), one head.
float rope_demo_score(const config& c, std::int64_t i, std::int64_t j) {
    const auto dk = static_cast<std::size_t>(c.head_dim());
    if (dk < 2 || dk % 2 != 0) return 0.0f;  // no pairs to rotate (validate refuses --pos rope then)
    const auto at = [&](std::int64_t position, bool alternate) {
        xt::xarray<float> v = xt::xarray<float>::from_shape({1, 1, 1, dk});
        for (std::size_t d = 0; d < dk; ++d)
            v(0, 0, 0, d) = alternate ? static_cast<float>(d % 3) - 1.0f : static_cast<float>(d + 1);
        const tensor t("v", {"batch", "head", "seq", "head_dim"}, std::move(v));
        return rotate(t, make_rope_angles(c, position, 1, c.rope_style), c.rope_style);
    };
    const xt::xarray<float> q = at(i, false), k = at(j, true);
    float score = 0.0f;
    for (std::size_t d = 0; d < dk; ++d) score += q.data()[d] * k.data()[d];
    return score + 0.0f;  // no -0
}

/// config.json's rope_scaling as the torch lines of Hugging Face's modeling_rope_utils; "" for none.
std::string rope_scaling_line(const rope_scaling_spec& s) {
    const auto n = [](double x) { return python_number(x); };
    switch (s.type) {
        case rope_scaling_spec::kind::none: return "";
        case rope_scaling_spec::kind::linear: return "inv_freq /= " + n(s.factor) + "; ";
        case rope_scaling_spec::kind::llama3:
            return "w = 2 * math.pi / inv_freq; l = torch.where(w > " + n(s.original_max_positions / s.low_freq_factor) +
                   ", inv_freq / " + n(s.factor) + ", inv_freq); sf = (" + n(s.original_max_positions) + " / w - " +
                   n(s.low_freq_factor) + ") / (" + n(s.high_freq_factor - s.low_freq_factor) +
                   "); inv_freq = torch.where(~(w < " + n(s.original_max_positions / s.high_freq_factor) + ") * ~(w > " +
                   n(s.original_max_positions / s.low_freq_factor) + "), (1 - sf) * l / " + n(s.factor) +
                   " + sf * l, l); ";
    }
    return "";
}

stage_explanation explain_rope(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::int64_t first = first_query_position(c);
    const bool half = c.rope_style == rope_pairing::half;
    const std::vector<float> inv = rope_inverse_frequencies(c.rope_base, r.dk, c.rope_scaling);
    e.words = say(r, half ? "rope.words.half" : "rope.words.interleaved",
                  {{"first", first}, {"last", first + static_cast<std::int64_t>(r.Sq) - 1}, {"base", shortest_text(c.rope_base)},
                   {"pairs", r.dk / 2}, {"fast", inv.empty() ? "1" : short_number(inv.front())},
                   {"slow", inv.empty() ? "1" : short_number(inv.back())}});
    e.shapes = "cos, sin " + shape_text({r.Sq, r.dk}) + "; q " + r.bhsd(r.Sq) + " · cos + rotated(q) · sin -> " +
               r.bhsd(r.Sq) + "; k " + shape_text({r.B, r.G, r.N > 0 ? r.Sq : r.Sk, r.dk}) +
               " likewise; v is not rotated";
    e.torch = "inv_freq = 1.0 / (" + python_number(c.rope_base) + " ** (torch.arange(0, dk, 2).float() / dk)); " +
              rope_scaling_line(c.rope_scaling) + "freqs = torch.outer(torch.arange(" + str(first) + ", " + str(first + static_cast<std::int64_t>(r.Sq)) +
              ").float(), inv_freq); " +
              (half ? "emb = torch.cat((freqs, freqs), -1); cos, sin = emb.cos(), emb.sin(); "
                      "rotate_half = lambda x: torch.cat((-x[..., dk//2:], x[..., :dk//2]), -1); "
                      "q = q * cos + rotate_half(q) * sin; k = k * cos + rotate_half(k) * sin"
                    : "emb = freqs.repeat_interleave(2, -1); cos, sin = emb.cos(), emb.sin(); "
                      "rotate_every_two = lambda x: torch.stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2); "
                      "q = q * cos + rotate_every_two(q) * sin; k = k * cos + rotate_every_two(k) * sin");
    e.memory = say(r, "rope.memory");
    const auto score = [&](std::int64_t i, std::int64_t j) { return short_number(rope_demo_score(c, i, j)); };
    e.why = say(r, "rope.why", {{"s31", score(3, 1)}, {"s75", score(7, 5)}, {"s1210", score(12, 10)},
                                {"s33", score(3, 3)}, {"s13", score(1, 3)}});
    return e;
}

stage_explanation explain_alibi(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::vector<float> slopes = alibi_slopes(c.heads);
    std::vector<std::string> listed;
    for (std::size_t h = 0; h < slopes.size() && h < 8; ++h) listed.push_back(short_number(slopes[h]));
    if (slopes.size() > 8) listed.push_back("...");
    const bool power_of_2 = (r.H & (r.H - 1)) == 0;
    e.words = say(r, power_of_2 ? "alibi.words" : "alibi.words.not_power_of_2",
                  {{"slopes", join(listed, ", ")}, {"last_key", r.Sk - 1},
                   {"far", short_number(alibi_bias_at(slopes.front(), static_cast<std::int64_t>(r.Sk) - 1, 0))}});
    e.shapes = "slopes [" + str(r.H) + "] · (j - i) " + shape_text({r.Sq, r.Sk}) + " -> bias " +
               shape_text({1, r.H, r.Sq, r.Sk});
    // Press et al.'s get_slopes, as lambdas (get_slopes calls itself through its name)
    e.torch = "slopes_power_of_2 = lambda n: [2 ** (-2 ** -(math.log2(n) - 3)) * (2 ** (-2 ** -(math.log2(n) - 3))) ** i "
              "for i in range(n)]; get_slopes = lambda n: slopes_power_of_2(n) if math.log2(n).is_integer() else "
              "slopes_power_of_2(2 ** math.floor(math.log2(n))) + get_slopes(2 ** (math.floor(math.log2(n)) + 1))[0::2]"
              "[:n - 2 ** math.floor(math.log2(n))]; slopes = torch.Tensor(get_slopes(" + str(r.H) + ")); i = torch.arange(" +
              str(first_query_position(c)) + ", " + str(first_query_position(c) + static_cast<std::int64_t>(r.Sq)) +
              ").unsqueeze(1); j = torch.arange(Sk).unsqueeze(0); bias = (slopes.view(H, 1, 1) * (j - i).float()).unsqueeze(0)";
    e.memory = say(r, "alibi.memory");
    e.why = say(r, "alibi.why");
    return e;
}

stage_explanation explain_biased(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "biased.words");
    e.shapes = r.plane() + " + " + shape_text({1, r.H, r.Sq, r.Sk}) + " -> " + r.plane() + "   (the bias broadcast over B)";
    e.torch = "biased = scaled + bias";
    e.memory = say(r, "biased.memory");
    e.why = say(r, "biased.why");
    return e;
}

/// The mask's terms in PyTorch, in the order mask_formula lists them, for `mask = a & b`.
std::vector<std::string> mask_torch_terms(const config& c, const run_shapes& r) {
    const mask_spec& m = c.mask;
    std::vector<std::string> terms;
    if (m.causal) {  // lower-right: the diagonal moved by Sk - Sq, so that the last query sees every key
        const bool shifted = r.Sq != r.Sk && m.causal_align == causal_alignment::lower_right;
        const std::int64_t diagonal = static_cast<std::int64_t>(r.Sk) - static_cast<std::int64_t>(r.Sq);
        terms.push_back("torch.tril(torch.ones(" + str(r.Sq) + ", " + str(r.Sk) + ", dtype=torch.bool)" +
                        (shifted ? ", diagonal=" + std::to_string(diagonal) : "") + ")");
    }
    if (m.padding)
        terms.push_back("(torch.arange(" + str(r.Sk) + ") < torch.tensor([" + join(m.lengths, ", ") + "]).view(" +
                        str(r.B) + ", 1, 1, 1))");
    if (m.window)
        terms.push_back("((torch.arange(" + (r.N > 0 ? str(r.N) + ", " + str(r.N + r.Sq) : str(r.Sq)) +  // positions
                        ")[:, None] - torch.arange(" + str(r.Sk) + ")).abs() <= " +
                        (m.window_size ? str(*m.window_size) : "W") + ")");
    if (m.random)
        terms.push_back("(torch.rand(" + str(r.B) + ", 1, " + str(r.Sq) + ", " + str(r.Sk) + ") < " +
                        shortest_text(m.random_keep) + ")");
    if (m.from_file) {
        // [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk] as [B or 1, 1, Sq, Sk], so that it broadcasts over the heads
        const std::string file_view = ".view(-1, 1, " + str(r.Sq) + ", " + str(r.Sk) + ")";
        if (m.file_convention == mask_convention::mha)
            terms.push_back("~mask_file.bool()" + file_view);
        else if (m.file_convention == mask_convention::additive)
            terms.push_back("(mask_file == 0)" + file_view);
        else
            terms.push_back("mask_file.bool()" + file_view);
    }
    if (m.key_padding) {
        const std::string view = ".view(" + str(r.B) + ", 1, 1, " + str(r.Sk) + ")";
        if (m.key_padding_convention == mask_convention::mha)
            terms.push_back("~key_padding_mask" + view);
        else if (m.key_padding_convention == mask_convention::additive)
            terms.push_back("(key_padding_mask" + view + " == 0)");
        else
            terms.push_back("key_padding_mask.bool()" + view);
    }
    return terms;
}

stage_explanation explain_mask(const config& c, const run_shapes& r) {
    const mask_spec& m = c.mask;
    stage_explanation e;
    std::vector<std::string> rules, reasons;
    // each kind of mask: its rule ("mask.rule.KIND") and the reason for it ("mask.reason.KIND")
    const auto add = [&](const std::string& rule, const std::string& reason, std::vector<prose_arg> values = {}) {
        rules.push_back(say(r, "mask.rule." + rule, values));
        reasons.push_back(say(r, "mask.reason." + reason, values));
    };
    if (m.causal && r.Sq != r.Sk && m.causal_align == causal_alignment::lower_right)
        add("causal.lower_right", "causal",
            {{"shift", r.Sk > r.Sq ? "+ " + str(r.Sk - r.Sq) : "- " + str(r.Sq - r.Sk)}});
    else if (m.causal)
        add(r.Sq != r.Sk ? "causal.unequal" : "causal", "causal");
    if (m.padding) add("padding", "padding", {{"lengths", join(m.lengths, ",")}});
    if (m.window) add("window", "window", {{"W", m.window_size ? str(*m.window_size) : "W"}});
    if (m.random) add("random", "random", {{"keep", short_number(m.random_keep)}, {"seed", m.random_seed}});
    if (m.from_file) add("mask_file." + std::string(mask_convention_name(m.file_convention)), "mask_file");
    if (m.key_padding)
        add("key_padding." + std::string(mask_convention_name(m.key_padding_convention)), "key_padding");
    e.words = say(r, rules.size() > 1 ? "mask.words.several" : "mask.words", {{"rules", join(rules, "; ")}});
    e.shapes = say(r, "mask.shapes",
                   {{"mask_shape", shape_text({r.B, 1, r.Sq, r.Sk})}, {"matrix", shape_text({r.Sq, r.Sk})}});
    e.torch = (m.random ? "torch.manual_seed(" + str(m.random_seed) + "); " : std::string()) + "mask = " +
              join(mask_torch_terms(c, r), " & ");
    e.memory = say(r, "mask.memory");
    e.why = say(r, "mask.why", {{"reasons", join(reasons, "; ")}});
    return e;
}

stage_explanation explain_masked(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string fill = fill_text(c);
    const bool inf = std::isinf(c.fill);
    e.words = say(r, "masked.words", {{"fill", fill}});
    e.shapes = say(r, "masked.shapes", {{"mask_shape", shape_text({r.B, 1, r.Sq, r.Sk})}});
    e.torch = std::string("masked = ") + (c.pos == position_encoding::alibi ? "biased" : "scaled") + ".masked_fill(~mask, " + python_fill(c) + ")";
    e.memory = say(r, "masked.memory");
    // -inf gives exactly 0; a large negative fill underflows to 0; a small one is only a number
    e.why = say(r, inf ? "masked.why.inf" : c.fill <= -1e4f ? "masked.why.large" : "masked.why.small",
                {{"fill", fill}});
    if ((c.sources.model_arch == "gpt2" || c.sources.model_arch == "llama") && c.fill == -std::numeric_limits<float>::max())
        e.why += " " + say(r, "masked.why.model." + c.sources.model_arch);
    return e;
}

stage_explanation explain_softmax(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::int64_t rows = r.B * r.H * r.Sq;
    e.words = say(r, "softmax.words");
    e.shapes = say(r, "softmax.shapes", {{"rows", rows}, {"s_rows", plural(rows)}});
    const std::string in = softmax_input(c);
    e.torch = "weights = torch.softmax(" + in + ", dim=-1)";
    if (c.safe_softmax)  // torch._safe_softmax: a row that is all -inf gets 0 weights, not nan
        e.torch += ".masked_fill((" + in + " == float('-inf')).all(dim=-1, keepdim=True), 0.0)";
    e.memory = say(r, "softmax.memory");
    e.why = say(r, "softmax.why");
    return e;
}

stage_explanation explain_dropout(const config& c, const run_shapes& r) {
    stage_explanation e;
    const double p = c.dropout.p;
    const std::string keep_p = short_number(1.0 - p);
    if (p >= 1.0)
        e.words = say(r, "dropout.words.all");
    else
        e.words = say(r, "dropout.words",
                      {{"keep_p", keep_p},
                       {"scale", short_number(1.0 / (1.0 - p))},
                       {"p", short_number(p)},
                       {"seed", c.dropout.seed}});
    e.shapes = r.plane() + " · keep " + r.plane() + " / " + keep_p + " -> " + r.plane();
    // attn's keep mask, not nn.Dropout's (whose bernoulli_ draws differ between builds)
    e.torch = "torch.manual_seed(" + str(c.dropout.seed) + "); keep = torch.rand(B, H, Sq, Sk) < 1 - " +
              shortest_text(p) + "; weights = weights * (keep / (1 - " + shortest_text(p) + "))";
    e.memory = say(r, "dropout.memory");
    e.why = say(r, "dropout.why");
    return e;
}

// --- 12-15: back to one vector per token ----------------------------------------------------

stage_explanation explain_context(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, c.dropout.applied() ? "context.words.dropout" : "context.words",
                  {{"matrix", shape_text({r.Sq, r.dk})}});
    e.shapes =
        r.plane() + " · " + r.bhsd(r.Sk) + " -> " + r.bhsd(r.Sq) + "   ([B,H,Sq,Sk] · [B,H,Sk,dk] -> [B,H,Sq,dk])";
    e.einsum = "bhqk,bhkd->bhqd";
    e.torch = "context = weights @ v";
    e.memory = say(r, "context.memory",
                   {{"matmul", matmul_memory(r, contiguous_layout({r.B, r.H, r.Sq, r.Sk}), "weights", r.read_by(stage_id::context, "v"), "v",
                                             "context", r.of(stage_id::context, "context"))}});
    e.why = say(r, "context.why");
    return e;
}

stage_explanation explain_merge(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "merge.words");
    e.shapes = r.bhsd(r.Sq) + " -> " + r.bshd(r.Sq) + "   ([B,H,Sq,dk] -> [B,Sq,H,dk])";
    e.einsum = "bhqd->bqhd";
    e.torch = "merged = context.transpose(1, 2)";
    const layout merged = r.of(stage_id::merge, "context");
    const std::string contiguity = is_contiguous(merged)
                                       ? say(r, "merge.memory.contiguous")
                                       : say(r, "merge.memory.not_contiguous", {{"apart", merged.strides[2]}});
    e.memory = say(r, "merge.memory",
                   {{"before", stride_text(r.of(stage_id::context, "context"))}, {"after", stride_text(merged)}, {"contiguity", contiguity}});
    if (!viewed(merged, {r.B, r.Sq, r.D})) e.memory += " " + say(r, "merge.memory.no_view");
    e.why = say(r, "merge.why");
    return e;
}

stage_explanation explain_concat(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "concat.words");
    e.shapes = r.bshd(r.Sq) + " -> " + r.bsd(r.Sq) + "   ([B,Sq,H,dk] -> [B,Sq,D]: " + str(r.H) + " × " + str(r.dk) +
               " = " + str(r.D) + ")";
    e.torch = "concat = merged.contiguous().view(B, Sq, D)";
    const layout merged = r.of(stage_id::merge, "context");
    const std::string concat_strides = stride_text(contiguous_layout({r.B, r.Sq, r.D}));
    if (is_contiguous(merged)) {
        e.memory = say(r, "concat.memory.view", {{"strides", concat_strides}});
    } else {
        e.memory = say(r, "concat.memory.copy",
                       {{"order", shape_text(merged.shape)},
                        {"copy_strides", stride_text(contiguous_layout(merged.shape))},
                        {"shape", r.bsd(r.Sq)},
                        {"strides", concat_strides}});
        if (viewed(merged, {r.B, r.Sq, r.D})) e.memory += " " + say(r, "concat.memory.copy.strided_view");
    }
    e.why = say(r, c.out_proj ? "concat.why" : "concat.why.no_out_proj");
    return e;
}

stage_explanation explain_output(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, "output.words");
    e.shapes = "concat " + r.bsd(r.Sq) + " · w_oᵀ " + shape_text({r.D, r.D}) + " + b_o " + shape_text({r.D}) +
               " -> out " + r.bsd(r.Sq);
    e.einsum = "bqi,oi->bqo";
    e.torch = "out = w_o(concat)  # concat @ w_o.weight.T + w_o.bias";
    e.memory = say(r, "output.memory", {{"shape", r.bsd(r.Sq)}});
    e.why = say(r, "output.why");
    if (!c.sources.from_projections && r.Din == r.D) e.why += " " + say(r, "output.why.residual");
    return e;
}

// --- 15a-15d: the rest of a model's block ----------------------------------------------------

/// The norm of the block's stages, in PyTorch: F.layer_norm or the RMSNorm line.
std::string block_norm_line(const config& c, const std::string& x, const std::string& weight, const std::string& bias) {
    return torch_norm_line(c.block.norm, x, weight, bias, c.d_model, c.block.eps);
}

stage_explanation explain_residual(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, c.block.post_norm ? "residual.words.post_norm" : "residual.words");
    e.shapes = "x " + r.bsd(r.Sq) + " + out " + r.bsd(r.Sq) + " -> x " + r.bsd(r.Sq);
    e.einsum = "";
    e.torch = "x = out + x  # GPT2Block: hidden_states = attn_output + residual";
    e.memory = say(r, "residual.memory");
    e.why = say(r, "residual.why");
    return e;
}

stage_explanation explain_mlp_norm(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, c.block.post_norm ? "mlp_norm.words.post_norm" : "mlp_norm.words");
    e.shapes = "x " + r.bsd(r.Sq) + " -> x " + r.bsd(r.Sq) + ", over the last axis; weight" +
               (c.block.norm == norm_kind::rms_norm ? " " : ", bias ") + shape_text({r.D});
    e.torch = "h = " + block_norm_line(c, "x", "weight", "bias");
    e.memory = say(r, "norm.memory");
    e.why = say(r, "mlp_norm.why");
    return e;
}

stage_explanation explain_mlp(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::size_t F = static_cast<std::size_t>(c.block.width);
    const std::string act = c.block.act == activation::silu        ? "torch.nn.functional.silu"
                            : c.block.act == activation::gelu_erf ? "torch.nn.functional.gelu"
                                                                  : "gelu_new";
    e.words = say(r, c.block.gated ? "mlp.words.gated" : "mlp.words", {{"F", F}, {"act", std::string(activation_name(c.block.act))}});
    const std::string up = "h " + r.bsd(r.Sq) + " · w_upᵀ " + shape_text({r.D, F}) + " -> " + shape_text({r.B, r.Sq, F});
    e.shapes = (c.block.gated ? up + " (and gate, the same)" : up) + "; hidden " + shape_text({r.B, r.Sq, F}) + " · w_downᵀ " +
               shape_text({F, r.D}) + " -> out " + r.bsd(r.Sq);
    e.einsum = "bsd,fd->bsf then bsf,df->bsd";
    e.torch = c.block.gated ? "out = down_proj(" + act + "(gate_proj(h)) * up_proj(h))"
                            : "out = down(" + act + "(up(h)))" +
                                  (c.block.act == activation::gelu_tanh
                                       ? "  # gelu_new(x) = 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))"
                                       : "");
    e.memory = say(r, "mlp.memory", {{"F", F}});
    e.why = say(r, "mlp.why");
    return e;
}

stage_explanation explain_block(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = say(r, c.block.post_norm ? "block.words.post_norm" : "block.words");
    e.shapes = c.block.post_norm ? "sum = mlp.out " + r.bsd(r.Sq) + " + h " + r.bsd(r.Sq) + ", x = norm(sum) " + r.bsd(r.Sq)
                                 : "x " + r.bsd(r.Sq) + " + mlp.out " + r.bsd(r.Sq) + " -> x " + r.bsd(r.Sq);
    e.torch = c.block.post_norm ? "x = " + block_norm_line(c, "out + h", "output_norm.weight", "output_norm.bias")
                                : "x = x + out  # residual + feed_forward_hidden_states";
    e.memory = say(r, "residual.memory");
    e.why = say(r, "block.why");
    return e;
}

// --- 23: flash, the tiled softmax -------------------------------------------------------------

stage_explanation explain_flash(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::size_t N = static_cast<std::size_t>(std::max<std::int64_t>(c.flash_block, 1));
    const std::size_t nb = (r.Sk + N - 1) / N, last = r.Sk - (nb - 1) * N;
    const std::string blocks = str(nb) + " block" + plural(nb) + (last != N ? " (the last of " + str(last) + ")" : "");
    e.words = say(r, "flash.words", {{"N", N}, {"blocks", blocks}, {"logits", c.mask.any() ? "masked" : "scaled"}}) +
              " " + say(r, "flash.chunks");
    e.shapes = "per block j: q " + r.bhsd(r.Sq) + " · k_jᵀ " + shape_text({r.B, r.H, r.dk, std::min(N, r.Sk)}) + " -> S_j " +
               shape_text({r.B, r.H, r.Sq, std::min(N, r.Sk)}) + ", exp(S_j - m) · v_j " +
               shape_text({r.B, r.H, std::min(N, r.Sk), r.dk}) + " -> " + r.bhsd(r.Sq) + "; m, l, rescale " +
               shape_text({r.B, r.H, r.Sq, nb}) + ", acc " + shape_text({r.B, r.H, r.Sq, nb, r.dk});
    e.einsum = "bhqd,bhkd->bhqk per block; bhqk,bhkd->bhqd";
    e.torch = "for j in range(0, Sk, " + str(N) +
              "): s = (q @ k[:, :, j:j+N].transpose(-2, -1)) / math.sqrt(dk)" + (c.mask.any() ? "; s = s.masked_fill(~mask[..., j:j+N], fill)" : "") +
              "; m_new = torch.maximum(m, s.amax(-1)); m_safe = torch.where(m_new == -inf, 0, m_new); "
              "rescale = torch.exp(m - m_safe); p = torch.exp(s - m_safe[..., None]); l = rescale * l + sum(p.unbind(-1)); "
              "acc = rescale[..., None] * acc + p @ v[:, :, j:j+N]; m = m_new.  Then context = acc / l[..., None]";
    const auto bytes = [](std::size_t floats) { return format_bytes(static_cast<std::uint64_t>(floats) * 4); };
    e.memory = say(r, "flash.memory",
                   {{"N", N},
                    {"plane_bytes", bytes(r.B * r.H * r.Sq * r.Sk)},
                    {"block_bytes", bytes(r.B * r.H * (r.Sq * std::min(N, r.Sk) + 2 * r.Sq))},
                    {"stage_bytes", bytes(r.B * r.H * r.Sq * nb * (3 + r.dk))},
                    {"nb", nb}});
    e.why = say(r, "flash.why");
    return e;
}

/// "-0.4121": a number of the walkthrough, 4 significant digits.
std::string walk_number(float v) {
    return significant_text(v, 4);
}

/// The flash recurrence for the last query row of batch 0, head 0, with the stage's values.
std::string flash_row(const config& c, const stage& s) {
    const tensor& m = s.at("m");
    const tensor& l = s.at("l");
    const tensor& rescale = s.at("rescale");
    const auto& shape = m.values.shape();
    if (shape.size() != 4 || shape[0] == 0 || shape[1] == 0 || shape[2] == 0) return {};
    const std::size_t Sq = shape[2], nb = shape[3], i = Sq - 1;
    const std::size_t N = static_cast<std::size_t>(std::max<std::int64_t>(c.flash_block, 1));
    const auto at = [&](const tensor& t, std::size_t j) {
        return t.values.data()[static_cast<std::ptrdiff_t>(i) * t.strides[2] + static_cast<std::ptrdiff_t>(j) * t.strides[3]];
    };
    std::string text = "batch 0, head 0, query " + str(i) + ": m = -inf, l = 0, acc = 0";
    for (std::size_t j = 0; j < nb; ++j) {
        const std::size_t first = j * N, end = std::min<std::size_t>(first + N, static_cast<std::size_t>(c.kv_seq));
        text += "; block " + str(j) + (end - first > 1 ? " (keys " + str(first) + "-" + str(end - 1) : " (key " + str(first)) + "): m = " +
                walk_number(at(m, j)) + ", rescale = exp(" + walk_number(j == 0 ? -INFINITY : at(m, j - 1)) + " - " +
                walk_number(at(m, j)) + ") = " + walk_number(at(rescale, j)) + ", l = " +
                walk_number(j == 0 ? 0.0f : at(l, j - 1)) + "·" + walk_number(at(rescale, j)) + " + Σexp(S_j - m) = " +
                walk_number(at(l, j));
    }
    text += "; context = acc / " + walk_number(at(l, nb - 1)) + " (max_abs_diff from the exact context: " +
            (s.figures.empty() ? std::string("-") : walk_number(static_cast<float>(s.figures[0].value))) + ")";
    return text;
}

using explainer = stage_explanation (*)(const config&, const run_shapes&);

struct stage_explainer {
    stage_id id;
    explainer explain;
};

// one row per stage, in stage_id order (one_row_per_stage)
constexpr std::array<stage_explainer, stage_count> explainers{{
    {stage_id::embed, explain_embed},
    {stage_id::input, explain_input},
    {stage_id::params, explain_params},
    {stage_id::norm, explain_norm},
    {stage_id::positions, explain_positions},
    {stage_id::projections, explain_projections},
    {stage_id::view, explain_view},
    {stage_id::transpose, explain_transpose},
    {stage_id::rope, explain_rope},
    {stage_id::cache, explain_cache},
    {stage_id::append, explain_append},
    {stage_id::repeat_kv, explain_repeat_kv},
    {stage_id::scores, explain_scores},
    {stage_id::scaled, explain_scaled},
    {stage_id::alibi, explain_alibi},
    {stage_id::biased, explain_biased},
    {stage_id::mask, explain_mask},
    {stage_id::masked, explain_masked},
    {stage_id::softmax, explain_softmax},
    {stage_id::dropout, explain_dropout},
    {stage_id::context, explain_context},
    {stage_id::flash, explain_flash},
    {stage_id::merge, explain_merge},
    {stage_id::concat, explain_concat},
    {stage_id::output, explain_output},
    {stage_id::residual, explain_residual},
    {stage_id::mlp_norm, explain_mlp_norm},
    {stage_id::mlp, explain_mlp},
    {stage_id::block, explain_block},
}};
static_assert(one_row_per_stage(explainers));

}  // namespace

stage_explanation explain_stage(const config& c, stage_id id) {
    stage_explanation e = explainers[static_cast<std::size_t>(id)].explain(c, run_shapes(c));
    e.symbols = stage_formula(c, info_of(id).name);
    return e;
}

stage_explanation explain_stage(const config& c, std::string_view name) {
    const stage_info* info = find_stage_info(name);
    return info != nullptr ? explain_stage(c, info->id) : stage_explanation{};
}

stage_explanation explain_stage(const config& c, const stage& s) {
    stage_explanation e = explain_stage(c, s.id());
    if (s.id() == stage_id::flash && !s.in_rows()) e.row = flash_row(c, s);
    return e;
}

std::vector<explanation_line> explanation_lines(const stage_explanation& e) {
    std::vector<explanation_line> lines;
    const auto add = [&](const char* label, const std::string& text) {
        if (!text.empty()) lines.push_back({label, text});
    };
    add("what", e.words);
    add("shape", e.shapes);
    add("einsum", e.einsum);
    add("torch", e.torch);
    add("memory", e.memory);
    add("why", e.why);
    add("row", e.row);
    return lines;
}

namespace {

/// --tokens: " The tokens are ids 3, 6, 7", or with --vocab " The tokens (query and key 0, 1, ...) are
/// The, Ġrobot, Ġreads (as the tokenizer writes them)."; "" without --tokens.
std::string tokens_sentence(const config& c) {
    if (c.sources.tokens.empty()) return "";
    std::string list;
    const bool labelled = c.sources.token_labels.size() == c.sources.tokens.size();
    for (std::size_t i = 0; i < c.sources.tokens.size(); ++i)
        list += (i ? ", " : "") + (labelled ? c.sources.token_labels[i] + " (" + std::to_string(c.sources.tokens[i]) + ")"
                                            : std::to_string(c.sources.tokens[i]));
    return " " + prose(labelled ? "explain.intro.tokens.labelled" : "explain.intro.tokens", {{"tokens", list}});
}

}  // namespace

std::vector<std::string> explain_intro(const config& c) {
    const run_shapes r(c);
    std::string head = c.mask.any() ? "softmax(masked(Q_h·K_hᵀ / √dk))" : "softmax(Q_h·K_hᵀ / √dk)";
    if (c.dropout.applied()) head = "dropout(" + head + ")";
    const std::string out = "concat(head_1, ..., head_" + str(r.H) + ")" + (c.out_proj ? "·W_oᵀ + b_o" : "");
    return {say(r, "intro.attention"),
            say(r, c.mask.any() ? "intro.formula.masked" : "intro.formula",
                {{"out", out}, {"head", head}, {"fill", fill_text(c)}}),
            say(r, c.sources.from_projections ? "intro.letters.given"
                   : r.N > 0          ? "intro.letters.step"
                   : r.cross          ? "intro.letters.cross"
                                      : "intro.letters.self") +
                (r.G < r.H ? " " + say(r, "intro.letters.grouped") : std::string()) + tokens_sentence(c),
            say(r, "intro.reading")};
}

std::vector<explanation_line> explain_summary(const config& c) {
    const run_shapes r(c);
    std::vector<explanation_line> lines;
    std::string chain = c.sources.from_projections ? "" : "x " + shape_text({r.B, r.N > 0 ? r.Sk : r.Sq, r.Din}) + " -> ";
    chain += "q " + r.bsd(r.Sq) + " -> view " + r.bshd(r.Sq) + " -> transpose " + r.bhsd(r.Sq) + " -> scores " +
             r.plane() + " -> weights " + r.plane() + " -> context " + r.bhsd(r.Sq) + " -> merge " + r.bshd(r.Sq) +
             " -> concat " + r.bsd(r.Sq);
    if (c.out_proj) chain += " -> out " + r.bsd(r.Sq);
    lines.push_back({"shapes", chain});

    std::string copies;  // "a; b"
    const bool scores_copy = r.matmul_copies(r.read_by(stage_id::scores, "q")) || r.matmul_copies(r.k_turned());
    const bool context_copy = r.matmul_copies(r.read_by(stage_id::context, "v"));
    if (!is_contiguous(r.of(stage_id::merge, "context"))) copies = say(r, "summary.copy.contiguous");
    if (scores_copy || context_copy)
        copies += (copies.empty() ? "" : "; ") +
                  say(r, "summary.copy.matmul",
                      {{"stages", scores_copy && context_copy ? "scores and context"
                                  : scores_copy               ? "scores"
                                                              : "context"}});
    copies = copies.empty() ? say(r, "summary.copies.none") : say(r, "summary.copies", {{"copies", copies}});
    lines.push_back({"memory", say(r, "summary.memory", {{"copies", copies}})});

    const std::int64_t plane = r.B * r.H * r.Sq * r.Sk;
    const char* planes = c.mask.any() ? "scores, scaled, masked, weights" : "scores, scaled, weights";
    lines.push_back({"cost", say(r, r.cross ? "summary.cost" : "summary.cost.self",
                                 {{"tensors", planes}, {"count", plane}, {"s_count", plural(plane)}})});
    return lines;
}

}  // namespace attn
