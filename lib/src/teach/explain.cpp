// --explain: every stage in words, shapes, einsum, PyTorch, memory and purpose,
// with this run's numbers. One function per stage, in CLI.md's order, then the
// opening paragraphs and the closing summary.
//
// The PyTorch lines are the notebook's (seed notebook 000): q = w_q(x),
// q = q.view(B, Sq, H, dk), q = q.transpose(1, 2), scores = q @ k.transpose(-2, -1), ...
// Constructors (torch.randn, nn.Linear, torch.tril) carry this run's numbers, so
// that they can be pasted; reshapes carry the letters, as a notebook's variables.
// The memory texts are PyTorch's, from the strides of each step (tensor.hpp's layout rules).
#include "attn/teach/explain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "attn/compute/trace.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

using layout = tensor_layout;

std::string str(std::int64_t n) { return std::to_string(n); }

/// "[2,5,4,2]", as attn writes shapes.
std::string shape_text(const tensor_shape& shape) {
    std::string text = "[";
    for (std::size_t a = 0; a < shape.size(); ++a) text += (a ? "," : "") + str(shape[a]);
    return text + "]";
}

/// "(40, 8, 2, 1)", as PyTorch prints t.stride().
std::string stride_text(const layout& t) {
    std::string text = "(";
    for (std::size_t a = 0; a < t.strides.size(); ++a) text += (a ? ", " : "") + str(t.strides[a]);
    return text + (t.strides.size() == 1 ? ",)" : ")");
}

/// "s" after a count other than 1: "1 head", "4 heads".
const char* plural(std::int64_t n) { return n == 1 ? "" : "s"; }

/// %g-like with up to four decimals and no trailing zeros: 1.4142, 2, 0.9.
std::string decimal(double v) {
    char text[64];
    std::snprintf(text, sizeof text, "%.4f", v);
    std::string s = text;
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
}

/// The run's sizes under their letters (CLI.md), and the layouts PyTorch gives
/// the notebook's tensors at each step.
struct run_shapes {
    std::size_t B, Sq, Sk, D, H, dk, Din, Dkv;
    bool cross;

    explicit run_shapes(const config& c)
        : B(c.batch),
          Sq(c.seq),
          Sk(c.kv_seq),
          D(c.d_model),
          H(c.heads),
          dk(c.head_dim()),
          Din(c.d_in),
          Dkv(c.d_kv_in),
          cross(c.cross()) {}

