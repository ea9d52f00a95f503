#include "attn/compute/memory.hpp"

#include <algorithm>
#include <limits>

#include "attn/compute/error.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/mistake.hpp"

namespace attn {
namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

/// Product of sizes, saturating: absurd flags must give an error, not a wrap-around.
std::uint64_t product(std::initializer_list<std::int64_t> sizes) {
    std::uint64_t p = 1;
    for (std::int64_t s : sizes)
        if (__builtin_mul_overflow(p, static_cast<std::uint64_t>(s), &p)) return saturated;
    return p;
}

/// Sum of bytes, saturating.
std::uint64_t sum(std::initializer_list<std::uint64_t> terms) {
    std::uint64_t s = 0;
    for (std::uint64_t t : terms)
        if (__builtin_add_overflow(s, t, &s)) return saturated;
    return s;
}

std::uint64_t floats(std::uint64_t count) { return count > saturated / 4 ? saturated : count * 4; }

}  // namespace

std::vector<stage_bytes> estimate_stage_bytes(const config& c) {
    const std::int64_t B = c.batch, Sq = c.seq, Sk = c.kv_seq, D = c.d_model, H = c.heads, N = c.past;
    const std::int64_t Dg = c.kv_width(), S_kv = N > 0 ? Sq : Sk;  // k v's width G·dk, and tokens (the new ones in a step)
    const std::uint64_t qkv = floats(sum({product({B, Sq, D}), product({2, B, S_kv, Dg})}));  // q [B,Sq,D], k v [B,Sk,G·dk]
    const std::uint64_t plane = floats(product({B, H, Sq, Sk}));                           // [B,H,Sq,Sk]
    const std::uint64_t per_query = floats(product({B, Sq, D}));                           // [B,Sq,D]
    const std::uint64_t bias = c.qkv_bias ? sum({product({D}), product({2, c.kv_width()})}) : 0;

    const auto bytes_of = [&](stage_id id) -> std::uint64_t {
        // token [B,Sq,Din], position and token_type [Sq,Din] (--tokens: copies of the tables' rows)
        if (id == stage_id::embed) return floats(sum({product({B, Sq, c.d_in}), product({2, Sq, c.d_in})}));
        if (id == stage_id::input)  // x [B,Sq,Din] ([B,N+Sq,Din] in a step), x_kv [B,Sk,Dkv]
            return floats(sum({product({B, N > 0 ? Sk : Sq, c.d_in}), c.cross() ? product({B, Sk, c.d_kv_in}) : 0}));
        if (id == stage_id::params)
            return floats(sum({product({D, c.d_in}), product({2, Dg, c.d_kv_in}), bias,
                               c.out_proj ? sum({product({D, D}), c.out_bias ? product({D}) : 0}) : 0}));
        if (id == stage_id::projections) return qkv;
        // the normalised x [B,S,Din] (S = N + Sq in a decoding step), and the norm's weight and bias [Din]
        if (id == stage_id::norm) return floats(sum({product({B, N > 0 ? Sk : Sq, c.d_in}), product({2, c.d_in})}));
        // pe [S,Din] and x + pe [B,S,Din] (and for x_kv in cross-attention); S = N + Sq in a decoding step
        if (id == stage_id::positions) {
            const std::int64_t S = c.past + Sq;
            return floats(sum({product({S, c.d_in}), product({B, S, c.d_in}),
                               c.cross() ? sum({product({Sk, c.d_kv_in}), product({B, Sk, c.d_kv_in})}) : 0}));
        }
        // cos, sin [Sq,dk] and the rotated q [B,H,Sq,dk] and new k [B,G,Sq,dk]
        if (id == stage_id::rope) return floats(sum({product({2, Sq, c.head_dim()}), product({B, Sq, D}), product({B, S_kv, Dg})}));
        if (id == stage_id::alibi) return floats(product({H, Sq, Sk}));  // bias [1,H,Sq,Sk]
        // cache: k v [B,G,N,dk], views of their own projections [B,N,G·dk] (k a rotated copy with
        // --pos rope); append: torch.cat's copies [B,G,N+Sq,dk]; repeat_kv: repeat_interleave's copies [B,H,Sk,dk]
        if (id == stage_id::cache) return floats(product({2, B, N, Dg}));
        if (id == stage_id::append) return floats(product({2, B, Sk, Dg}));
        if (id == stage_id::repeat_kv) return floats(product({2, B, H, Sk, c.head_dim()}));
        // views of the storage before them (PyTorch's view and transpose): nothing of their own
        if (id == stage_id::view || id == stage_id::transpose || id == stage_id::merge) return 0;
        // the float copy in the trace plus the boolean mask it was built from
        if (id == stage_id::mask) return sum({floats(product({B, Sq, Sk})), product({B, Sq, Sk})});
        // concat copies merge, unless merge is contiguous already (one head or one query):
        // then merge.contiguous() is merge itself, and concat a view of it
        if (id == stage_id::concat) return H == 1 || Sq == 1 ? 0 : per_query;
        if (id == stage_id::context || id == stage_id::output) return per_query;
        if (id == stage_id::dropout) return sum({plane, plane});  // weights and the keep mask
        if (id == stage_id::flash) {  // m, l, rescale [B,H,Sq,nb]; acc [B,H,Sq,nb,dk] (nb times context); context
            const std::int64_t nb = Sk / c.flash_block + (Sk % c.flash_block != 0), dk = c.head_dim();
            return floats(sum({product({3, B, H, Sq, nb}), product({B, H, Sq, nb, dk}), product({B, H, Sq, dk})}));
        }
        return plane;  // scores, scaled, biased, masked, softmax
    };
    std::vector<stage_bytes> stages;
    for (const stage_info& info : stage_table)
        if (stage_in_run(c, info.id)) stages.push_back({info.id, info.name, bytes_of(info.id)});
    return stages;
}

