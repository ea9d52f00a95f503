#pragma once
// Everything that decides what `attn trace` computes: shapes, parameters, masks. Dimension
// letters (CLI.md): B batch, Sq query length, Sk key/value length, Din and Dkv the query-
// and key/value-side input widths, D model width, H heads, dk = D / H head width.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attn/compute/activations.hpp"
#include "attn/compute/mistake.hpp"

namespace attn {

/// How --mask-file's values are read (--mask-convention).
enum class mask_convention {
    keep,      // true/1 = may attend (F.scaled_dot_product_attention's boolean mask; attn's own)
    mha,       // true/1 = may NOT attend (nn.MultiheadAttention's boolean attn_mask, triu(..., 1).bool())
    additive,  // floats added to the scores: 0 = may attend, -inf or a large negative = may not
};

/// Where a causal mask puts its diagonal when Sq != Sk (--causal-align).
enum class causal_alignment {
    upper_left,   // query i may attend keys j <= i: torch.tril(torch.ones(Sq, Sk)), SDPA's is_causal (PyTorch 2.x)
    lower_right,  // query i may attend keys j <= i + Sk - Sq: torch.tril(torch.ones(Sq, Sk), diagonal=Sk - Sq),
                  // as flash-attention and KV-cache decoding (the last query sees every key)
};

/// Where the positions of the tokens enter (--pos): nowhere, or one of three ways models do it.
enum class position_encoding {
    none,        // attention itself ignores order: permuting the keys permutes nothing but the weights
    rope,        // rotary (Su et al.; Hugging Face's Llama): q and k rotated by angles ∝ position, after the head split
    alibi,       // ALiBi (Press et al.): -m_h·(i - j) added to the scaled scores, one slope m_h per head
    sinusoidal,  // the Annotated Transformer's PE[pos, 2i] = sin(pos/10000^(2i/Din)), cos at 2i+1, added to x
};

/// Which coordinates --pos rope rotates together (--rope-style).
enum class rope_pairing {
    half,         // (i, i + dk/2): Hugging Face's rotate_half, cat((-x2, x1), -1)
    interleaved,  // (2i, 2i + 1): GPT-J and Meta's original Llama code (rotate_every_two)
};

/// How a model's config.json rescales rope's inverse frequencies (its rope_scaling), as Hugging
/// Face's modeling_rope_utils computes them; a run of attn's own flags has none.
struct rope_scaling_spec {
    enum class kind { none, linear, llama3 };
    kind type = kind::none;
    double factor = 1.0;             // linear: inv_freq / factor; llama3: the long wavelengths' divisor
    double low_freq_factor = 1.0;    // llama3: wavelengths above original / low_freq_factor are divided
    double high_freq_factor = 4.0;   // llama3: wavelengths below original / high_freq_factor are kept
    double original_max_positions = 8192.0;  // llama3: original_max_position_embeddings
};

/// The normalisation a real model's layer applies to its input before attention (the norm
/// stage): none for attn's own runs, BERT and nn.MultiheadAttention.
enum class norm_kind {
    none,
    layer_norm,  // GPT-2's ln_1: F.layer_norm(x, [Din], weight, bias, eps)
    rms_norm,    // Llama's input_layernorm: weight · (x · torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps))
};

/// The rest of a real model's block after attention (stages residual, mlp_norm, mlp, block):
/// off for attn's own runs, nn.MultiheadAttention and a file without the layer's MLP.
///   pre-norm (GPT-2, Llama)  residual = x + out; mlp_norm = norm(residual); block = residual + mlp(mlp_norm)
///   post-norm (BERT)         residual = x + out; mlp_norm = norm(residual); block = norm2(mlp_norm + mlp(mlp_norm))
/// mlp(h) = down(act(up(h))), or down(act(gate(h)) · up(h)) when gated (Llama's SwiGLU).
struct block_spec {
    norm_kind norm = norm_kind::none;  // mlp_norm's (and post-norm's second) norm; none: no block stages
    float eps = 1e-5f;                 // its eps
    bool post_norm = false;            // BERT: each sum normalised (the residual stream is the norms' output)
    activation act = activation::gelu_tanh;
    bool gated = false;                // Llama: act(gate_proj(h)) · up_proj(h)
    bool bias = true;                  // the MLP's linear layers have biases (GPT-2, BERT; not Llama)
    std::int64_t width = 0;            // F, the MLP's hidden width (intermediate_size, n_inner, 4·D)

    bool on() const { return norm != norm_kind::none; }
};

/// Which masks to apply; all that are on are combined with AND.
struct mask_spec {
    bool causal = false;   // query i may attend keys j <= i (j <= i + Sk - Sq when aligned lower-right)
    bool padding = false;  // keys j >= lengths[b] are masked in batch item b
    bool window = false;   // |i - j| <= window_size
    bool random = false;   // torch.manual_seed(random_seed); torch.rand(B,1,Sq,Sk) < random_keep

