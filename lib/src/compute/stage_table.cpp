#include "attn/compute/stage_table.hpp"

#include <algorithm>
#include <utility>

#include "attn/compute/config.hpp"

namespace attn {

const stage_info* find_stage_info(std::string_view name) {
    for (const auto& info : stage_table)
        if (info.name == name) return &info;
    return nullptr;
}

const stage_info* find_stage_info(stage_step step) {
    for (const auto& info : stage_table)
        if (info.step == step) return &info;
    return nullptr;
}

std::optional<stage_step> parse_step(std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    if (digits == 0 || digits > 3 || text.size() > digits + 1) return std::nullopt;
    stage_step step;
    for (std::size_t i = 0; i < digits; ++i) step.number = step.number * 10 + (text[i] - '0');
    if (text.size() == digits) return step;
    if (text[digits] < 'a' || text[digits] > 'z') return std::nullopt;
    step.letter = text[digits];
    return step;
}

const stage_info* find_former_step(int number) {
    // the numbers printed until the stages added since 15 were lettered
    constexpr std::pair<int, stage_id> former[] = {
        {16, stage_id::positions}, {17, stage_id::rope},   {18, stage_id::cache}, {19, stage_id::append},
        {20, stage_id::repeat_kv}, {21, stage_id::alibi},  {22, stage_id::biased}, {23, stage_id::flash},
        {24, stage_id::norm},      {25, stage_id::embed},
    };
    for (const auto& [n, id] : former)
        if (n == number) return &info_of(id);
    return nullptr;
}

std::vector<const stage_info*> stages_holding(std::string_view tensor) {
    std::vector<const stage_info*> found;
    if (tensor.empty()) return found;
    for (const auto& info : stage_table)
        for (std::string_view name : info.tensors)
            if (name == tensor) found.push_back(&info);
    return found;
}

std::string stage_numbers_list() {
    // runs of numbers one after another: "0 to 15", then the lettered ones, "5a to 5d"
    std::vector<std::vector<stage_step>> runs;
    for (const bool plain : {true, false}) {
        std::vector<stage_step> steps;
        for (const auto& info : stage_table)
            if (info.step.plain() == plain) steps.push_back(info.step);
        std::sort(steps.begin(), steps.end());
        for (const stage_step& step : steps) {
            const bool follows = !runs.empty() && runs.back().back().plain() == plain &&
                                 (plain ? runs.back().back().number + 1 == step.number
                                        : runs.back().back().number == step.number &&
                                              runs.back().back().letter + 1 == step.letter);
            if (follows) runs.back().push_back(step);
            else runs.push_back({step});
        }
    }
    std::string list;
    const auto add = [&list](const std::string& text) { list += (list.empty() ? "" : ", ") + text; };
    for (const std::vector<stage_step>& run : runs) {
        if (run.size() >= 3) {
            add(run.front().text() + " to " + run.back().text());
            continue;
        }
        for (const stage_step& step : run) add(step.text());
    }
    return list;
}

std::string stage_choices() {
    std::string names;  // in order, joined with ", "
    for (const auto& info : stage_table) names += (names.empty() ? "" : ", ") + std::string(info.name);
    return "the stages: " + names + "; or their numbers, " + stage_numbers_list();
}

bool stage_in_run(const config& c, stage_id id) {
    switch (info_of(id).absent) {
        case absent_unless::drawn_or_read: return !c.sources.from_projections;
        case absent_unless::masked: return c.mask.any();
        case absent_unless::training: return c.dropout.applied();
        case absent_unless::out_proj: return c.out_proj;
        case absent_unless::cached: return c.past > 0;
        case absent_unless::grouped: return c.grouped();
        case absent_unless::flash_block: return c.flash_block > 0;
        case absent_unless::pos_sinusoidal: return c.pos == position_encoding::sinusoidal && !c.sources.from_projections;
        case absent_unless::pos_rope: return c.pos == position_encoding::rope;
        case absent_unless::pos_alibi: return c.pos == position_encoding::alibi;
        case absent_unless::pre_norm: return c.norm != norm_kind::none && !c.sources.from_projections;
        case absent_unless::from_tokens: return !c.sources.tokens.empty() && !c.sources.from_projections;
        case absent_unless::model_block: return c.block.on() && c.out_proj && !c.sources.from_projections;
        case absent_unless::always_there: break;
    }
    return true;
}

bool stage_in_run(const config& c, std::string_view name) {
    const stage_info* info = find_stage_info(name);
    return info != nullptr && stage_in_run(c, info->id);
}

std::string_view absent_because(stage_id id) {
    switch (info_of(id).absent) {
        case absent_unless::drawn_or_read: return "the run starts at the projections, with --q --k --v";
        case absent_unless::masked: return "it needs --mask, --mask-file or --key-padding-mask";
        case absent_unless::training: return "it needs --dropout P with P > 0 and --train";
        case absent_unless::out_proj: return "it is off with --no-out-proj";
        case absent_unless::cached: return "it needs --past N with N > 0 (a decoding step with a KV cache)";
        case absent_unless::grouped: return "it needs --kv-heads G with G < --heads (grouped-query attention)";
        case absent_unless::flash_block: return "it needs --flash-block N (keys per block)";
        case absent_unless::pos_sinusoidal: return "it needs --pos sinusoidal";
        case absent_unless::pos_rope: return "it needs --pos rope";
        case absent_unless::pos_alibi: return "it needs --pos alibi";
        case absent_unless::pre_norm: return "it needs --params with a GPT-2 or Llama layer (their norm before attention)";
        case absent_unless::from_tokens: return "it needs --tokens with a GPT-2, BERT or Llama --params file (layer 0)";
        case absent_unless::model_block:
            return "it needs --params with a GPT-2, BERT or Llama layer whose file holds its MLP (and the output projection)";
        case absent_unless::always_there: break;
    }
    return "every run has it";
}

stage_set stages_needed(const config& c, stage_set shown) {
    stage_set in_run = 0;
    for (const stage_info& info : stage_table)
        if (stage_in_run(c, info.id)) in_run |= stage_bit(info.id);
    stage_set needed = shown & in_run;
    // from the last stage back, each needed stage marks what it reads
    for (std::size_t i = stage_count; i-- > 0;) {
        const stage_info& info = stage_table[i];
        if (!(needed & stage_bit(info.id))) continue;
        needed |= info.reads;
        if (info.reads_previous_plane)
            for (std::size_t j = i; j-- > 0;)
                if (stage_table[j].plane && stage_in_run(c, stage_table[j].id)) {
                    needed |= stage_bit(stage_table[j].id);
                    break;
                }
    }
    return needed & in_run;
}

}  // namespace attn
