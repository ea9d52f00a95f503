// stage_sink: compute_stages computes only the stages a plan needs, hands on the ones
// it shows, and gives the same bits whole, in blocks of rows (any size, dropout too),
// and on any number of threads, as compute_trace.
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <xtensor/xarray.hpp>
#include <xtensor/xmath.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/threads.hpp"

namespace {

attn::config small_config() {
    attn::config c;
    c.batch = 2;
    c.seq = 7;
    c.kv_seq = 7;
    c.d_model = 8;
    c.heads = 2;
    c.d_in = 8;
    c.d_kv_in = 8;
    c.seed = 5;
    c.mask.causal = true;
    c.dropout.p = 0.3;
    c.dropout.train = true;
    c.dropout.seed = 2;
    attn::validate(c);
    return c;
}

/// Every element of each tensor a sink gets, by "stage.tensor", as float bits in row-major order.
class recorder : public attn::stage_sink {
public:
    std::map<std::string, std::vector<std::uint32_t>> got;
    std::vector<std::string> order;
    bool rows_came = false;

    void begin(const attn::trace&, const attn::stage& s) override {
        order.emplace_back(s.name());
        begun_ = s;
        next_row_ = 0;
        index_ = 0;
        if (s.in_rows()) return;
        for (const attn::tensor& t : s.tensors) {
            auto& bits = got[std::string(s.name()) + "." + t.name];
            for (float v : t.values) bits.push_back(as_bits(v));
        }
    }
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* data) override {
        REQUIRE(begun_.in_rows());
        rows_came = true;
        if (index != index_) next_row_ = 0, index_ = index;
        CHECK(first_row == next_row_);  // in order, none left out
        next_row_ += count;
        const attn::tensor& t = begun_.tensors[index];
        auto& bits = got[std::string(begun_.name()) + "." + t.name];
        for (std::size_t e = 0; e < count * t.values.shape().back(); ++e) bits.push_back(as_bits(data[e]));
    }
    void end(const attn::trace&, const attn::stage& s) override { CHECK(s.name() == begun_.name()); }

    static std::uint32_t as_bits(float v) {
        std::uint32_t b;
        std::memcpy(&b, &v, 4);
        return b;
    }

private:
    attn::stage begun_;
    std::size_t next_row_ = 0, index_ = 0;
};

/// A sink that keeps every stage it gets (as the table does): what it holds must not
/// change while the run goes on.
class keeping_recorder : public recorder {
public:
    std::vector<attn::stage> kept;
    void begin(const attn::trace& so_far, const attn::stage& s) override {
        recorder::begin(so_far, s);
        kept.push_back(s);
    }
    /// The stages whose kept elements are no longer the bits they came with.
    std::vector<std::string> changed() const {
        std::vector<std::string> names;
        for (const attn::stage& s : kept)
            for (const attn::tensor& t : s.tensors) {
                std::vector<std::uint32_t> now;
                for (float v : t.values) now.push_back(as_bits(v));
                if (now != got.at(std::string(s.name()) + "." + t.name)) names.push_back(std::string(s.name()));
            }
        return names;
    }
};

recorder record(const attn::config& c, const attn::inputs& in, attn::stage_plan plan) {
    recorder r;
    attn::compute_stages(c, in, plan, r);
    return r;
}

}  // namespace

