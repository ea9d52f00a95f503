#include "attn/compute/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "attn/compute/error.hpp"
#include "attn/compute/trace.hpp"

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

std::uint64_t sum(std::initializer_list<std::uint64_t> terms) {
    std::uint64_t s = 0;
    for (std::uint64_t t : terms)
        if (__builtin_add_overflow(s, t, &s)) return saturated;
    return s;
}

std::uint64_t floats(std::uint64_t count) { return count > saturated / 4 ? saturated : count * 4; }

}  // namespace

std::vector<stage_bytes> estimate_stage_bytes(const config& c) {
    const std::int64_t B = c.batch, Sq = c.seq, Sk = c.kv_seq, D = c.d_model, H = c.heads;
    const std::uint64_t qkv = floats(sum({product({B, Sq, D}), product({2, B, Sk, D})}));  // q [B,Sq,D], k v [B,Sk,D]
    const std::uint64_t plane = floats(product({B, H, Sq, Sk}));                           // [B,H,Sq,Sk]
    const std::uint64_t per_query = floats(product({B, Sq, D}));                           // [B,Sq,D]
    const std::uint64_t bias = c.qkv_bias ? product({3, D}) : 0;

    const auto bytes_of = [&](std::string_view name) -> std::uint64_t {
        if (name == "input") return floats(sum({product({B, Sq, c.d_in}), c.cross() ? product({B, Sk, c.d_kv_in}) : 0}));
        if (name == "params")
            return floats(sum({product({D, c.d_in}), product({2, D, c.d_kv_in}), bias,
                               c.out_proj ? sum({product({D, D}), product({D})}) : 0}));
        if (name == "projections") return qkv;
        // views of the storage before them (PyTorch's view and transpose): nothing of their own
        if (name == "view" || name == "transpose" || name == "merge") return 0;
        // the float copy in the trace plus the boolean mask it was built from
        if (name == "mask") return sum({floats(product({B, Sq, Sk})), product({B, Sq, Sk})});
        // concat copies merge, unless merge is contiguous already (one head or one query):
        // then merge.contiguous() is merge itself, and concat a view of it
        if (name == "concat") return H == 1 || Sq == 1 ? 0 : per_query;
        if (name == "context" || name == "output") return per_query;
        if (name == "dropout") return sum({plane, plane});  // weights and the keep mask
        return plane;  // scores, scaled, masked, softmax
    };
    std::vector<stage_bytes> stages;
    for (const stage_info& info : stage_table)
        if (stage_in_run(c, info.name)) stages.push_back({info.name, bytes_of(info.name)});
    return stages;
}

std::uint64_t estimate_transient_bytes(const config& c) {
    // dropout's keep mask, drawn as booleans [B,H,Sq,Sk] before the stage holds it as floats
    return c.dropout.applied() ? product({c.batch, c.heads, c.seq, c.kv_seq}) : 0;
}

std::uint64_t estimate_total_bytes(const config& c) {
    std::uint64_t total = estimate_transient_bytes(c);
    for (const auto& s : estimate_stage_bytes(c)) {
        // the inputs are held once more, outside the trace, while it is computed
        const bool held_twice = s.stage == "input" || s.stage == "params" ||
                                (s.stage == "projections" && c.from_projections);
        const int copies = held_twice ? 2 : 1;
        for (int i = 0; i < copies; ++i)
            if (__builtin_add_overflow(total, s.bytes, &total)) return saturated;
    }
    return total;
}

void check_memory(const config& c, std::uint64_t limit_bytes) {
    const std::uint64_t total = estimate_total_bytes(c);
    if (total <= limit_bytes) return;

    auto stages = estimate_stage_bytes(c);
    std::stable_sort(stages.begin(), stages.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    std::string largest;
    std::size_t count = 0;
    for (const auto& s : stages) {
        if (s.bytes != stages[0].bytes) break;
        largest += (count++ == 0 ? "" : ", ") + std::string(s.stage);
    }
    throw error("these sizes need " + format_bytes(total) + " but the limit is " + format_bytes(limit_bytes) +
                " (--max-memory); " +
                (count == 1 ? "the largest stage is " + largest + " at " + format_bytes(stages[0].bytes)
                            : "the largest stages are " + largest + " at " + format_bytes(stages[0].bytes) + " each") +
                ", for [B,H,Sq,Sk] = [" + std::to_string(c.batch) + "," + std::to_string(c.heads) + "," +
                std::to_string(c.seq) + "," + std::to_string(c.kv_seq) + "]");
}

std::string format_bytes(std::uint64_t bytes) {
    if (bytes == saturated) return "more than 16 EiB";
    static const char* const units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024 && unit < 6) {
        value /= 1024;
        ++unit;
    }
    char text[32];
    if (unit == 0)
        std::snprintf(text, sizeof text, "%llu %s", static_cast<unsigned long long>(bytes), bytes == 1 ? "byte" : "bytes");
    else
        std::snprintf(text, sizeof text, "%.1f %s", value, units[unit]);
    return text;
}

}  // namespace attn