    // stage 3: fresh tensors from nn.Linear (or read whole from files)
    layout q_projected() const { return contiguous_layout({B, Sq, D}); }
    layout k_projected() const { return contiguous_layout({B, Sk, D}); }
    // stage 4: q.view(B, Sq, H, dk), a view since q is contiguous
    layout q_split() const { return *viewed(q_projected(), {B, Sq, H, dk}); }
    layout k_split() const { return *viewed(k_projected(), {B, Sk, H, dk}); }
    // stage 5: q.transpose(1, 2)
    layout q_heads() const { return transposed(q_split(), 1, 2); }
    layout k_heads() const { return transposed(k_split(), 1, 2); }
    // stage 6: k.transpose(-2, -1)
    layout k_turned() const { return transposed(k_heads(), 2, 3); }
    // stage 12: weights @ v, a fresh tensor
    layout context() const { return contiguous_layout({B, H, Sq, dk}); }
    // stage 13: context.transpose(1, 2)
    layout merged() const { return transposed(context(), 1, 2); }

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

/// "x.stride() is (40, 8, 1): ... at b·40 + s·8 + i": what strides are, with x's.
std::string strides_explained(const std::string& name, const layout& t, std::string_view letters) {
    std::string where;
    for (std::size_t a = 0; a < t.strides.size(); ++a)
        where += (a ? " + " : "") + std::string(1, letters[a]) + (t.strides[a] == 1 ? "" : "·" + str(t.strides[a]));
    return name + ".stride() is " + stride_text(t) +
           ": one step along each axis moves that many floats on in memory, so " + name + "[" +
           std::string(1, letters[0]) + ", " + std::string(1, letters[1]) + ", " + std::string(1, letters[2]) +
           "] is found at " + where + ".";
}

std::string new_tensor(const std::string& shape) { return "new memory: a fresh contiguous " + shape + " tensor."; }

// --- 1-3: from tokens to queries, keys and values ---------------------------------------

stage_explanation explain_input(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = "B = " + str(r.B) + " sequence" + plural(r.B) + " of Sq = " + str(r.Sq) + " token" + plural(r.Sq) +
              " each, every token a vector of Din = " + str(r.Din) + " number" + plural(r.Din) + " (its embedding), " +
              (c.x_from_file ? "read from --input." : "drawn at random as torch.randn draws them.");
    if (r.cross)
        e.words += " Keys and values come from a second input, x_kv: B = " + str(r.B) + " sequence" + plural(r.B) +
                   " of Sk = " + str(r.Sk) + " token" + plural(r.Sk) + " of Dkv = " + str(r.Dkv) + " number" +
                   plural(r.Dkv) + " (" + (c.x_kv_from_file ? "read from --kv-input" : "drawn after x") +
                   "), as a decoder reads an encoder's output.";
    e.shapes = "x [B,Sq,Din] = " + shape_text({r.B, r.Sq, r.Din});
    if (r.cross) e.shapes += "; x_kv [B,Sk,Dkv] = " + shape_text({r.B, r.Sk, r.Dkv});
    const auto randn = [](std::int64_t a, std::int64_t b, std::int64_t d) {
        return "torch.randn(" + str(a) + ", " + str(b) + ", " + str(d) + ")";
    };
    // x, then x_kv; a comment at the end says where they come from
    std::vector<std::string> comments;
    if (c.x_from_file) {
        e.torch = "x = torch.tensor(data)";
        comments.push_back("data read from --input");
    } else if (c.params_from_file) {
        e.torch = "torch.manual_seed(" + str(c.seed) + "); x = " + randn(r.B, r.Sq, r.Din);
    } else {
        e.torch = "x = " + randn(r.B, r.Sq, r.Din);
        comments.push_back("drawn after the weights");
    }
    if (r.cross && c.x_kv_from_file) {
        e.torch += "; x_kv = torch.tensor(data_kv)";
        comments.push_back("data_kv read from --kv-input");
    } else if (r.cross) {
        e.torch += "; x_kv = " + randn(r.B, r.Sk, r.Dkv);
    }
    for (std::size_t i = 0; i < comments.size(); ++i) e.torch += (i ? "; " : "  # ") + comments[i];
    const layout x = contiguous_layout({r.B, r.Sq, r.Din});
    e.memory = "a contiguous tensor. " + strides_explained("x", x, "bsi");
    if (r.cross) e.memory += " x_kv.stride() is " + stride_text(contiguous_layout({r.B, r.Sk, r.Dkv})) + ".";
    e.why = std::string("Attention works on vectors, one per token. In a transformer they are the token embeddings ") +
            "(plus positions) or the previous layer's output; here they are " +
            (c.x_from_file ? "read from --input." : "random numbers of that shape.");
    return e;
}

stage_explanation explain_params(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string qkv_bias = c.qkv_bias ? "" : ", bias=False";
    std::int64_t count = r.D * r.Din + 2 * r.D * r.Dkv + (c.qkv_bias ? 3 * r.D : 0);
    if (c.out_proj) count += r.D * r.D + r.D;
    e.words = std::string("The learned weights: w_q, w_k and w_v turn a token into its query, key and value") +
              (c.out_proj ? "; w_o mixes the heads' results at the end." : ".") +
              " nn.Linear stores each weight as [out, in] and computes y = x·Wᵀ + b" +
              (c.qkv_bias ? "" : " (q, k and v have no bias: bias=False)") + "." +
              (c.out_proj ? "" : " There is no w_o (--no-out-proj): the joined heads are the result.") + " In all " +
              str(count) + " number" + plural(count) + ".";
    const std::string bias = c.qkv_bias ? ", b_q " + shape_text({r.D}) : "";
    e.shapes = "w_q " + shape_text({r.D, r.Din}) + " (D×Din)" + bias + "; w_k, w_v " + shape_text({r.D, r.Dkv}) +
               " (D×Dkv)" + (c.qkv_bias ? ", b_k, b_v " + shape_text({r.D}) : "");
    if (c.out_proj) e.shapes += "; w_o " + shape_text({r.D, r.D}) + " (D×D), b_o " + shape_text({r.D});
    const auto linear = [](std::int64_t in, std::int64_t out, const std::string& extra) {
        return "nn.Linear(" + str(in) + ", " + str(out) + extra + ")";
    };
    e.torch = "torch.manual_seed(" + str(c.seed) + "); w_q = " + linear(r.Din, r.D, qkv_bias) +
              "; w_k = " + linear(r.Dkv, r.D, qkv_bias) + "; w_v = " + linear(r.Dkv, r.D, qkv_bias);
    if (c.out_proj) e.torch += "; w_o = " + linear(r.D, r.D, "");
    if (c.params_from_file) e.torch += "  # then their weights and biases loaded from --params";
    e.memory = "each weight is one contiguous [out, in] matrix (w_q.weight.stride() is " +
               stride_text(contiguous_layout({r.D, r.Din})) +
               "); nn.Linear multiplies by w.T, a view with the strides swapped, so the weights are never copied.";
    if (c.params_from_file) {
        e.why = "These are what training learns; here they are read from --params.";
    } else {
        std::string bounds;
        std::vector<std::size_t> ins{r.Din};
        if (r.Dkv != r.Din) ins.push_back(r.Dkv);
        if (c.out_proj && r.D != r.Din && r.D != r.Dkv) ins.push_back(r.D);
        for (std::size_t in : ins)
            bounds += (bounds.empty() ? "" : ", ") + std::string("±") + decimal(1.0 / std::sqrt(double(in))) +
                      " for in = " + str(in);
        e.why = "These are what training learns. Here they are nn.Linear's initial values for seed " + str(c.seed) +
                ", uniform within ±1/√in (" + bounds + "), the numbers PyTorch draws.";
    }
    return e;
}

stage_explanation explain_projections(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string kv_source = r.cross ? "x_kv" : "x";
    const std::string roles =
        "its query q (what it is looking for), its key k (what it offers to queries that look for it) and its value "
        "v (what it passes on when attended to).";
    if (c.from_projections)
        e.words =
            "Q, K and V are given by --q, --k and --v; in a model they would be x·W_qᵀ + b_q, x·W_kᵀ + b_k and "
            "x·W_vᵀ + b_v. Each token has " +
            roles;
    else
        e.words = "Each token's vector is multiplied by three weight matrices" +
                  std::string(r.cross ? " (queries from x, keys and values from x_kv)" : "") + ": " + roles;
    const std::string q_shape = r.bsd(r.Sq), k_shape = r.bsd(r.Sk);
    if (c.from_projections) {
        e.shapes = "q [B,Sq,D] = " + q_shape + "; k, v [B,Sk,D] = " + k_shape;
        e.torch = "q, k, v given by --q, --k, --v  # in a model: q = w_q(x); k = w_k(x); v = w_v(x)";
    } else {
        const auto product = [&](const std::string& in, const std::string& in_shape, std::size_t d_in,
                                 const std::string& letter, const std::string& out_shape) {
            return in + " " + in_shape + " · w_" + letter + "ᵀ " + shape_text({d_in, r.D}) +
                   (c.qkv_bias ? " + b_" + letter + " " + shape_text({r.D}) : "") + " -> " + letter + " " + out_shape;
        };
        e.shapes = product("x", shape_text({r.B, r.Sq, r.Din}), r.Din, "q", q_shape) + "; " +
                   product(kv_source, shape_text({r.B, r.Sk, r.Dkv}), r.Dkv, "k", k_shape) + ", v likewise";
        e.einsum = "q: bqi,oi->bqo; k, v: bki,oi->bko";
        e.torch = "q = w_q(x); k = w_k(" + kv_source + "); v = w_v(" + kv_source + ")" +
                  (c.qkv_bias ? "  # each x @ w.weight.T + w.bias" : "  # each x @ w.weight.T (bias=False)");
    }
    const layout q = r.q_projected();
    e.memory = "three fresh contiguous tensors. ";
    if (c.from_projections)  // no input stage has said what strides are
        e.memory += strides_explained("q", q, "bsd");
    else
        e.memory += "q.stride() is " + stride_text(q) + ".";
    if (r.Sk != r.Sq) e.memory += " k.stride() and v.stride() are " + stride_text(r.k_projected()) + ".";
    e.why =
        "Attention compares queries with keys and passes values on; three learned projections let the model "
        "choose, separately for each role, which features matter for matching and which are worth passing on.";
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
    e.words = "Split the last axis: each token's D = " + str(r.D) + " number" + plural(r.D) +
              " are read as H = " + str(r.H) + " head" + plural(r.H) + " of dk = " + str(r.dk) + " number" +
              plural(r.dk) + " (" + ranges + "). Nothing is computed.";
    e.shapes = qkv_shapes(r, r.bsd(r.Sq), r.bshd(r.Sq), r.bsd(r.Sk), r.bshd(r.Sk)) +
               "   ([B,S,D] -> [B,S,H,dk]: " + str(r.D) + " = " + str(r.H) + " × " + str(r.dk) + ")";
    e.torch = "q = q.view(B, Sq, H, dk); k = k.view(B, Sk, H, dk); v = v.view(B, Sk, H, dk)";
    e.memory =
        "a view: q.view(...) shares q's memory (the same data_ptr()), no data moves; only the shape and strides "
        "change: " +
        stride_text(r.q_projected()) + " -> " + stride_text(r.q_split()) +
        ". view needs the axis it splits to be contiguous in memory, and it is.";
    if (r.H == 1)
        e.why = "With H = 1 there is a single head that attends with all D = " + str(r.D) + " feature" + plural(r.D) +
                "; the split only adds an axis of length 1.";
    else
        e.why = "Each head will attend on its own dk = " + str(r.dk) + " feature" + plural(r.dk) +
                ", independently of the others: with H = " + str(r.H) +
                " heads the model can attend to different things at once (say one head to the previous token, "
                "another to a related word), each in its own subspace, for the cost of one head of width D.";
    return e;
}

/// Whether q, k and v are still contiguous after stage 5, and why not.
std::string transposed_contiguity(const run_shapes& r) {
    const bool q_ok = is_contiguous(r.q_heads()), k_ok = is_contiguous(r.k_heads());
    const std::string still = " (an axis that swapped has length 1, so the order in memory is unchanged)";
    const std::string jumps = ": memory still holds each token's " + str(r.H) + " head" + plural(r.H) +
                              " side by side, so walking q[b, h] row by row jumps " + str(r.D) +
                              " floats from one token to the next.";
    if (q_ok && k_ok) return "q, k and v are still contiguous" + still + ".";
    if (!q_ok && !k_ok) return "q, k and v are no longer contiguous (q.is_contiguous() is False)" + jumps;
    if (q_ok) return "q is still contiguous" + still + "; k and v are not (k.is_contiguous() is False).";
    return "q is no longer contiguous (q.is_contiguous() is False)" + jumps + " k and v are still contiguous" + still +
           ".";
}

stage_explanation explain_transpose(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words =
        "Swap axes 1 and 2, so that the head axis comes before the positions: q[b, h] is then head h's [Sq,dk] = " +
        shape_text({r.Sq, r.dk}) + " matrix, one row per token (k[b, h] and v[b, h]: " + shape_text({r.Sk, r.dk}) +
        ").";
    e.shapes = qkv_shapes(r, r.bshd(r.Sq), r.bhsd(r.Sq), r.bshd(r.Sk), r.bhsd(r.Sk)) + "   ([B,S,H,dk] -> [B,H,S,dk])";
    e.einsum = "bshd->bhsd";
    e.torch = "q = q.transpose(1, 2); k = k.transpose(1, 2); v = v.transpose(1, 2)";
    e.memory = "a view: no data moves; transpose swaps the strides of axes 1 and 2: " + stride_text(r.q_split()) +
               " -> " + stride_text(r.q_heads()) + ". " + transposed_contiguity(r);
    e.why =
        "The matrix products that follow work on the last two axes and treat the axes in front as a batch: with "
        "[B,H,S,dk] every (batch item, head) pair is one independent attention, B·H = " +
        str(r.B * r.H) + " of them computed at once.";
    return e;
}

// --- 6-11: scores and weights ---------------------------------------------------------------

/// What matmul copies before its batched product (both operands, one, or none),
/// and the new memory it writes.
std::string matmul_memory(const run_shapes& r, const layout& a, const std::string& a_name, const layout& b,
                          const std::string& b_name, const std::string& result, const layout& result_layout) {
    const bool copy_a = r.matmul_copies(a), copy_b = r.matmul_copies(b);
    const auto block = [&](const layout& t) { return shape_text({r.B * r.H, t.shape[2], t.shape[3]}); };
    std::string text = "matmul runs one batched product over the B·H = " + str(r.B * r.H) + " pair" +
                       plural(r.B * r.H) + ", reading [B·H, rows, cols] blocks. ";
    if (copy_a && copy_b)
        text += "No view gives " + a_name + " as " + block(a) + " or " + b_name + " as " + block(b) +
                " blocks (they are strided views), so matmul first copies both into contiguous memory. ";
    else if (copy_a || copy_b)
        text += "No view gives " + (copy_a ? a_name + " as " + block(a) : b_name + " as " + block(b)) +
                " blocks, so matmul first copies it into contiguous memory; " + (copy_a ? b_name : a_name) +
                " it reads in place. ";
    else
        text += "It reads " + a_name + " and " + b_name + " in place, without a copy" +
                (r.B == 1 || r.H == 1 ? std::string(" (with ") + (r.B == 1 ? "B" : "H") +
                                            " = 1 the batch and head axes merge into one without moving data)"
                                      : std::string()) +
                ". ";
    return text + result + " is new memory: contiguous, strides " + stride_text(result_layout) + ".";
}

stage_explanation explain_scores(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words =
        "For every batch item and head, the dot product of every query with every key: scores[b,h,i,j] = "
        "Σ_d q[b,h,i,d]·k[b,h,j,d], a [Sq,Sk] = " +
        shape_text({r.Sq, r.Sk}) + " matrix per head, " + str(r.B * r.H) + " of them.";
    e.shapes = r.bhsd(r.Sq) + " · " + shape_text({r.B, r.H, r.dk, r.Sk}) + " -> " + r.plane() +
               "   ([B,H,Sq,dk] · [B,H,dk,Sk] -> [B,H,Sq,Sk])";
    e.einsum = "bhqd,bhkd->bhqk";
    e.torch = "scores = q @ k.transpose(-2, -1)";
    e.memory = "k.transpose(-2, -1) is a view (strides " + stride_text(r.k_turned()) + "): no copy. " +
               matmul_memory(r, r.q_heads(), "q", r.k_turned(), "kᵀ", "scores",
                             contiguous_layout({r.B, r.H, r.Sq, r.Sk}));
    e.why =
        "A dot product is large when a query and a key point the same way in this head's subspace: that is how a "
        "token finds the tokens relevant to it. Row i holds how well query i matches each key.";
    return e;
}

stage_explanation explain_scaled(const config&, const run_shapes& r) {
    stage_explanation e;
    const std::string root = decimal(std::sqrt(static_cast<float>(r.dk)));
    e.words = "Every score divided by √dk = √" + str(r.dk) + " = " + root + ".";
    e.shapes = r.plane() + " / " + root + " -> " + r.plane();
    e.torch = "scaled = scores / math.sqrt(dk)";
    e.memory = new_tensor(r.plane()) + " (scores /= math.sqrt(dk) would divide in place.)";
    e.why =
        "A dot product of dk terms grows with dk: if the entries of q and k are independent with mean 0 and variance "
        "1, q·k has variance dk = " +
        str(r.dk) +
        ". Dividing by √dk brings the variance back near 1, so that softmax does not saturate (one weight near 1, "
        "the others near 0, and vanishing gradients) as dk grows.";
    return e;
}

/// The mask's terms in PyTorch, in the order mask_formula lists them, for `mask = a & b`.
std::vector<std::string> mask_torch_terms(const config& c, const run_shapes& r) {
    const mask_spec& m = c.mask;
    std::vector<std::string> terms;
    if (m.causal) terms.push_back("torch.tril(torch.ones(" + str(r.Sq) + ", " + str(r.Sk) + ", dtype=torch.bool))");
    if (m.padding) {
        std::string lengths;
        for (std::int64_t n : m.lengths) lengths += (lengths.empty() ? "" : ", ") + str(n);
        terms.push_back("(torch.arange(" + str(r.Sk) + ") < torch.tensor([" + lengths + "]).view(" + str(r.B) +
                        ", 1, 1, 1))");
    }
    if (m.window)
        terms.push_back("((torch.arange(" + str(r.Sq) + ")[:, None] - torch.arange(" + str(r.Sk) +
                        ")).abs() <= " + (m.window_size ? str(*m.window_size) : "W") + ")");
    if (m.random)
        terms.push_back("(torch.rand(" + str(r.B) + ", 1, " + str(r.Sq) + ", " + str(r.Sk) + ") < " +
                        decimal(m.random_keep) + ")");
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
    if (m.causal) {
        rules.push_back("causal, only keys j <= i, so no token sees a later one" +
                        std::string(r.Sq != r.Sk ? " (aligned upper-left, as torch.tril(torch.ones(Sq, Sk)))" : ""));
        reasons.push_back("a decoder's token must not see the tokens after it (causal)");
    }
    if (m.padding) {
        std::string lengths;
        for (std::int64_t n : m.lengths) lengths += (lengths.empty() ? "" : ",") + str(n);
        rules.push_back("padding, in batch item b only keys j < lengths[b] (lengths " + lengths + ")");
        reasons.push_back(
            "padded positions are filler that makes sequences of different lengths one tensor, not input (padding)");
    }
    if (m.window) {
        const std::string w = m.window_size ? str(*m.window_size) : "W";
        rules.push_back("window, only keys j with |i - j| <= " + w);
        reasons.push_back("local attention looks only at the neighbours within " + w + " (window)");
    }
    if (m.random) {
        rules.push_back("random, each (query, key) pair kept with probability " + decimal(m.random_keep) +
                        " (drawn after torch.manual_seed(" + str(m.random_seed) + "))");
        reasons.push_back("a random mask shows what masking does to the weights (random)");
    }
    const auto reading = [](mask_convention convention, const char* keep, const char* mha) {
        if (convention == mask_convention::mha) return std::string("read as mha: ") + mha;
        if (convention == mask_convention::additive) return std::string("read as additive: 0 = may attend");
        return std::string("read as keep: ") + keep;
    };
    if (m.from_file) {
        rules.push_back("--mask-file, " + reading(m.file_convention, "true = may attend", "true = may not attend"));
        reasons.push_back("the mask file says which keys each query may use");
    }
    if (m.key_padding) {
        rules.push_back("--key-padding-mask, " +
                        reading(m.key_padding_convention, "true = a real key", "true = a padded key"));
        reasons.push_back("padded keys are filler, not input (key padding)");
    }
    std::string joined_rules, joined_reasons;
    for (const auto& rule : rules) joined_rules += (joined_rules.empty() ? "" : "; ") + rule;
    for (const auto& reason : reasons) joined_reasons += (joined_reasons.empty() ? "" : "; ") + reason;
    e.words = "True where query i may attend key j" + std::string(rules.size() > 1 ? ", the AND of: " : ": ") +
              joined_rules + ". The same mask for every head.";
    e.shapes = "mask [B,1,Sq,Sk] = " + shape_text({r.B, 1, r.Sq, r.Sk}) + ": one " + shape_text({r.Sq, r.Sk}) +
               " mask per batch item; its axis of length 1 broadcasts over the " + str(r.H) + " head" + plural(r.H);
    std::string expression;
    for (const auto& term : mask_torch_terms(c, r)) expression += (expression.empty() ? "" : " & ") + term;
    e.torch = (m.random ? "torch.manual_seed(" + str(m.random_seed) + "); " : std::string()) + "mask = " + expression;
    e.memory =
        "booleans, one byte each. masked_fill broadcasts the mask over the heads with stride 0: it is never copied "
        "per head.";
    e.why = "The mask stops a query from using keys it must not see: " + joined_reasons + ".";
    return e;
}

stage_explanation explain_masked(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string fill = fill_text(c);
    const bool inf = std::isinf(c.fill);
    e.words = "Every score where the mask is false is replaced by " + fill + "; the others are kept as they are.";
    e.shapes = r.plane() + " with mask " + shape_text({r.B, 1, r.Sq, r.Sk}) + " -> " + r.plane() +
               " (the mask broadcast over the " + str(r.H) + " head" + plural(r.H) + ")";
    e.torch = "masked = scaled.masked_fill(~mask, " + (inf ? std::string("float('-inf')") : fill) + ")";
    e.memory = new_tensor(r.plane()) + " (masked_fill_, with the underscore, would overwrite scaled in place.)";
    if (inf)
        e.why =
            "Softmax turns -inf into exactly 0 (e^-inf = 0), so a masked key gets no weight at all and the allowed "
            "keys share the whole 1. A row with no allowed key is all -inf and gives NaN (0/0).";
    else if (c.fill <= -1e4f)
        e.why = "Softmax turns " + fill + " into 0 as well (e^" + fill +
                " underflows), as long as the row has an allowed key; a row with none gets uniform weights instead "
                "of -inf's NaN.";
    else
        e.why = "A finite fill is only a number: softmax gives a masked key the weight e^(" + fill +
                " - the row's largest score), which is 0 only when the fill is far below the scores. -inf (or "
                "-1e9) removes masked keys for certain.";
    return e;
}

stage_explanation explain_softmax(const config& c, const run_shapes& r) {
    stage_explanation e;
    const std::string from = c.mask.any() ? "masked" : "scaled";
    e.words =
        "For each query row, exponentiate the scores and divide by their sum over the keys: weights[b,h,i,j] = "
        "e^s[i,j] / Σ_j' e^s[i,j'] (PyTorch subtracts the row's maximum first: the same result, without overflow).";
    e.shapes = r.plane() + " -> " + r.plane() + ": " + str(r.B) + "·" + str(r.H) + "·" + str(r.Sq) + " = " +
               str(r.B * r.H * r.Sq) + " row" + plural(r.B * r.H * r.Sq) + " of Sk = " + str(r.Sk) + " weight" +
               plural(r.Sk) + ", each row summing to 1";
    e.torch = "weights = torch.softmax(" + from + ", dim=-1)";
    e.memory = new_tensor(r.plane());
    e.why =
        "It makes each query's weights a probability distribution over the keys: none negative, summing to 1, the "
        "larger scores getting more. dim=-1 is the key axis; softmax over dim=-2, the queries, is a classic mistake "
        "(then each key's weights sum to 1).";
    return e;
}

stage_explanation explain_dropout(const config& c, const run_shapes& r) {
    stage_explanation e;
    const double p = c.dropout.p;
    const std::string keep_p = decimal(1.0 - p);
    if (p >= 1.0)
        e.words = "With p = 1 every weight is set to 0.";
    else
        e.words = "Each weight is kept with probability 1 - p = " + keep_p +
                  " and multiplied by 1 / (1 - p) = " + decimal(1.0 / (1.0 - p)) +
                  ", or set to 0 with probability p = " + decimal(p) + ". attn draws keep as torch.manual_seed(" +
                  str(c.dropout.seed) + "); keep = torch.rand(" + str(r.B) + ", " + str(r.H) + ", " + str(r.Sq) + ", " +
                  str(r.Sk) + ") < " + keep_p + " (nn.Dropout draws its zeros with bernoulli_, so they differ).";
    e.shapes = r.plane() + " · keep " + r.plane() + " / " + keep_p + " -> " + r.plane();
    e.torch = "weights = nn.Dropout(p=" + decimal(p) + ")(weights)  # in training mode (model.train())";
    e.memory = new_tensor(r.plane()) + " (nn.Dropout(inplace=True) would overwrite weights.)";
    e.why =
        "Regularisation in training: a query cannot rely on any single key, since any link may vanish. Dividing by "
        "1 - p keeps each weight's expected value, though a row no longer sums to exactly 1. In eval mode "
        "(model.eval()) dropout is the identity.";
    return e;
}

// --- 12-15: back to one vector per token ----------------------------------------------------

stage_explanation explain_context(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words =
        "Each query's output, per head, is the weighted sum of the value vectors: context[b,h,i,:] = "
        "Σ_j weights[b,h,i,j]·v[b,h,j,:]" +
        std::string(c.dropout.applied() ? "" : ", an average since each row of weights sums to 1") +
        ". A [Sq,dk] = " + shape_text({r.Sq, r.dk}) + " matrix per head.";
    e.shapes =
        r.plane() + " · " + r.bhsd(r.Sk) + " -> " + r.bhsd(r.Sq) + "   ([B,H,Sq,Sk] · [B,H,Sk,dk] -> [B,H,Sq,dk])";
    e.einsum = "bhqk,bhkd->bhqd";
    e.torch = "context = weights @ v";
    e.memory = "v is the view of stage 5. " + matmul_memory(r, contiguous_layout({r.B, r.H, r.Sq, r.Sk}),
                                                            "weights", r.k_heads(), "v", "context", r.context());
    e.why =
        "This is where information moves between tokens: each query takes in the values of the keys it attends to, "
        "in proportion to its weights.";
    return e;
}

stage_explanation explain_merge(const config&, const run_shapes& r) {
    stage_explanation e;
    e.words = "Swap axes 1 and 2 back, positions before heads: context[b, i] then holds token i's " + str(r.H) +
              " head" + plural(r.H) + " of dk = " + str(r.dk) + " number" + plural(r.dk) + ".";
    e.shapes = r.bhsd(r.Sq) + " -> " + r.bshd(r.Sq) + "   ([B,H,Sq,dk] -> [B,Sq,H,dk])";
    e.einsum = "bhqd->bqhd";
    e.torch = "merged = context.transpose(1, 2)";
    const layout merged = r.merged();
    e.memory = "a view: no data moves; strides " + stride_text(r.context()) + " -> " + stride_text(merged) + ". ";
    if (is_contiguous(merged))
        e.memory += "merged is still contiguous (the axes that swapped include one of length 1).";
    else
        e.memory +=
            "merged is not contiguous (merged.is_contiguous() is False): memory still holds the heads one after "
            "another, so the " +
            str(r.H) + " heads of one token lie " + str(merged.strides[2]) + " floats apart, not side by side.";
    if (!viewed(merged, {r.B, r.Sq, r.D}))
        e.memory +=
            " That is why merged.view(B, Sq, D) raises \"view size is not compatible with input tensor's size and "
            "stride\".";
    e.why = "To join the heads of each token into one vector of D = " + str(r.D) +
            " numbers (next stage), they must sit next to each other on the last two axes.";
    return e;
}

stage_explanation explain_concat(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words = "Join each token's " + str(r.H) + " head" + plural(r.H) + " of " + str(r.dk) + " number" + plural(r.dk) +
              " into one vector of D = " + str(r.D) + ", side by side, head 0's features first.";
    e.shapes = r.bshd(r.Sq) + " -> " + r.bsd(r.Sq) + "   ([B,Sq,H,dk] -> [B,Sq,D]: " + str(r.H) + " × " + str(r.dk) +
               " = " + str(r.D) + ")";
    e.torch = "concat = merged.contiguous().view(B, Sq, D)";
    const layout merged = r.merged();
    const std::string concat_strides = stride_text(contiguous_layout({r.B, r.Sq, r.D}));
    if (is_contiguous(merged)) {
        e.memory =
            "no copy: merged is contiguous already (only an axis of length 1 moved), so .contiguous() returns "
            "merged itself and .view(B, Sq, D) shares its memory, strides " +
            concat_strides + ".";
    } else {
        e.memory = "the copy: merged is not contiguous, so .contiguous() copies it into new memory in " +
                   shape_text(merged.shape) + " order (strides " + stride_text(contiguous_layout(merged.shape)) +
                   "), each token's heads now side by side; .view(B, Sq, D) then reads that memory as " + r.bsd(r.Sq) +
                   ", strides " + concat_strides +
                   ", without another copy. merged.reshape(B, Sq, D) does the same in one call: it copies exactly "
                   "when no view is possible.";
        if (!!viewed(merged, {r.B, r.Sq, r.D}))
            e.memory += " (Here, with dk = 1, merged.view(B, Sq, D) would work without the copy, as a strided view.)";
    }
    e.why = c.out_proj ? "The output projection (next) takes one vector of D numbers per token."
                       : "With no output projection (--no-out-proj) this is the result: one vector of D = " + str(r.D) +
                             " number" + plural(r.D) + " per query token.";
    return e;
}

stage_explanation explain_output(const config& c, const run_shapes& r) {
    stage_explanation e;
    e.words =
        "A last linear layer on each token's joined vector: out = concat·W_oᵀ + b_o. Every output feature is a "
        "weighted mix of all the heads' features.";
    e.shapes = "concat " + r.bsd(r.Sq) + " · w_oᵀ " + shape_text({r.D, r.D}) + " + b_o " + shape_text({r.D}) +
               " -> out " + r.bsd(r.Sq);
    e.einsum = "bqi,oi->bqo";
    e.torch = "out = w_o(concat)  # concat @ w_o.weight.T + w_o.bias";
    e.memory = new_tensor(r.bsd(r.Sq)) + " (w_o.weight.T is a view: no copy of the weights.)";
    e.why = "Until here each head worked alone on its own dk = " + str(r.dk) + " feature" + plural(r.dk) +
            "; W_o mixes what the heads found, so every output feature can combine all of them.";
    if (!c.from_projections && r.Din == r.D)
        e.why +=
            " out has the shape of x, so a transformer can add it back to x (a residual connection) and stack "
            "layers.";
    return e;
}

using explainer = stage_explanation (*)(const config&, const run_shapes&);

struct stage_explainer {
    std::string_view name;
    explainer explain;
};

constexpr stage_explainer explainers[] = {
    {"input", explain_input},     {"params", explain_params},       {"projections", explain_projections},
    {"view", explain_view},       {"transpose", explain_transpose}, {"scores", explain_scores},
    {"scaled", explain_scaled},   {"mask", explain_mask},           {"masked", explain_masked},
    {"softmax", explain_softmax}, {"dropout", explain_dropout},     {"context", explain_context},
    {"merge", explain_merge},     {"concat", explain_concat},       {"output", explain_output},
};

}  // namespace