    causal_alignment causal_align = causal_alignment::upper_left;  // --causal-align; the same when Sq == Sk
    std::vector<std::int64_t> lengths;        // --lengths: one valid key length per batch item
    std::optional<std::int64_t> window_size;  // --window W
    std::uint64_t random_seed = 0;            // --mask-seed N
    double random_keep = 0.5;                 // --mask-keep P: probability that a key may be attended

    bool from_file = false;    // --mask-file: an explicit mask, combined into inputs::mask
    mask_convention file_convention = mask_convention::keep;  // how --mask-file is read
    bool key_padding = false;  // --key-padding-mask: [B,Sk]; combined into inputs::mask
    mask_convention key_padding_convention = mask_convention::mha;  // true = padded key, as nn.MultiheadAttention

    bool any() const { return causal || padding || window || random || from_file || key_padding; }
};

/// nn.Dropout(p) on the attention weights: only in training mode (stage 11), as in PyTorch.
struct dropout_spec {
    double p = 0.0;          // --dropout P: the chance that a weight is zeroed
    bool train = false;      // --train: training mode
    std::uint64_t seed = 0;  // --dropout-seed N: torch.manual_seed(N); keep = torch.rand(B,H,Sq,Sk) < 1 - p

    bool applied() const { return train && p > 0.0; }
};

/// What the run computes: the shapes, the parameters' presence, the masks, the fill, dropout,
/// positions, the norm and a deliberate mistake. Two runs of one spec, from the same tensors,
/// give the same bits.
struct model_spec {
    std::int64_t batch = 1;    // B
    std::int64_t seq = 4;      // Sq
    std::int64_t kv_seq = 4;   // Sk (the CLI defaults it to Sq)
    std::int64_t d_model = 8;  // D
    std::int64_t heads = 2;    // H
    std::int64_t d_in = 8;     // Din (the CLI defaults it to D)
    std::int64_t d_kv_in = 8;  // Dkv (the CLI defaults it to Din)

    bool qkv_bias = true;       // b_q, b_k, b_v exist (--no-qkv-bias turns them off)
    bool out_proj = true;       // the output projection exists (--no-out-proj)
    bool out_bias = true;       // it has a bias b_o (a Llama layer's o_proj has none)
    std::uint64_t seed = 0;     // torch.manual_seed(seed)
    bool separate_kv = false;   // keys and values come from their own x_kv (--kv-input or --cross)

    mask_spec mask;
    float fill = -std::numeric_limits<float>::infinity();  // written where the mask is false
    std::string fill_text;     // --fill as the user typed it ("-1e9"); empty = fill_to_string(fill)
    bool safe_softmax = false; // --safe-softmax: a row of -inf only gets 0 weights (torch._safe_softmax);
                               // other rows unchanged. validate(): only with the fill -inf
    dropout_spec dropout;
    attn::mistake mistake = attn::mistake::none;  // --mistake ID: compute the run with this mistake made
    int mistake_variant = 0;   // which way it is made (mistake_variants); --mistake makes way 0
    std::int64_t flash_block = 0;  // --flash-block N: flash attention's online softmax over blocks of N keys
                                   // (stage flash), next to the exact one; 0 = off

    // a decoding step with a KV cache (--past N) and grouped-query heads (--kv-heads G)
    std::int64_t past = 0;      // N, tokens already in the cache: x [B,N+Sq,Din], Sk = N + Sq; 0 = no cache
    std::int64_t kv_heads = 0;  // G, key/value heads (G divides H; 1 = multi-query); 0 = H, as nn.MultiheadAttention
    position_encoding pos = position_encoding::none;  // --pos
    double rope_base = 10000.0;                       // --rope-base: inv_freq = 1 / base^(2i/dk)
    rope_pairing rope_style = rope_pairing::half;     // --rope-style
    rope_scaling_spec rope_scaling;                   // config.json's rope_scaling (a model's layer)

    // a real model's layer (--params with a model's own names, model_layer.hpp)
    norm_kind norm = norm_kind::none;  // the norm stage: x normalised before the projections read it
    float norm_eps = 1e-5f;            // its eps (config.json's layer_norm_epsilon, rms_norm_eps, ...)
    block_spec block;                  // the residual and the MLP after attention

