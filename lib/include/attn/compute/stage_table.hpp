#pragma once
// The stages of multi-head attention (CLI.md, "The stages"): every fact about a stage in one
// row of stage_table; names and numbers are parsed once, on the command line (find_stage_info).
// A fact another layer keeps (how render/ shows a stage, teach/'s explanation) is a table of
// its own, one row per stage in stage_id order, checked by one_row_per_stage at compile time:
// a new stage_id fails to build until every such table has its row.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

struct config;

/// The stages in the order a run computes them: stage_table[static_cast<std::size_t>(id)] is
/// id's row, and `a < b` means a comes before b.
enum class stage_id : std::uint8_t {
    embed, input, params, norm, positions, projections, view, transpose, rope,
    cache, append, repeat_kv,
    scores, scaled, alibi, biased, mask, masked, softmax, dropout,
    context, flash, merge, concat,
    output,
    residual, mlp_norm, mlp, block,  // block: the last, stage_count counts up to it
};
inline constexpr std::size_t stage_count = static_cast<std::size_t>(stage_id::block) + 1;

/// Why a run may lack a stage.
enum class absent_unless : std::uint8_t {
    always_there,
    drawn_or_read,  // input, params: not when the run starts at the projections (--q --k --v)
    masked,         // mask, masked: only with a mask
    training,       // dropout: only with --dropout P > 0 and --train
    out_proj,       // output: not with --no-out-proj
    cached,         // cache, append: only with --past N > 0 (a decoding step)
    grouped,        // repeat_kv: only with --kv-heads G < H (grouped-query)
    flash_block,    // flash: only with --flash-block N
    pos_sinusoidal, // positions: only with --pos sinusoidal
    pos_rope,       // rope: only with --pos rope
    pos_alibi,      // alibi, biased: only with --pos alibi
    pre_norm,       // norm: only for a model layer that normalises x before attention (GPT-2, Llama)
    from_tokens,    // embed: only with --tokens (a model's layer 0 from its token embeddings)
    model_block,    // residual, mlp_norm, mlp, block: only for a model's layer whose file has its MLP
};

/// A set of stages, as a bit per stage_id.
using stage_set = std::uint32_t;
static_assert(stage_count <= 32, "a stage_set holds a bit per stage");
constexpr stage_set stage_bit(stage_id id) { return stage_set{1} << static_cast<unsigned>(id); }
template <typename... Ids>
constexpr stage_set stages(Ids... ids) { return (stage_set{0} | ... | stage_bit(ids)); }

/// The number printed beside a stage: CLI.md's 1..15, or for a stage added since, the number
/// of the classic stage before it and a letter ("5a" rope, "5b" cache), or 0 (embed, before
/// input). Ordered as printed, so the numbers of a run increase down the page.
struct stage_step {
    int number = 0;
    char letter = '\0';  // 'a', 'b', ...; '\0' for CLI.md's numbers and 0

    /// "5a", "10".
    std::string text() const { return std::to_string(number) + (letter != '\0' ? std::string(1, letter) : ""); }
    /// Whether it is one of CLI.md's numbers (or 0): JSON writes it as an integer.
    constexpr bool plain() const { return letter == '\0'; }
    constexpr bool operator<(stage_step o) const { return number < o.number || (number == o.number && letter < o.letter); }
    constexpr bool operator==(stage_step o) const { return number == o.number && letter == o.letter; }
    constexpr bool operator!=(stage_step o) const { return !(*this == o); }
    constexpr bool operator<=(stage_step o) const { return !(o < *this); }
};

struct stage_info {
    stage_id id;
    stage_step step;           // what is printed beside it: 1..15 CLI.md's table, 5a ... the stages added since
    std::string_view name;     // "scores": the key in JSON and the --stage name
    std::string_view title;    // what happened, in words
    std::string_view formula;  // what happened, in symbols (teach/stage_text.hpp says it for a run)
    std::array<std::string_view, 8> tensors;  // what it can hold, in order ("" after the last)
    bool plane;                // its tensors are [B,H,Sq,Sk], made by the plane steps a block of rows at a time
    stage_set reads;           // the stages it is computed from
    bool reads_previous_plane; // and the plane stage before it in this run (softmax: masked or scaled)
    absent_unless absent;
};

