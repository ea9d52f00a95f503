#include "attn/compute/config.hpp"

#include <cmath>
#include <limits>

#include "attn/compute/checked.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/rope_frequencies.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

void require_positive(std::int64_t value, const char* flag) {
    if (value <= 0)
        throw usage_error(std::string(flag) + " " + std::to_string(value) + " must be at least 1");
}

void validate_mask(const config& c) {
    const mask_spec& m = c.mask;
    if (m.padding) {
        if (m.lengths.empty())
            throw usage_error("--mask padding needs --lengths n1,n2,... (one valid key length per batch item)");
        if (static_cast<std::int64_t>(m.lengths.size()) != c.batch)
            throw usage_error("--lengths has " + std::to_string(m.lengths.size()) +
                              (m.lengths.size() == 1 ? " value" : " values") + " but --batch is " +
                              std::to_string(c.batch) + " (one length per batch item)");
        for (std::int64_t n : m.lengths)
            if (n < 0 || n > c.kv_seq)
                throw usage_error("--lengths " + std::to_string(n) + " is outside 0.." + std::to_string(c.kv_seq) +
                                  " (the key length, --kv-seq)");
    } else if (!m.lengths.empty()) {
        throw usage_error("--lengths is given but --mask has no padding (use --mask padding)");
    }
    if (m.window && !m.window_size)
        throw usage_error("--mask window needs --window W (query i may attend keys j with |i - j| <= W)");
    if (!m.window && m.window_size)
        throw usage_error("--window is given but --mask has no window (use --mask window)");
    if (m.window_size && *m.window_size < 0)
        throw usage_error("--window " + std::to_string(*m.window_size) + " must be 0 or more");
    if (m.random && !(m.random_keep >= 0.0 && m.random_keep <= 1.0))
        throw usage_error("--mask-keep " + shortest_text(m.random_keep) + " must be between 0 and 1");
}

/// --past N (a decoding step over the run's own tokens) and --kv-heads G (G divides H).
void validate_cache(const config& c) {
    if (c.past < 0) throw usage_error("--past " + std::to_string(c.past) + " must be 0 or more");
    if (c.kv_heads < 0 || c.kv_heads > c.heads || (c.kv_heads > 0 && c.heads % c.kv_heads != 0))
        throw usage_error("--kv-heads " + std::to_string(c.kv_heads) + " must divide --heads " +
                          std::to_string(c.heads) + " (1 <= G <= H: each kv head serves H/G query heads)");
    if (c.past == 0) return;
    const std::string past = "--past " + std::to_string(c.past);
    if (c.sources.from_projections)
        throw usage_error(past + " computes the cache from x, but --q/--k/--v start the run after the inputs");
    if (c.separate_kv)
        throw usage_error(past + " is a decoding step of self-attention: keys and values come from the same "
                                 "tokens as the queries, so it takes no --cross or --kv-input");
    if (c.d_kv_in != c.d_in)
        throw usage_error(past + " is a decoding step of self-attention: --d-kv-in " + std::to_string(c.d_kv_in) +
                          " must equal --d-in " + std::to_string(c.d_in) + " (or be left out)");
    const std::int64_t keys = decoding_step_keys(c.past, c.seq);
    if (c.kv_seq != keys)
        throw usage_error("--kv-seq " + std::to_string(c.kv_seq) + " must equal --past " + std::to_string(c.past) +
                          " + --seq " + std::to_string(c.seq) + " = " + std::to_string(keys) +
                          " (the keys are the cached tokens and the new ones; or leave --kv-seq out)");
}

/// "[B,H,Sq,Sk] = [6148914691236517206,2,3,3]".
std::string sizes_text(const char* letters, std::initializer_list<std::int64_t> sizes) {
    std::string values;
    for (const std::int64_t s : sizes) values += (values.empty() ? "" : ",") + std::to_string(s);
    return std::string(letters) + " = [" + values + "]";
}

