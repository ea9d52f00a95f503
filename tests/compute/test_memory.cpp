// memory: the bytes a trace will hold, known before anything is allocated.
//
// The estimate is checked against what compute_trace really holds (4 bytes per float32
// element of every storage, counted once: at the first stage that holds it), stage by
// stage, for several configs; then the saturation at UINT64_MAX, check_memory's message
// and format_bytes.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/trace.hpp"
#include "support.hpp"

namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

/// 4 bytes per element of every storage the stage's tensors hold that no earlier stage
/// held (`seen`): what the trace holds for it. A view adds nothing.
std::uint64_t held_bytes(const attn::stage& s, std::set<const void*>& seen) {
    std::uint64_t bytes = 0;
    for (const auto& t : s.tensors)
        if (seen.insert(t.storage.get()).second) bytes += 4 * static_cast<std::uint64_t>(t.storage->size());
    return bytes;
}

std::vector<std::string> estimated_names(const attn::config& c) {
    std::vector<std::string> names;
    for (const auto& s : attn::estimate_stage_bytes(c)) names.emplace_back(s.stage);
    return names;
}

std::vector<std::string> trace_names(const attn::trace& t) {
    std::vector<std::string> names;
    for (const auto& s : t.stages) names.emplace_back(s.name());
    return names;
}

/// Every estimated stage equals the bytes the trace holds for it; the mask stage
/// also counts one byte per element of the boolean mask it is built from.
void check_estimate_matches_trace(const attn::config& c) {
    const attn::trace t = run(c);
    const auto estimate = attn::estimate_stage_bytes(c);
    REQUIRE(estimate.size() == t.stages.size());
    std::uint64_t sum = 0;
    std::set<const void*> seen;
    for (std::size_t i = 0; i < estimate.size(); ++i) {
        const attn::stage& s = t.stages[i];
        CAPTURE(s.name());
        REQUIRE(estimate[i].stage == s.name());
        const std::uint64_t held = held_bytes(s, seen);
        bool views = true;  // every tensor of the stage reads an earlier stage's storage
        for (const auto& x : s.tensors) views = views && x.is_view();
        CHECK((held == 0) == views);
        if (s.name() == "mask") {
            const std::uint64_t elements = s.at("mask").values.size();  // B*1*Sq*Sk
            CHECK(held == 4 * elements);
            CHECK(estimate[i].bytes == held + elements);
        } else {
            CHECK(estimate[i].bytes == held);
        }
        sum += estimate[i].bytes;
    }
    // the total adds the inputs (input and params) once more, held outside the trace, and
    // with dropout its boolean keep mask [B,H,Sq,Sk], held while the stage is made from it
    const std::uint64_t keep = c.dropout.applied() ? std::uint64_t(c.batch * c.heads * c.seq * c.kv_seq) : 0;
    CHECK(attn::estimate_transient_bytes(c) == keep);
    CHECK(attn::estimate_total_bytes(c) == sum + estimate[0].bytes + estimate[1].bytes + keep);
}

/// B=2, H=4, Sq=Sk=16, D=8, no output projection: the [B,H,Sq,Sk] planes (8 KiB each)
/// are the largest stages.
attn::config planes_config() {
    attn::config c;
    c.batch = 2;
    c.heads = 4;
    c.seq = c.kv_seq = 16;
    c.d_model = c.d_in = c.d_kv_in = 8;
    c.out_proj = false;
    return c;
}

}  // namespace