// clang-format off
inline constexpr std::array<stage_info, stage_count> stage_table{{
    // --tokens: a model's embedding tables looked up for the ids; input.x is their sum, the residual stream
    {stage_id::embed, {0}, "embed", "the model's embedding rows for the token ids (and for their positions)",
     "token = wte[ids] [B,S,D]; position = wpe[0..S-1] [S,D]; x = token + position (BERT: + token_type[0]; Llama: token alone)",
     {"token", "position", "token_type"}, false, 0, false, absent_unless::from_tokens},
    {stage_id::input, {1}, "input", "the token embeddings",
     "x = torch.randn(B,Sq,Din); x_kv = torch.randn(B,Sk,Dkv) if cross",
     {"x", "x_kv"}, false, 0, false, absent_unless::drawn_or_read},
    {stage_id::params, {2}, "params", "weights in nn.Linear layout [out, in]", "y = x·Wᵀ + b",
     {"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"}, false, 0, false, absent_unless::drawn_or_read},
    // a model's layer (--params with GPT-2's or Llama's names): x normalised before the projections read it
    {stage_id::norm, {2, 'a'}, "norm", "the layer's input normalised before attention (GPT-2's ln_1, Llama's RMSNorm)",
     "x = LayerNorm(x)·weight + bias, or RMSNorm: x·rsqrt(mean(x²) + eps)·weight",
     {"x", "weight", "bias"}, false, 0, false, absent_unless::pre_norm},
    {stage_id::positions, {2, 'b'}, "positions", "sinusoidal positions added to the token embeddings",
     "pe[p,2i] = sin(p·e^(-2i·ln(10000)/Din)), pe[p,2i+1] = cos(...); x = x + pe",
     {"pe", "x", "pe_kv", "x_kv"}, false, stages(stage_id::norm), false, absent_unless::pos_sinusoidal},
    // the projections read the inputs themselves: input and params are computed only when shown
    {stage_id::projections, {3}, "projections", "queries, keys and values",
     "Q = X·W_qᵀ + b_q, K = X_kv·W_kᵀ + b_k, V = X_kv·W_vᵀ + b_v",
     {"q", "k", "v"}, false, stages(stage_id::norm, stage_id::positions), false, absent_unless::always_there},
    {stage_id::view, {4}, "view", "split the last axis into heads (no data moves)", "[B,S,D] -> [B,S,H,dk]",
     {"q", "k", "v"}, false, stages(stage_id::projections), false, absent_unless::always_there},
    {stage_id::transpose, {5}, "transpose", "heads become a batch axis", "[B,S,H,dk] -> [B,H,S,dk]",
     {"q", "k", "v"}, false, stages(stage_id::view), false, absent_unless::always_there},
    {stage_id::rope, {5, 'a'}, "rope", "queries and keys rotated by angles proportional to their positions",
     "q·cos + rotate_half(q)·sin, k·cos + rotate_half(k)·sin; θ = pos / base^(2i/dk)",
     {"cos", "sin", "q", "k"}, false, stages(stage_id::transpose), false, absent_unless::pos_rope},
    // a decoding step (--past N): the cache is computed from x's first N tokens and the weights
    {stage_id::cache, {5, 'b'}, "cache", "the keys and values of the N earlier tokens, kept from the steps before",
     "past_k = (X[:, :N]·W_kᵀ + b_k).view(B,N,G,dk).transpose(1, 2); past_v likewise",
     {"k", "v"}, false, stages(stage_id::norm, stage_id::positions), false, absent_unless::cached},
    {stage_id::append, {5, 'c'}, "append", "the new tokens' keys and values appended to the cache",
     "K = torch.cat((past_k, k), dim=2), V = torch.cat((past_v, v), dim=2)",
     {"k", "v"}, false, stages(stage_id::transpose, stage_id::rope, stage_id::cache), false, absent_unless::cached},
    {stage_id::repeat_kv, {5, 'd'}, "repeat_kv", "each key/value head repeated for the H/G query heads it serves",
     "K.repeat_interleave(H/G, dim=1), V likewise",
     {"k", "v"}, false, stages(stage_id::transpose, stage_id::rope, stage_id::append), false, absent_unless::grouped},
    {stage_id::scores, {6}, "scores", "every query against every key, per head", "Q·Kᵀ",
     {"scores"}, true, stages(stage_id::transpose, stage_id::rope, stage_id::append, stage_id::repeat_kv), false,
     absent_unless::always_there},
    {stage_id::scaled, {7}, "scaled", "scores scaled by the square root of the head width", "Q·Kᵀ / √dk",
     {"scaled"}, true, stages(stage_id::scores), false, absent_unless::always_there},
    {stage_id::alibi, {7, 'a'}, "alibi", "a linear penalty for distance, one slope per head",
     "bias[0,h,i,j] = -m_h·(i - j), m_h = 2^(-8(h+1)/P) for h < P = 2^⌊log2 H⌋, then 2^(-4(2(h-P)+1)/P)",
     {"bias"}, false, 0, false, absent_unless::pos_alibi},
    {stage_id::biased, {7, 'b'}, "biased", "scaled scores plus the ALiBi bias", "scaled + bias",
     {"biased"}, true, stages(stage_id::scaled), false, absent_unless::pos_alibi},
    {stage_id::mask, {8}, "mask", "where each query may attend (true = may attend)",
     "mask[b,0,i,j]: may query i attend key j?",
     {"mask"}, false, 0, false, absent_unless::masked},
    {stage_id::masked, {9}, "masked", "scaled scores with the fill value where the mask is false",
     "masked_fill(mask == false, fill)",
     {"masked"}, true, stages(stage_id::scaled, stage_id::mask), true, absent_unless::masked},
    {stage_id::softmax, {10}, "softmax", "attention weights: softmax over the key axis (last)",
     "softmax(masked, biased or scaled, dim=-1)",
     {"weights"}, true, 0, true, absent_unless::always_there},
    {stage_id::dropout, {11}, "dropout", "weights after dropout (training mode only)", "weights · keep / (1 - p)",
     {"weights", "keep"}, true, stages(stage_id::softmax), false, absent_unless::training},
    {stage_id::context, {12}, "context", "each query's weighted sum of the values", "weights·V",
     {"context"}, false, stages(stage_id::transpose, stage_id::append, stage_id::repeat_kv), true,
     absent_unless::always_there},
    // the tiled online softmax over blocks of N keys, from the q, k, v and mask the planes read;
    // it reads context too, to report how far its own context is from the exact one
    {stage_id::flash, {12, 'a'}, "flash", "flash attention: online softmax over blocks of keys",
     "m = max(m, rowmax(S_j)); l = e^(m_old-m)·l + Σ e^(S_j-m); acc = e^(m_old-m)·acc + e^(S_j-m)·V_j; context = acc / l",
     {"m", "l", "rescale", "acc", "context"}, false,
     stages(stage_id::transpose, stage_id::rope, stage_id::append, stage_id::repeat_kv, stage_id::mask,
             stage_id::context), false, absent_unless::flash_block},
    {stage_id::merge, {13}, "merge", "transpose back: heads next to each other per position",
     "[B,H,Sq,dk] -> [B,Sq,H,dk]",
     {"context"}, false, stages(stage_id::context), false, absent_unless::always_there},
    {stage_id::concat, {14}, "concat", "heads side by side again", "[B,Sq,H,dk] -> [B,Sq,D]",
     {"concat"}, false, stages(stage_id::merge), false, absent_unless::always_there},
    {stage_id::output, {15}, "output", "the output projection", "out = concat·W_oᵀ + b_o",
     {"out"}, false, stages(stage_id::concat), false, absent_unless::out_proj},
    {stage_id::residual, {15, 'a'}, "residual", "the attention's output added to the layer's input (the residual stream)",
     "x = x + out", {"x"}, false, stages(stage_id::output), false, absent_unless::model_block},
    {stage_id::mlp_norm, {15, 'b'}, "mlp_norm", "the residual stream normalised for the MLP (GPT-2's ln_2, Llama's "
     "post_attention_layernorm, BERT's attention.output.LayerNorm)", "norm(x)",
     {"x", "weight", "bias"}, false, stages(stage_id::residual), false, absent_unless::model_block},
    {stage_id::mlp, {15, 'c'}, "mlp", "the feed-forward network, each position alone: up, the activation, down",
     "out = act(h·W_upᵀ + b_up)·W_downᵀ + b_down", {"gate", "up", "hidden", "out"}, false,
     stages(stage_id::mlp_norm), false, absent_unless::model_block},
    {stage_id::block, {15, 'd'}, "block", "the block's output: the MLP's output added to the residual stream "
     "(Hugging Face's hidden_states[L+1])", "x = x + mlp", {"sum", "x"}, false,
     stages(stage_id::residual, stage_id::mlp_norm, stage_id::mlp), false, absent_unless::model_block},
}};
// clang-format on