std::uint64_t estimate_transient_bytes(const config& c) {
    // dropout's keep mask, drawn as booleans [B,H,Sq,Sk] before the stage holds it as floats
    return c.dropout.applied() ? product({c.batch, c.heads, c.seq, c.kv_seq}) : 0;
}

namespace {

/// The inputs themselves (x, the weights, given q k v) are held outside the trace while
/// it is computed: their stages' bytes count twice.
bool held_twice(const config& c, stage_id id) {
    return id == stage_id::input || id == stage_id::params || (id == stage_id::projections && c.from_projections);
}

/// The bytes of `stages` all held, the inputs twice.
std::uint64_t held_bytes(const config& c, const std::vector<stage_bytes>& stages) {
    std::uint64_t total = 0;
    for (const stage_bytes& s : stages) total = sum({total, s.bytes, held_twice(c, s.id) ? s.bytes : 0});
    return total;
}

/// "these sizes need ... (--max-memory); the largest stage(s) ...", naming the largest of `stages`.
[[noreturn]] void refuse(const config& c, std::uint64_t total, std::uint64_t limit_bytes, std::vector<stage_bytes> stages) {
    std::stable_sort(stages.begin(), stages.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    std::string largest;
    std::size_t count = 0;
    for (const auto& s : stages) {
        if (s.bytes != stages[0].bytes) break;
        largest += (count++ == 0 ? "" : ", ") + std::string(s.stage);
    }
    // streamed in blocks of rows, a [B,H,Sq,Sk] stage is never held whole: its size then
    // says what a row at a time saves, not a part of the total
    const bool in_rows = stages[0].bytes > total;
    const std::string size = in_rows ? " (" + format_bytes(stages[0].bytes) + (count == 1 ? "" : " each") +
                                           " whole, computed here a row at a time)"
                                     : " at " + format_bytes(stages[0].bytes) + (count == 1 ? "" : " each");
    throw error("these sizes need " + format_bytes(total) + " but the limit is " + format_bytes(limit_bytes) +
                " (--max-memory); " +
                (count == 1 ? "the largest stage is " : "the largest stages are ") + largest + size +
                ", for [B,H,Sq,Sk] = [" + std::to_string(c.batch) + "," + std::to_string(c.heads) + "," +
                std::to_string(c.seq) + "," + std::to_string(c.kv_seq) + "]");
}

/// The stages `plan` needs, with their bytes.
std::vector<stage_bytes> needed_stage_bytes(const config& c, const stage_plan& plan) {
    const stage_set needed = stages_needed(c, plan.shown);
    std::vector<stage_bytes> stages;
    for (const stage_bytes& s : estimate_stage_bytes(c))
        if (needed & stage_bit(s.id)) stages.push_back(s);
    return stages;
}

/// A streaming run's bytes outside the [B,H,Sq,Sk] stages: the inputs, the stages it
/// holds while later ones need them (q k v, the mask, context, concat, output), and the
/// input and params stages' copies when shown.
std::uint64_t held_outside_planes(const config& c, const stage_plan& plan) {
    std::uint64_t total = 0;
    for (const stage_bytes& s : estimate_stage_bytes(c))
        if (held_twice(c, s.id)) total = sum({total, s.bytes});  // the inputs themselves, held to the end
    for (const stage_bytes& s : needed_stage_bytes(c, plan)) {
        if (info_of(s.id).plane) continue;
        const bool input_copy = s.id == stage_id::input || s.id == stage_id::params;
        if (input_copy && !plan.shows(s.id)) continue;
        if (s.id == stage_id::mask && !plan.shows(stage_id::mask)) {  // the booleans only: no float copy is made
            if (!mask_rows::make_all_of(c)) total = sum({total, product({c.batch, c.seq, c.kv_seq})});  // else none held
            continue;
        }
        total = sum({total, s.bytes});
    }
    return total;
}

/// The [B,H,Sq,Sk] stages' bytes for a streaming run: one tensor shared in place (and
/// dropout's keep), or one block of rows (and its draws) plus a copy of a K and a V plane.
std::uint64_t plane_bytes(const config& c, const stage_plan& plan, std::size_t block_rows) {
    const stage_set needed = stages_needed(c, plan.shown);
    if (std::none_of(stage_table.begin(), stage_table.end(),
                     [&](const stage_info& info) { return info.plane && (needed & stage_bit(info.id)); }))
        return 0;
    const std::int64_t B = c.batch, H = c.heads, Sq = c.seq, Sk = c.kv_seq;
    const std::uint64_t copies = (needed & stage_bit(stage_id::dropout)) ? 2 : 1;
    if (plan.layout == plane_layout::whole_tensor)
        return floats(product({static_cast<std::int64_t>(copies), B, H, Sq, Sk}));
    const std::int64_t rows = static_cast<std::int64_t>(block_rows);
    return sum({floats(product({static_cast<std::int64_t>(copies), rows, std::max(Sq, Sk)})),
                floats(product({2, std::max(Sq, Sk), c.d_model / std::max<std::int64_t>(H, 1)}))});
}

/// --stats' per-row statistics of the weights tensors shown (softmax's, dropout's): an entropy
/// (double), the largest weight (float) and its key (int64), and the keys above 0 (uint32) per
/// row [B,H,Sq], kept to the end of the run.
std::uint64_t row_statistics_bytes(const config& c, const stage_plan& plan) {
    if (!plan.row_statistics) return 0;
    constexpr std::int64_t bytes_per_row = 8 + 4 + 8 + 4;
    std::uint64_t total = 0;
    for (stage_id id : {stage_id::softmax, stage_id::dropout})
        if (plan.shows(id)) total = sum({total, product({bytes_per_row, c.batch, c.heads, c.seq})});
    return total;
}

}  // namespace

std::uint64_t estimate_total_bytes(const config& c) {
    return sum({estimate_transient_bytes(c), held_bytes(c, estimate_stage_bytes(c))});
}

void check_memory(const config& c, std::uint64_t limit_bytes) {
    const std::uint64_t total = estimate_total_bytes(c);
    if (total <= limit_bytes) return;
    refuse(c, total, limit_bytes, estimate_stage_bytes(c));
}

void check_mask_views_memory(const config& c, std::uint64_t limit_bytes) {
    const std::uint64_t cells = product({c.batch, c.seq, c.kv_seq});
    // keep, and the files' mask beside it, as booleans; keep, mha, sdpa and additive as floats
    const std::uint64_t need = sum({cells, c.mask.from_file || c.mask.key_padding ? cells : 0,
                                    floats(product({4, c.batch, c.seq, c.kv_seq}))});
    if (need <= limit_bytes) return;
    throw error("the mask [B,1,Sq,Sk] = [" + std::to_string(c.batch) + ",1," + std::to_string(c.seq) + "," +
                std::to_string(c.kv_seq) + "] in four conventions needs " + format_bytes(need) +
                " but the limit is " + format_bytes(limit_bytes) + " (--max-memory)");
}

void check_least_memory(const config& c, std::uint64_t limit_bytes) {
    stage_plan leanest;
    leanest.show(stage_id::input);
    leanest.sink_keeps = false;
    if (c.mask.any() && !mask_rows::make_all_of(c)) leanest.show(stage_id::mask);  // that mask is held whole
    leanest.layout = plane_layout::in_rows;
    leanest.block_rows = 1;
    const std::uint64_t least = estimate_plan_bytes(c, leanest, false);
    if (least > limit_bytes) check_memory(c, limit_bytes);  // names the whole run's need
}

std::uint64_t estimate_plan_bytes(const config& c, const stage_plan& plan, bool keeps) {
    if (keeps) return sum({held_bytes(c, needed_stage_bytes(c, plan)), row_statistics_bytes(c, plan)});
    const std::size_t rows = plan.block_rows != 0 ? plan.block_rows : static_cast<std::size_t>(c.seq);
    return sum({held_outside_planes(c, plan), plane_bytes(c, plan, rows), row_statistics_bytes(c, plan)});
}

void plan_memory(const config& c, stage_plan& plan, bool keeps, std::uint64_t limit_bytes, std::size_t block_rows) {
    const std::size_t plane_rows = static_cast<std::size_t>(c.mistake == mistake::q_k_swapped ? c.kv_seq : c.seq);
    const stage_set needed = stages_needed(c, plan.shown);
    std::size_t shown_planes = 0;
    for (const stage_info& info : stage_table)
        if (info.plane && (needed & stage_bit(info.id)) && plan.shows(info.id)) ++shown_planes;
    const auto need = [&] { return estimate_plan_bytes(c, plan, keeps); };
    const auto fits = [&] { return need() <= limit_bytes; };
    plan.sink_keeps = keeps;
    plan.layout = plane_layout::whole_tensor;
    plan.block_rows = 0;
    const bool rows_possible = !keeps && c.mistake != mistake::softmax_axis && c.mistake != mistake::weights_transposed;
    if (rows_possible && block_rows != 0) {
        plan.layout = plane_layout::in_rows;
        plan.block_rows = std::min(block_rows, std::max<std::size_t>(plane_rows, 1));
        if (fits()) return;
    } else if (rows_possible && shown_planes <= 1) {
        plan.layout = plane_layout::in_rows;
        plan.block_rows = plane_rows;  // a whole plane: the bits of the whole tensor
    }
    if (fits()) return;
    if (!rows_possible) refuse(c, need(), limit_bytes, needed_stage_bytes(c, plan));
    plan.layout = plane_layout::in_rows;
    // as many rows as fit: the bytes grow by the same amount with each row
    plan.block_rows = 1;
    const std::uint64_t one = need();
    if (one > limit_bytes) refuse(c, one, limit_bytes, needed_stage_bytes(c, plan));
    plan.block_rows = 2;
    const std::uint64_t per_row = need() - one;
    const std::uint64_t more = per_row == 0 ? plane_rows : (limit_bytes - one) / per_row;
    plan.block_rows = static_cast<std::size_t>(std::min<std::uint64_t>(plane_rows, 1 + more));
    if (plan.block_rows == 0) plan.block_rows = 1;
}

}  // namespace attn