stage_explanation explain_stage(const config& c, std::string_view name) {
    for (const stage_explainer& s : explainers) {
        if (s.name != name) continue;
        stage_explanation e = s.explain(c, run_shapes(c));
        e.symbols = stage_formula(c, name);
        return e;
    }
    return {};
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
    return lines;
}

std::vector<std::string> explain_intro(const config& c) {
    const run_shapes r(c);
    std::vector<std::string> paragraphs;
    paragraphs.push_back(
        "Multi-head attention lets every token of a sequence gather information from other tokens. Each token asks "
        "a question (its query); every token offers a label (its key) and a content (its value); how well a query "
        "matches each key decides how much of that key's value it takes. H = " +
        str(r.H) + " head" + plural(r.H) + " do this side by side, each on its own dk = D / H = " + str(r.dk) +
        " of the D = " + str(r.D) + " features, so that different heads can look for different things.");
    std::string head = c.mask.any() ? "softmax(masked(Q_h·K_hᵀ / √dk))" : "softmax(Q_h·K_hᵀ / √dk)";
    if (c.dropout.applied()) head = "dropout(" + head + ")";
    paragraphs.push_back(
        "In one line: out = concat(head_1, ..., head_" + str(r.H) + ")" + (c.out_proj ? "·W_oᵀ + b_o" : "") +
        ", where head_h = " + head + "·V_h" +
        (c.mask.any() ? ", masked() writing " + fill_text(c) + " where a key may not be attended." : "."));
    const std::string sources = c.from_projections ? "Q, K and V given by --q, --k, --v"
                                : r.cross          ? "cross-attention: queries from x, keys and values from x_kv"
                                                   : "self-attention: queries, keys and values all come from x";
    std::string letters = "This run (" + sources + "): B = " + str(r.B) + " sequence" + plural(r.B) +
                          " (the batch), Sq = " + str(r.Sq) + " query token" + plural(r.Sq) + ", Sk = " + str(r.Sk) +
                          " key and value token" + plural(r.Sk);
    if (!c.from_projections) {
        letters += ", Din = " + str(r.Din) + " input features per token";
        if (r.cross) letters += " (Dkv = " + str(r.Dkv) + " in x_kv)";
    }
    letters += ", D = " + str(r.D) + " model width, H = " + str(r.H) + " head" + plural(r.H) + " of dk = " + str(r.dk) +
               " feature" + plural(r.dk) + ".";
    paragraphs.push_back(letters);
    paragraphs.push_back(
        "Under each stage's heading and formula: what it does, its shapes with this run's numbers, the same product "
        "as an einsum (b batch, h head, q query, k key, d a feature within a head; i and o a linear layer's input "
        "and output features), the line of PyTorch that computes it, what happens in memory, and why the step "
        "exists.");
    return paragraphs;
}