void validate_positions(const config& c) {
    if (c.pos == position_encoding::rope && c.head_dim() % 2 != 0)
        throw usage_error("--pos rope rotates pairs of coordinates, but dk = --d-model " + std::to_string(c.d_model) +
                          " / --heads " + std::to_string(c.heads) + " = " + std::to_string(c.head_dim()) +
                          " is odd; give an even head width");
    if (!(c.rope_base > 0.0) || !std::isfinite(c.rope_base))
        throw usage_error("--rope-base " + shortest_text(c.rope_base) + " must be a finite number above 0 (10000 by default)");
    if (c.pos == position_encoding::rope) {  // its angles at the last position, past + seq - 1
        const std::string problem = rope_base_problem(c.rope_base, static_cast<std::size_t>(c.head_dim()), c.past + c.seq - 1);
        if (!problem.empty()) throw usage_error("--rope-base " + shortest_text(c.rope_base) + ": " + problem);
    }
    if (c.pos == position_encoding::sinusoidal) {
        if (c.sources.from_projections)
            throw usage_error("--pos sinusoidal adds its table to x before the projections, but --q --k --v start the "
                              "run after them; give x (--input) or let it be drawn");
        if (c.d_in % 2 != 0 || (c.cross() && c.d_kv_in % 2 != 0))
            throw usage_error("--pos sinusoidal pairs sin and cos over the input width, but --d-in " +
                              std::to_string(c.d_in) + (c.cross() ? " (or --d-kv-in " + std::to_string(c.d_kv_in) + ")" : "") +
                              " is odd; give an even width");
    }
    // a cross-attention's keys have positions of another sequence: no distance i - j between them
    // (a decoding step with --past is self-attention, and passes)
    if ((c.pos == position_encoding::rope || c.pos == position_encoding::alibi) && c.cross())
        throw usage_error("--pos " + std::string(position_encoding_name(c.pos)) +
                          " encodes the distance i - j between a query and a key of the same sequence; in "
                          "cross-attention (--kv-seq, --d-kv-in, --cross or --kv-input) the keys come from another "
                          "sequence; use --pos sinusoidal or none");
}

}  // namespace

std::int64_t decoding_step_keys(std::int64_t past, std::int64_t seq) {
    const std::optional<std::int64_t> keys = checked_add(past, seq);
    if (!keys)
        throw usage_error("--past " + std::to_string(past) + ": Sk = N + Sq = " + std::to_string(past) + " + " +
                          std::to_string(seq) + " does not fit a 64-bit size; give a smaller --past");
    return *keys;
}

void check_addressable(const config& c) {
    const std::int64_t B = c.batch, H = c.heads, Sq = c.seq, Sk = c.kv_seq, D = c.d_model;
    const auto check = [](const char* letters, std::initializer_list<std::int64_t> sizes) {
        std::optional<std::uint64_t> bytes = 4;  // float32
        for (const std::int64_t s : sizes)
            if (s <= 0 || !(bytes = checked_mul<std::uint64_t>(*bytes, static_cast<std::uint64_t>(s))) ||
                *bytes > max_tensor_bytes)
                throw usage_error("these sizes make a tensor " + sizes_text(letters, sizes) +
                                  " of more than 128 TiB, more than a 64-bit machine can address; give smaller sizes");
    };
    check("[B,H,Sq,Sk]", {B, H, Sq, Sk});
    check("[B,Sq,D]", {B, Sq, D});
    check("[B,Sk,D]", {B, Sk, D});
    check("[B,Sq,Din]", {B, Sq, c.d_in});
    check("[B,Sk,Dkv]", {B, Sk, c.d_kv_in});
    check("[D,Din]", {D, c.d_in});
    check("[D,Dkv]", {D, c.d_kv_in});
    check("[D,D]", {D, D});
    if (c.flash_block > 0)  // flash's acc [B,H,Sq,nb,dk], nb = ceil(Sk/N)
        check("[B,H,Sq,nb,dk]", {B, H, Sq, Sk / c.flash_block + (Sk % c.flash_block != 0), D / std::max<std::int64_t>(H, 1)});
}

