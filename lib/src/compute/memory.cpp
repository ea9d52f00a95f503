#include "attn/compute/memory.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "attn/compute/error.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/run_plan.hpp"

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
    std::vector<stage_bytes> stages;
    for (const planned_stage& s : make_plan(c).stages) stages.push_back({s.id, info_of(s.id).name, s.bytes});
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
    return id == stage_id::input || id == stage_id::params || (id == stage_id::projections && c.sources.from_projections);
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
    // attn mask writes a row at a time (mask_stream.hpp): per key, the row's booleans in the
    // two reads the table compares, a random mask's draws (floats) in each, and the text of a
    // row in the four conventions: a cell of at most max(the key's digits, the fill as typed,
    // 24 for a float as JSON dumps it) characters and a separator. The mask files, as read
    // [B,1,Sq,Sk] booleans, are held whole.
    const std::uint64_t cell = std::max<std::uint64_t>({std::to_string(c.kv_seq).size(), fill_text(c).size(), 24}) + 1;
    const std::uint64_t per_key = 2 * (1 + (c.mask.random ? 4 : 0)) + 4 * cell;
    const std::uint64_t row = product({static_cast<std::int64_t>(per_key), c.kv_seq});
    const std::uint64_t files = c.mask.from_file || c.mask.key_padding ? product({c.batch, c.seq, c.kv_seq}) : 0;
    const std::uint64_t need = sum({row, files});
    if (need <= limit_bytes) return;
    throw error("these sizes need " + format_bytes(need) + " but the limit is " + format_bytes(limit_bytes) +
                " (--max-memory); attn mask writes the mask [B,1,Sq,Sk] = [" + std::to_string(c.batch) + ",1," +
                std::to_string(c.seq) + "," + std::to_string(c.kv_seq) + "] a row at a time: a row of " +
                std::to_string(c.kv_seq) + " keys in four conventions takes " + format_bytes(row) +
                (files != 0 ? ", and the mask files as read " + format_bytes(files) : std::string()));
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