TEST_SUITE("memory") {

TEST_CASE("estimate_stage_bytes equals, stage by stage, the bytes compute_trace holds") {
    attn::config c;
    SUBCASE("the defaults: self-attention, no mask, with biases and output projection") {
        check_estimate_matches_trace(c);
    }
    SUBCASE("self-attention with a causal mask") {
        c.batch = 2;
        c.seq = c.kv_seq = 3;
        c.d_model = c.d_in = c.d_kv_in = 4;
        c.heads = 2;
        c.mask.causal = true;
        check_estimate_matches_trace(c);
    }
    SUBCASE("cross-attention of other widths, no mask, no output projection") {
        c.batch = 3;
        c.seq = 2;
        c.kv_seq = 5;
        c.d_in = 6;
        c.d_kv_in = 3;
        c.d_model = 6;
        c.heads = 3;
        c.out_proj = false;
        check_estimate_matches_trace(c);
    }
    SUBCASE("no qkv bias, padding mask, a separate key/value input of the same shape") {
        c.batch = 2;
        c.separate_kv = true;
        c.qkv_bias = false;
        c.mask.padding = true;
        c.mask.lengths = {1, 4};
        check_estimate_matches_trace(c);
    }
    SUBCASE("dropout in training mode: the weights and the keep mask") {
        c.dropout.p = 0.25;
        c.dropout.train = true;
        check_estimate_matches_trace(c);
    }
    SUBCASE("cross-attention with window and random masks") {
        c.seq = 3;
        c.kv_seq = 6;
        c.mask.window = c.mask.random = true;
        c.mask.window_size = 1;
        c.fill = -1e9f;
        check_estimate_matches_trace(c);
    }
    SUBCASE("one head: merge is contiguous, so concat is a view of the context too") {
        c.batch = 2;
        c.heads = 1;
        check_estimate_matches_trace(c);
        CHECK(attn::estimate_stage_bytes(c)[10].stage == "concat");
        CHECK(attn::estimate_stage_bytes(c)[10].bytes == 0);
    }
    SUBCASE("one query, cross-attention: concat is a view of the context") {
        c.seq = 1;
        c.kv_seq = 3;
        check_estimate_matches_trace(c);
    }
}

TEST_CASE("the estimated stages are the trace's stages, in order") {
    attn::config c;
    SUBCASE("no mask, with the output projection") {
        const std::vector<std::string> expected{"input",  "params", "projections", "view",  "transpose",
                                                "scores", "scaled", "softmax",     "context", "merge",
                                                "concat", "output"};
        CHECK(estimated_names(c) == expected);
        CHECK(trace_names(run(c)) == expected);
    }
    SUBCASE("a mask, with the output projection") {
        c.mask.causal = true;
        const std::vector<std::string> expected{"input",  "params", "projections", "view",    "transpose",
                                                "scores", "scaled", "mask",        "masked",  "softmax",
                                                "context", "merge", "concat",      "output"};
        CHECK(estimated_names(c) == expected);
        CHECK(trace_names(run(c)) == expected);
    }
    SUBCASE("a mask, without the output projection") {
        c.mask.causal = true;
        c.out_proj = false;
        const std::vector<std::string> expected{"input",  "params", "projections", "view",   "transpose",
                                                "scores", "scaled", "mask",        "masked", "softmax",
                                                "context", "merge", "concat"};
        CHECK(estimated_names(c) == expected);
        CHECK(trace_names(run(c)) == expected);
    }
    SUBCASE("no mask, without the output projection") {
        c.out_proj = false;
        const std::vector<std::string> expected{"input",  "params", "projections", "view",    "transpose",
                                                "scores", "scaled", "softmax",     "context", "merge",
                                                "concat"};
        CHECK(estimated_names(c) == expected);
        CHECK(trace_names(run(c)) == expected);
    }
}

TEST_CASE("the estimate for a literal config") {
    // B=2, H=4, Sq=Sk=16, D=Din=Dkv=8, biases, no output projection:
    // input 2*16*8*4 = 1024; params (64 + 2*64 + 3*8)*4 = 864; q k v 3*256*4 = 3072;
    // view and transpose 0 (views of q k v); planes 2*4*16*16*4 = 8192; context 1024;
    // merge 0 (a view of context); concat 1024.
    const attn::config c = planes_config();
    const auto estimate = attn::estimate_stage_bytes(c);
    const std::vector<std::uint64_t> expected{1024, 864, 3072, 0, 0, 8192, 8192, 8192, 1024, 0, 1024};
    std::vector<std::uint64_t> bytes;
    for (const auto& s : estimate) bytes.push_back(s.bytes);
    CHECK(bytes == expected);
    CHECK(attn::estimate_total_bytes(c) == 31584 + 1024 + 864);
}

TEST_CASE("huge sizes saturate at UINT64_MAX instead of wrapping around") {
    attn::config c;  // not validated: only the arithmetic is under test
    SUBCASE("the product B*H*Sq*Sk overflows") {
        c.batch = std::int64_t{1} << 20;
        c.seq = c.kv_seq = std::int64_t{1} << 30;
        c.d_model = c.d_in = c.d_kv_in = 16;
        c.heads = 16;
        const auto estimate = attn::estimate_stage_bytes(c);
        REQUIRE(estimate.size() == 12);
        CHECK(estimate[5].stage == "scores");
        CHECK(estimate[5].bytes == saturated);
        CHECK(estimate[6].bytes == saturated);
        CHECK(estimate[7].bytes == saturated);  // softmax
        // q [B,Sq,D] + k, v [B,Sk,D] = 3 * 2^54 elements, 3 * 2^56 bytes: still exact
        CHECK(estimate[2].bytes == 3 * (std::uint64_t{1} << 56));
        CHECK(attn::estimate_total_bytes(c) == saturated);
    }
    SUBCASE("the element count fits but 4 bytes each does not") {
        c.batch = 1;
        c.heads = 1;
        c.seq = c.kv_seq = std::int64_t{1} << 31;  // 2^62 elements, 2^64 bytes
        const auto estimate = attn::estimate_stage_bytes(c);
        CHECK(estimate[5].bytes == saturated);
        CHECK(attn::estimate_total_bytes(c) == saturated);
    }
    SUBCASE("4 bytes each fits, but the mask's extra byte per element does not") {
        c.batch = 7;
        c.heads = 1;
        c.seq = std::int64_t{1} << 29;
        c.kv_seq = std::int64_t{1} << 30;  // 7 * 2^59 elements
        c.mask.causal = true;
        const auto estimate = attn::estimate_stage_bytes(c);
        REQUIRE(estimate.size() == 14);
        CHECK(estimate[5].bytes == 7 * (std::uint64_t{1} << 61));  // scores: exact
        CHECK(estimate[7].stage == "mask");
        CHECK(estimate[7].bytes == saturated);  // 5 * 7 * 2^59 > 2^64
    }
    SUBCASE("large but representable sizes stay exact") {
        c.batch = 1;
        c.heads = 1;
        c.seq = c.kv_seq = std::int64_t{1} << 20;
        const auto estimate = attn::estimate_stage_bytes(c);
        CHECK(estimate[5].bytes == std::uint64_t{1} << 42);
        CHECK(attn::estimate_total_bytes(c) != saturated);
    }
}

TEST_CASE("check_memory throws attn::error naming the largest stages when over the limit") {
    attn::config c = planes_config();  // total 33472 bytes
    SUBCASE("over the limit: the exact message") {
        CHECK_THROWS_WITH_AS(attn::check_memory(c, 33000),
                             "these sizes need 32.7 KiB but the limit is 32.2 KiB (--max-memory); the largest stages "
                             "are scores, scaled, softmax at 8.0 KiB each, for [B,H,Sq,Sk] = [2,4,16,16]",
                             attn::error);
    }
    SUBCASE("with a mask the masked plane is among the largest") {
        c.mask.causal = true;  // + mask 2*16*16*5 = 2560, + masked 8192: 44224 bytes
        CHECK(attn::estimate_total_bytes(c) == 44224);
        CHECK_THROWS_WITH_AS(attn::check_memory(c, 1000),
                             "these sizes need 43.2 KiB but the limit is 1000 bytes (--max-memory); the largest "
                             "stages are scores, scaled, masked, softmax at 8.0 KiB each, for [B,H,Sq,Sk] = "
                             "[2,4,16,16]",
                             attn::error);
    }
    SUBCASE("one largest stage: singular wording") {
        c = attn::config{};  // B=1, Sq=Sk=4, D=8, H=2: params (4*(3*64+3*8+72) bytes) is the largest
        CHECK_THROWS_WITH_AS(attn::check_memory(c, 100),
                             "these sizes need 3.6 KiB but the limit is 100 bytes (--max-memory); the largest stage "
                             "is params at 1.1 KiB, for [B,H,Sq,Sk] = [1,2,4,4]",
                             attn::error);
    }
    SUBCASE("saturated sizes") {
        c.batch = std::int64_t{1} << 20;
        c.seq = c.kv_seq = std::int64_t{1} << 20;  // planes: 2^62 elements, 2^64 bytes
        CHECK_THROWS_WITH_AS(attn::check_memory(c, std::uint64_t{1} << 30),
                             "these sizes need more than 16 EiB but the limit is 1.0 GiB (--max-memory); the largest "
                             "stages are scores, scaled, softmax at more than 16 EiB each, for [B,H,Sq,Sk] = "
                             "[1048576,4,1048576,1048576]",
                             attn::error);
    }
    SUBCASE("the error is not a usage error (exit 1, not 2)") {
        bool usage = false, other = false;
        try {
            attn::check_memory(c, 100);
        } catch (const attn::usage_error&) {
            usage = true;
        } catch (const attn::error&) {
            other = true;
        }
        CHECK_FALSE(usage);
        CHECK(other);
    }
    SUBCASE("at or under the limit nothing is thrown") {
        CHECK_NOTHROW(attn::check_memory(c, 33472));
        CHECK_THROWS_AS(attn::check_memory(c, 33471), attn::error);
        CHECK_NOTHROW(attn::check_memory(c, std::uint64_t{8} << 30));
        CHECK_NOTHROW(attn::check_memory(c, saturated));
    }
}

TEST_CASE("format_bytes: bytes below 1 KiB, then one decimal in the largest binary unit") {
    CHECK(attn::format_bytes(0) == "0 bytes");
    CHECK(attn::format_bytes(1023) == "1023 bytes");
    CHECK(attn::format_bytes(1) == "1 byte");
    CHECK(attn::format_bytes(1024) == "1.0 KiB");
    CHECK(attn::format_bytes(1536) == "1.5 KiB");
    CHECK(attn::format_bytes(std::uint64_t{5} << 20) == "5.0 MiB");
    CHECK(attn::format_bytes(std::uint64_t{3} << 30) == "3.0 GiB");
    CHECK(attn::format_bytes(3221225472) == "3.0 GiB");
    CHECK(attn::format_bytes(std::uint64_t{1} << 40) == "1.0 TiB");
    CHECK(attn::format_bytes(std::uint64_t{1} << 62) == "4.0 EiB");
    CHECK(attn::format_bytes(saturated) == "more than 16 EiB");
}

}  // TEST_SUITE("memory")