std::vector<explanation_line> explain_summary(const config& c) {
    const run_shapes r(c);
    std::vector<explanation_line> lines;
    std::string chain = c.from_projections ? "" : "x " + shape_text({r.B, r.Sq, r.Din}) + " -> ";
    chain += "q " + r.bsd(r.Sq) + " -> view " + r.bshd(r.Sq) + " -> transpose " + r.bhsd(r.Sq) + " -> scores " +
             r.plane() + " -> weights " + r.plane() + " -> context " + r.bhsd(r.Sq) + " -> merge " + r.bshd(r.Sq) +
             " -> concat " + r.bsd(r.Sq);
    if (c.out_proj) chain += " -> out " + r.bsd(r.Sq);
    lines.push_back({"shapes", chain});

    std::vector<std::string> copies;
    const bool scores_copy = r.matmul_copies(r.q_heads()) || r.matmul_copies(r.k_turned());
    const bool context_copy = r.matmul_copies(r.k_heads());
    if (!is_contiguous(r.merged())) copies.push_back(".contiguous() in concat");
    if (scores_copy || context_copy)
        copies.push_back(std::string("matmul's copies of its strided operands in ") + (scores_copy && context_copy
                                                                                           ? "scores and context"
                                                                                       : scores_copy ? "scores"
                                                                                                     : "context"));
    std::string memory = "views, sharing memory: view, transpose, k.transpose(-2, -1) and merge. ";
    if (copies.empty())
        memory += "Copies: none in this run.";
    else
        memory += "Copies: " + copies[0] + (copies.size() > 1 ? "; " + copies[1] : "") + ".";
    lines.push_back({"memory", memory + " Every other stage writes a new tensor."});

    const std::int64_t plane = r.B * r.H * r.Sq * r.Sk;
    lines.push_back({"cost", "the [B,H,Sq,Sk] tensors (scores, scaled" + std::string(c.mask.any() ? ", masked" : "") +
                                 ", weights) hold " + str(r.B) + "·" + str(r.H) + "·" + str(r.Sq) + "·" + str(r.Sk) +
                                 " = " + str(plane) + " number" + plural(plane) +
                                 " each: attention's time and memory grow with Sq·Sk" +
                                 (r.cross ? "." : ", the square of the sequence length.")});
    return lines;
}

}  // namespace attn