void validate(const config& c) {
    require_positive(c.batch, "--batch");
    require_positive(c.seq, "--seq");
    require_positive(c.kv_seq, "--kv-seq");
    require_positive(c.d_model, "--d-model");
    require_positive(c.heads, "--heads");
    require_positive(c.d_in, "--d-in");
    require_positive(c.d_kv_in, "--d-kv-in");
    if (c.d_model % c.heads != 0)
        throw usage_error("--d-model " + std::to_string(c.d_model) + " is not divisible by --heads " +
                          std::to_string(c.heads));
    validate_cache(c);
    if (std::isnan(c.fill) || c.fill == std::numeric_limits<float>::infinity())
        throw usage_error("--fill " + fill_to_string(c.fill) + " must be -inf or a finite number");
    if (c.safe_softmax && !std::isinf(c.fill))
        throw usage_error("--safe-softmax with --fill " + fill_text(c) +
                          ": PyTorch's safe softmax zeroes only rows that are all -inf, and a finite fill "
                          "leaves none (a row with no allowed key stays uniform); use --fill -inf or drop --safe-softmax");
    validate_mask(c);
    validate_positions(c);
    if (c.norm != norm_kind::none && c.cross())  // a model's layer: its norm reads x, keys and values come from it
        throw usage_error(c.sources.model + " normalises x, from which queries, keys and values all come: it is self-attention; "
                          "drop --kv-input, --cross, --kv-seq and --d-kv-in");
    if (c.norm != norm_kind::none && !(c.norm_eps >= 0.0f && std::isfinite(c.norm_eps)))
        throw usage_error(c.sources.model + ": the norm's eps must be a finite number of at least 0");
    if (c.block.on() && !(c.block.width > 0 && c.block.eps >= 0.0f && std::isfinite(c.block.eps)))
        throw usage_error(c.sources.model + ": the MLP needs a width of at least 1 and a finite eps of at least 0");
    if (!(c.dropout.p >= 0.0 && c.dropout.p <= 1.0))
        throw usage_error("--dropout " + shortest_text(c.dropout.p) + " must be between 0 and 1");
    if (c.flash_block < 0)
        throw usage_error("--flash-block " + std::to_string(c.flash_block) + " must be at least 1 (keys per block)");
    if (c.flash_block > 0 && c.dropout.applied())
        throw usage_error("--flash-block with --train and --dropout " + shortest_text(c.dropout.p) +
                          ": the flash stage is compared with the exact context, and dropout's weights exist "
                          "only in the exact path (flash never forms the weights); drop --train or --flash-block");
    const std::string problem = mistake_problem(c);
    if (!problem.empty()) throw usage_error("--mistake " + std::string(mistake_id(c.mistake)) + ": " + problem);
}

std::string fill_to_string(float fill) {
    return std::isnan(fill) ? "nan" : shortest_text(fill);  // never "-nan"
}

std::string fill_text(const config& c) { return c.fill_text.empty() ? fill_to_string(c.fill) : c.fill_text; }

bool is_decimal_number(std::string_view text) {
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t from = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        return i - from;
    };
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    std::size_t mantissa = digits();
    if (i < text.size() && text[i] == '.') {
        ++i;
        mantissa += digits();
    }
    if (mantissa == 0) return false;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        if (digits() == 0) return false;
    }
    return i == text.size();
}

std::string fill_underflow(double typed) {
    const auto as_float = static_cast<float>(typed);
    if (typed == 0.0 || std::abs(typed) >= std::numeric_limits<float>::min()) return "";
    // A subnormal keeps fewer digits; within float32's own rounding (2^-24) it still says `typed`.
    if (std::abs(static_cast<double>(as_float) - typed) <= std::abs(typed) * 0x1p-24) return "";
    // every digit it keeps (%.9g): the shortest form of a subnormal reads as `typed` again
    return "float32 makes it " + significant_text(as_float, 9) + " (its smallest normal number is " +
           shortest_text(std::numeric_limits<float>::min()) + "); give 0, or a number from 1.2e-38 in size";
}

std::string_view mask_convention_name(mask_convention m) {
    switch (m) {
        case mask_convention::mha: return "mha";
        case mask_convention::additive: return "additive";
        case mask_convention::keep: break;
    }
    return "keep";
}

std::optional<mask_convention> parse_mask_convention(std::string_view name) {
    for (const auto m : {mask_convention::keep, mask_convention::mha, mask_convention::additive})
        if (mask_convention_name(m) == name) return m;
    return std::nullopt;
}

std::string_view causal_alignment_name(causal_alignment a) {
    return a == causal_alignment::lower_right ? "lower-right" : "upper-left";
}

std::optional<causal_alignment> parse_causal_alignment(std::string_view name) {
    for (const auto a : {causal_alignment::upper_left, causal_alignment::lower_right})
        if (causal_alignment_name(a) == name) return a;
    return std::nullopt;
}

std::string_view position_encoding_name(position_encoding p) {
    switch (p) {
        case position_encoding::rope: return "rope";
        case position_encoding::alibi: return "alibi";
        case position_encoding::sinusoidal: return "sinusoidal";
        case position_encoding::none: break;
    }
    return "none";
}

std::optional<position_encoding> parse_position_encoding(std::string_view name) {
    for (const auto p : {position_encoding::none, position_encoding::rope, position_encoding::alibi,
                         position_encoding::sinusoidal})
        if (position_encoding_name(p) == name) return p;
    return std::nullopt;
}

std::string_view rope_pairing_name(rope_pairing r) { return r == rope_pairing::interleaved ? "interleaved" : "half"; }

std::optional<rope_pairing> parse_rope_pairing(std::string_view name) {
    for (const auto r : {rope_pairing::half, rope_pairing::interleaved})
        if (rope_pairing_name(r) == name) return r;
    return std::nullopt;
}

}  // namespace attn