TEST_SUITE("stage_sink") {
    TEST_CASE("stages_needed: a stage and what it reads, no more") {
        const attn::config c = small_config();
        const auto needed = [&](std::vector<std::string> names) {
            std::vector<std::string> out;
            const attn::stage_set n = attn::stages_needed(c, attn::stage_plan::of(names).shown);
            for (const auto& info : attn::stage_table)
                if (n & attn::stage_bit(info.id)) out.emplace_back(info.name);
            return out;
        };
        CHECK(needed({"params"}) == std::vector<std::string>{"params"});
        CHECK(needed({"scaled"}) == std::vector<std::string>{"projections", "view", "transpose", "scores", "scaled"});
        CHECK(needed({"softmax"}) == std::vector<std::string>{"projections", "view", "transpose", "scores", "scaled",
                                                              "mask", "masked", "softmax"});
        CHECK(needed({"context"}).size() == 10);  // through dropout, without input and params
    }

    TEST_CASE("only the shown stages reach the sink, with compute_trace's bits") {
        const attn::config c = small_config();
        const attn::inputs in = attn::draw_inputs(c);
        const recorder all = record(c, in, attn::stage_plan::every_stage());
        CHECK(all.order.size() == 15);
        for (const std::vector<std::string>& names :
             {std::vector<std::string>{"params"}, {"softmax"}, {"masked", "output"}, {"dropout"}, {"mask"}}) {
            const recorder some = record(c, in, attn::stage_plan::of(names));
            CHECK(some.order == names);
            for (const auto& [key, bits] : some.got) CHECK(bits == all.got.at(key));
        }
    }

    TEST_CASE("a sink that keeps its stages finds them unchanged; in place or not, the same bits") {
        const attn::config c = small_config();
        const attn::inputs in = attn::draw_inputs(c);
        keeping_recorder kept;  // the plan says it keeps: each [B,H,Sq,Sk] stage gets its own tensor
        attn::compute_stages(c, in, attn::stage_plan::every_stage(), kept);
        CHECK(kept.changed().empty());
        attn::stage_plan in_place = attn::stage_plan::every_stage();
        in_place.sink_keeps = false;  // one [B,H,Sq,Sk] tensor, changed step after step
        const recorder streamed = record(c, in, in_place);
        CHECK(streamed.got == kept.got);
        CHECK(streamed.order == kept.order);
    }

    TEST_CASE("a mask made a row at a time by its rules gives the whole mask's bits and warnings") {
        // every stage shown: the mask built whole; without the mask stage: made a row at a
        // time (mask_rows), in every layout, for padding with an empty batch item, a window,
        // lower-right causal with Sq > Sk (empty first rows), and safe softmax
        attn::config c = small_config();
        c.kv_seq = 5;
        c.separate_kv = true;
        c.mask.padding = true;
        c.mask.lengths = {5, 0};
        c.mask.window = true;
        c.mask.window_size = 3;
        c.mask.causal_align = attn::causal_alignment::lower_right;
        for (const bool safe : {false, true}) {
            c.safe_softmax = safe;
            attn::validate(c);
            REQUIRE(attn::mask_rows::make_all_of(c));
            const attn::inputs in = attn::draw_inputs(c);
            recorder whole;
            const attn::warning_list whole_warnings = attn::compute_stages(c, in, attn::stage_plan::every_stage(), whole);
            REQUIRE(whole.got.count("mask.mask") == 1);
            for (const std::size_t rows : {std::size_t{0}, std::size_t{3}}) {  // 0: whole tensors
                attn::stage_plan plan = attn::stage_plan::of({"masked", "softmax", "dropout", "output"});
                plan.layout = rows == 0 ? attn::plane_layout::whole_tensor : attn::plane_layout::in_rows;
                plan.block_rows = rows;
                recorder made;
                const attn::warning_list warnings = attn::compute_stages(c, in, plan, made);
                CAPTURE(safe);
                CAPTURE(rows);
                for (const auto& got : made.got) {
                    const auto& key = got.first;
                    CAPTURE(key);
                    CHECK(got.second == whole.got.at(key));
                }
                REQUIRE(warnings.size() == whole_warnings.size());
                for (std::size_t w = 0; w < warnings.size(); ++w) CHECK(warnings[w].text == whole_warnings[w].text);
            }
        }
    }

    TEST_CASE("blocks of rows give whole planes' bits, for sizes that do not divide Sq, and dropout") {
        attn::config c = small_config();
        const attn::inputs in = attn::draw_inputs(c);
        const recorder whole = record(c, in, attn::stage_plan::every_stage());
        for (std::size_t rows : {1, 2, 3, 6, 7, 50}) {
            CAPTURE(rows);
            for (const std::vector<std::string>& names :
                 {std::vector<std::string>{}, {"softmax"}, {"dropout", "output"}, {"scores", "masked"}}) {
                attn::stage_plan plan = attn::stage_plan::of(names);
                plan.layout = attn::plane_layout::in_rows;
                plan.block_rows = rows;
                const recorder blocked = record(c, in, plan);
                for (const auto& got : blocked.got) {
                    const auto& key = got.first;  // CAPTURE takes no structured binding (clang)
                    CAPTURE(key);
                    CHECK(got.second == whole.got.at(key));
                }
                CHECK(blocked.order == (names.empty() ? whole.order : names));
            }
        }
    }

    TEST_CASE("only the query rows shown are computed; with a --mistake every row is") {
        attn::config c = small_config();
        c.dropout.train = false;  // dropout's draws would need every row
        attn::validate(c);
        const attn::inputs in = attn::draw_inputs(c);
        const attn::trace whole = attn::compute_trace(c, in);
        const auto values = [](const attn::trace& t, const char* stage) {
            return xt::xarray<float>(t.find(stage)->tensors[0].values);
        };
        attn::stage_plan plan = attn::stage_plan::every_stage();
        plan.layout = attn::plane_layout::in_rows;
        plan.block_rows = 2;
        plan.shown_query = {true, false, false, false, false, true, false};
        REQUIRE_FALSE(plan.computes_every_query_row(c));
        attn::trace rows;
        rows.cfg = c;
        attn::trace_keeper keeper(rows);
        attn::compute_stages(c, in, plan, keeper);
        const xt::xarray<float> context = values(rows, "context"), whole_context = values(whole, "context");
        for (std::size_t b = 0; b < 2; ++b)
            for (std::size_t h = 0; h < 2; ++h)
                for (std::size_t i = 0; i < 7; ++i)
                    for (std::size_t d = 0; d < 4; ++d) {
                        CAPTURE(i);
                        if (plan.shown_query[i]) CHECK(context(b, h, i, d) == doctest::Approx(whole_context(b, h, i, d)).epsilon(1e-6));
                        else CHECK(context(b, h, i, d) == 0.0f);
                    }
        CHECK(values(rows, "projections") == values(whole, "projections"));  // q is computed whole

        // merge_without_transpose: concat row i reads context rows other than i, so every row is computed
        c.mistake = attn::mistake::merge_without_transpose;
        attn::validate(c);
        CHECK(plan.computes_every_query_row(c));
        const attn::trace mistaken = attn::compute_trace(c, in);
        attn::trace mistaken_rows;
        mistaken_rows.cfg = c;
        attn::trace_keeper mistaken_keeper(mistaken_rows);
        attn::compute_stages(c, in, plan, mistaken_keeper);
        const xt::xarray<float> concat = values(mistaken_rows, "concat"), whole_concat = values(mistaken, "concat");
        CHECK(xt::allclose(concat, whole_concat, 1e-6, 0.0));
    }

    TEST_CASE("one thread and every core give the same bits") {
        attn::config c = small_config();
        c.batch = 3;
        c.seq = c.kv_seq = 33;
        c.heads = 4;
        c.d_model = c.d_in = c.d_kv_in = 32;
        attn::validate(c);
        const attn::inputs in = attn::draw_inputs(c);
        const int before = attn::thread_count();
        attn::set_thread_count(1);
        const recorder one = record(c, in, attn::stage_plan::every_stage());
        attn::set_thread_count(4);
        const recorder four = record(c, in, attn::stage_plan::every_stage());
        attn::set_thread_count(before);
        CHECK(one.got == four.got);
    }

    TEST_CASE("plan_memory: rows for a streamed softmax, the whole tensor for a keeping sink") {
        attn::config c = small_config();
        attn::stage_plan plan = attn::stage_plan::of({"softmax"});
        attn::plan_memory(c, plan, false, std::uint64_t(1) << 30);
        CHECK(plan.layout == attn::plane_layout::in_rows);
        CHECK(plan.block_rows == 7);  // a whole plane
        attn::stage_plan kept = attn::stage_plan::of({"softmax"});
        attn::plan_memory(c, kept, true, std::uint64_t(1) << 30);
        CHECK(kept.layout == attn::plane_layout::whole_tensor);
        c.seq = c.kv_seq = 4096;
        c.heads = 8;
        attn::stage_plan tight = attn::stage_plan::of({"softmax", "scores"});
        attn::plan_memory(c, tight, false, std::uint64_t(64) << 20);  // 64 MiB: far less than [2,8,4096,4096]
        CHECK(tight.layout == attn::plane_layout::in_rows);
        CHECK(tight.block_rows < 4096);
        CHECK(attn::estimate_plan_bytes(c, tight, false) <= (std::uint64_t(64) << 20));
    }

    TEST_CASE("plan_memory counts --stats' 24 bytes per row of each weights tensor shown") {
        attn::config c = small_config();  // B=2 H=2 Sq=7
        for (const bool keeps : {false, true}) {
            attn::stage_plan plain = attn::stage_plan::of({"scores", "softmax"});
            attn::plan_memory(c, plain, keeps, std::uint64_t(1) << 30);
            attn::stage_plan with_stats = plain;
            with_stats.row_statistics = true;
            const std::uint64_t rows = static_cast<std::uint64_t>(c.batch * c.heads * c.seq);
            CHECK(attn::estimate_plan_bytes(c, with_stats, keeps) == attn::estimate_plan_bytes(c, plain, keeps) + 24 * rows);
            attn::stage_plan scores_only = attn::stage_plan::of({"scores"});
            attn::plan_memory(c, scores_only, keeps, std::uint64_t(1) << 30);
            attn::stage_plan scores_stats = scores_only;
            scores_stats.row_statistics = true;  // no weights shown: nothing kept per row
            CHECK(attn::estimate_plan_bytes(c, scores_stats, keeps) == attn::estimate_plan_bytes(c, scores_only, keeps));
        }
    }
}