/// Whether `rows`, a table indexed by stage_id, holds row i for stage i (its `id`) for every
/// stage. Each such table says so in a static_assert: a row missing, extra or out of place
/// stops the build (a missing last row is value-initialised, stage_id{0}, and fails too).
template <typename Row>
constexpr bool one_row_per_stage(const std::array<Row, stage_count>& rows) {
    for (std::size_t i = 0; i < stage_count; ++i)
        if (rows[i].id != static_cast<stage_id>(i)) return false;
    return true;
}
static_assert(one_row_per_stage(stage_table));

/// Whether the steps of stage_table increase down it (a new stage needs a number between those
/// of the stages around it).
constexpr bool steps_increase() {
    for (std::size_t i = 1; i < stage_count; ++i)
        if (!(stage_table[i - 1].step < stage_table[i].step)) return false;
    return true;
}
static_assert(steps_increase(), "every stage's number lies between those of the stages around it");

constexpr const stage_info& info_of(stage_id id) { return stage_table[static_cast<std::size_t>(id)]; }

/// The entry of stage_table called `name`, or numbered `step`, or nullptr.
const stage_info* find_stage_info(std::string_view name);
const stage_info* find_stage_info(stage_step step);

/// The step written `text` ("10", "5a"), or nullopt when it is not digits and at most one
/// lower-case letter.
std::optional<stage_step> parse_step(std::string_view text);

/// The stage that was numbered `number` before the stages added since 15 had lettered numbers
/// (16 positions ... 25 embed; now 2b ... 0), or nullptr: --stage still takes them, with a warning.
const stage_info* find_former_step(int number);

/// The stages that can hold a tensor called `tensor`, in order ("weights": softmax and dropout).
std::vector<const stage_info*> stages_holding(std::string_view tensor);

/// The stage numbers as an error message states them: "0 to 15, 2a, 2b, 5a to 5d, 7a, 7b, 12a".
std::string stage_numbers_list();

/// What --stage accepts, for an error message: "the stages: input, params, ...; or their
/// numbers, 0 to 15, 2a, ...".
std::string stage_choices();

/// Whether a run of `c` has the stage (its row's absent_unless).
bool stage_in_run(const config& c, stage_id id);
bool stage_in_run(const config& c, std::string_view name);

/// Why a run lacks the stage, in the words of its flags ("it is off with --no-out-proj").
std::string_view absent_because(stage_id id);

/// The stages a run of `c` computes to show `shown`: those and, in turn, every stage they read;
/// stages the run does not have left out.
stage_set stages_needed(const config& c, stage_set shown);

}  // namespace attn