    std::int64_t head_dim() const { return d_model / heads; }  // dk
    std::int64_t kv_head_count() const { return kv_heads > 0 ? kv_heads : heads; }  // G
    std::int64_t kv_width() const { return kv_head_count() * head_dim(); }          // G·dk, k and v's width
    /// Whether k and v have fewer heads than q (the repeat_kv stage repeats them to H).
    bool grouped() const { return kv_head_count() < heads; }
    /// Cross-attention: keys and values come from x_kv, not from x. A decoding step (--past)
    /// has Sk = N + Sq keys of its own tokens: self-attention.
    bool cross() const { return separate_kv || (past == 0 && kv_seq != seq) || d_kv_in != d_in; }
};

/// Where the run's tensors come from: drawn (torch.manual_seed(seed), the default), read from
/// files, or looked up from a model's token ids. Which stages exist follows from it (no
/// input and params stages with --q --k --v).
struct run_sources {
    bool from_projections = false;  // --q --k --v: the run starts at stage 3 (no input, no params)
    bool x_from_file = false;       // --input: x was read, not drawn (likewise x_kv with --kv-input)
    bool x_kv_from_file = false;
    bool params_from_file = false;  // --params: the weights were read, not drawn

    std::string model;       // "gpt2 layer 1 of m.safetensors": what the weights are; empty: attn's own
    std::string model_arch;  // "gpt2", "bert", "llama", "mha" (model_layer.hpp); empty: attn's own
    std::vector<std::pair<std::string, std::string>> weight_sources;  // {"w_q", "h.1.attn.c_attn.weight[:, 0:16]ᵀ ..."}
    std::vector<std::int64_t> tokens;        // --tokens: the ids layer 0 starts from (stage embed); empty: x drawn or read
    bool tokens_from_text = false;           // --text gave them (the run line says so)
    std::vector<std::string> token_labels;  // --vocab: each id's token, escaped (printable_text); empty: none
};

/// What the run may hold (memory.hpp).
struct run_limits {
    std::uint64_t max_memory = 0;  // --max-memory: the bytes the run may hold; 0 = no limit
};

/// A run: the spec it computes, where its tensors come from, and its limits. What is shown
/// of it (stages, rows, heads, format) is the view's: render_options. A config's
/// fields are listed once, with their flags and JSON keys, in io/config_fields.hpp.
struct config : model_spec {
    run_sources sources;
    run_limits limits;
};

/// The position of the first query token: N in a decoding step (--past N), whose queries are
/// tokens N..N+Sq-1 and whose keys are 0..N+Sq-1; else 0.
inline std::int64_t first_query_position(const config& c) { return c.past; }

/// Throws usage_error naming the flag when a size or option is impossible ("--d-model 10 is
/// not divisible by --heads 4"). Sizes too large for memory are check_memory's (exit 1).
void validate(const config& c);

/// Sk of a decoding step, N + Sq (--past N, --seq Sq); a usage_error naming --past when the
/// sum does not fit 64 bits.
std::int64_t decoding_step_keys(std::int64_t past, std::int64_t seq);

/// Throws usage_error when a tensor of the run ([B,H,Sq,Sk], [B,Sq,Din], [D,Din], ...) would
/// take more than 2^47 bytes (128 TiB, what 64-bit user space can address), so that no size
/// derived from the flags can overflow. Sizes must be positive.
void check_addressable(const config& c);

/// Why a run of `c` cannot make c.mistake (c.mistake_variant), in words after "--mistake ID: ";
/// empty when it can. validate() throws it.
std::string mistake_problem(const config& c);

/// The fill that fill_value's way `variant` writes instead of c.fill (mistake_variants).
float mistaken_fill(const config& c, int variant);

/// "-inf", "1e+09", ...: the fill value as the user would write it.
std::string fill_to_string(float fill);

/// The fill as typed ("-1e9"), else fill_to_string(c.fill).
std::string fill_text(const config& c);

/// Whether `text` is a decimal number as Python reads it in a PyTorch line and as the table
/// shows it: [+-]digits[.digits][(e|E)[+-]digits], ".5" and "5." too; not hex ("0x1p3"),
/// "inf", "nan", spaces or "1_000". A --fill written otherwise is shown by its value.
bool is_decimal_number(std::string_view text);

/// Why the fill `typed` (as written, read as a double) says another number than its
/// float32, "" when it does not: a number so small that float32 makes it 0 or a subnormal
/// of fewer digits (1e-50 -> 0, 1e-40 -> 9.99995e-41). Finite values only.
std::string fill_underflow(double typed);

/// The names --mask-convention ("keep", "mha", "additive") and --causal-align ("upper-left",
/// "lower-right") take, and back (nullopt for an unknown name).
std::string_view mask_convention_name(mask_convention m);
std::optional<mask_convention> parse_mask_convention(std::string_view name);
std::string_view causal_alignment_name(causal_alignment a);
std::optional<causal_alignment> parse_causal_alignment(std::string_view name);

/// The names --pos ("none", "rope", "alibi", "sinusoidal") and --rope-style ("half",
/// "interleaved") take, and back (nullopt for an unknown name).
std::string_view position_encoding_name(position_encoding p);
std::optional<position_encoding> parse_position_encoding(std::string_view name);
std::string_view rope_pairing_name(rope_pairing r);
std::optional<rope_pairing> parse_rope_pairing(std::string_view name);

}  // namespace attn
