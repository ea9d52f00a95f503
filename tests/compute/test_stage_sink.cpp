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
    explicit recorder(bool rows) : rows_(rows) {}
    std::map<std::string, std::vector<std::uint32_t>> got;
    std::vector<std::string> order;

    void stage_done(const attn::trace&, const attn::stage& s) override {
        order.emplace_back(s.name());
        for (const attn::tensor& t : s.tensors) {
            auto& bits = got[std::string(s.name()) + "." + t.name];
            for (float v : t.values) bits.push_back(as_bits(v));
        }
    }
    bool takes_rows() const override { return rows_; }
    void stage_begin(const attn::trace&, const attn::stage& s) override {
        order.emplace_back(s.name());
        begun_ = s;
        next_row_ = 0;
        index_ = 0;
    }
    void stage_rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) override {
        if (index != index_) next_row_ = 0, index_ = index;
        CHECK(first_row == next_row_);  // in order, none left out
        next_row_ += count;
        const attn::tensor& t = begun_.tensors[index];
        auto& bits = got[std::string(begun_.name()) + "." + t.name];
        for (std::size_t e = 0; e < count * t.values.shape().back(); ++e) bits.push_back(as_bits(rows[e]));
    }

private:
    static std::uint32_t as_bits(float v) {
        std::uint32_t b;
        std::memcpy(&b, &v, 4);
        return b;
    }
    bool rows_;
    attn::stage begun_;
    std::size_t next_row_ = 0, index_ = 0;
};

/// A sink that writes out as npz to a file does: it holds each stage's storage after
/// stage_done (as if lent to a writer's thread) until give_back, or until the next stage.
/// Each held storage must come back unchanged; it records the bits as it got them.
class lending_recorder : public recorder {
public:
    lending_recorder() : recorder(false) {}
    std::set<const void*> plane_storages;  // the [B,H,Sq,Sk] tensors it was lent
    int changed_while_lent = 0;

    void stage_done(const attn::trace& so_far, const attn::stage& s) override {
        recorder::stage_done(so_far, s);
        for (const attn::tensor& t : s.tensors) {
            if (!t.storage || t.type != attn::element_type::float32) continue;
            lent_.push_back({t.storage, std::vector<float>(t.storage->begin(), t.storage->end())});
            if (t.values.dimension() == 4 && t.dims[2] == "query") plane_storages.insert(t.storage.get());
        }
        while (lent_.size() > 2) release(0);  // a writer two stages behind
    }
    void give_back(const attn::tensor_storage& storage) override {
        for (std::size_t i = 0; i < lent_.size(); ++i)
            if (lent_[i].storage == storage) release(i--);
    }

private:
    struct lent {
        attn::tensor_storage storage;
        std::vector<float> as_lent;
    };
    void release(std::size_t i) {
        const std::vector<float> now(lent_[i].storage->begin(), lent_[i].storage->end());
        if (std::memcmp(now.data(), lent_[i].as_lent.data(), now.size() * sizeof(float)) != 0) ++changed_while_lent;
        lent_.erase(lent_.begin() + static_cast<std::ptrdiff_t>(i));
    }
    std::vector<lent> lent_;
};

recorder record(const attn::config& c, const attn::inputs& in, attn::stage_plan plan, bool rows) {
    recorder r(rows);
    attn::compute_stages(c, in, plan, r);
    return r;
}

}  // namespace

TEST_SUITE("stage_sink") {
    TEST_CASE("stages_needed: a stage and what it reads, no more") {
        const attn::config c = small_config();
        const auto needed = [&](std::vector<std::string> names) {
            std::vector<std::string> out;
            const auto n = attn::stages_needed(c, attn::stage_plan::of(names));
            for (const auto& info : attn::stage_table)
                if (n[static_cast<std::size_t>(info.step - 1)]) out.emplace_back(info.name);
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
        const recorder all = record(c, in, attn::stage_plan::every_stage(), false);
        CHECK(all.order.size() == 15);
        for (const std::vector<std::string>& names :
             {std::vector<std::string>{"params"}, {"softmax"}, {"masked", "output"}, {"dropout"}, {"mask"}}) {
            const recorder some = record(c, in, attn::stage_plan::of(names), false);
            CHECK(some.order == names);
            for (const auto& [key, bits] : some.got) CHECK(bits == all.got.at(key));
        }
    }

    TEST_CASE("stages held by the sink (lent) are never changed, and spare tensors give the same bits") {
        const attn::config c = small_config();
        const attn::inputs in = attn::draw_inputs(c);
        const recorder all = record(c, in, attn::stage_plan::every_stage(), false);
        for (const std::size_t spares : {0u, 1u, 2u}) {
            CAPTURE(spares);
            attn::stage_plan plan = attn::stage_plan::every_stage();
            plan.spare_planes = spares;
            lending_recorder lent;
            attn::compute_stages(c, in, plan, lent);
            CHECK(lent.changed_while_lent == 0);
            CHECK(lent.got == all.got);
            // with spares the chain takes turns among them, as the sink holds two stages;
            // without, it asks for the tensor back and goes on in place in it (no copy)
            CHECK(lent.plane_storages.size() == 1 + spares);
        }
    }

    TEST_CASE("plan_memory: spare tensors when they are asked for and fit, as many as fit, else none") {
        attn::config c = small_config();
        c.seq = c.kv_seq = 512;
        c.heads = 4;
        attn::stage_plan plan = attn::stage_plan::every_stage();
        plan.spare_planes = 2;
        attn::plan_memory(c, plan, false, std::uint64_t(1) << 30);
        CHECK(plan.layout == attn::plane_layout::whole_tensor);
        CHECK(plan.spare_planes == 2);
        attn::stage_plan without = attn::stage_plan::every_stage();
        attn::plan_memory(c, without, false, std::uint64_t(1) << 30);
        CHECK(without.spare_planes == 0);
        const std::uint64_t plane = std::uint64_t(2) * 4 * 512 * 512 * 4;  // [B,H,Sq,Sk] floats
        const std::uint64_t base = attn::estimate_plan_bytes(c, without, false);
        CHECK(attn::estimate_plan_bytes(c, plan, false) == base + 2 * plane);
        // limits the whole tensors fit under, with one spare, or none
        for (const auto& [limit, kept_spares] : {std::pair<std::uint64_t, std::size_t>{base + plane + plane / 2, 1},
                                                 {base + plane / 2, 0}}) {
            attn::stage_plan tight = attn::stage_plan::every_stage();
            tight.spare_planes = 2;
            attn::plan_memory(c, tight, false, limit);
            CHECK(tight.layout == attn::plane_layout::whole_tensor);
            CHECK(tight.spare_planes == kept_spares);
        }
        // fewer spares than shown [B,H,Sq,Sk] stages: two shown, one spare at most
        attn::stage_plan two = attn::stage_plan::of({"scores", "softmax"});
        two.spare_planes = 2;
        attn::plan_memory(c, two, false, std::uint64_t(1) << 30);
        CHECK(two.layout == attn::plane_layout::whole_tensor);
        CHECK(two.spare_planes == 1);
        attn::stage_plan kept = attn::stage_plan::every_stage();
        kept.spare_planes = 2;
        attn::plan_memory(c, kept, true, std::uint64_t(1) << 30);  // a keeping sink holds every stage anyway
        CHECK(kept.spare_planes == 0);
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
            recorder whole(false);
            const attn::warning_list whole_warnings = attn::compute_stages(c, in, attn::stage_plan::every_stage(), whole);
            REQUIRE(whole.got.count("mask.mask") == 1);
            for (const std::size_t rows : {std::size_t{0}, std::size_t{3}}) {  // 0: whole tensors
                attn::stage_plan plan = attn::stage_plan::of({"masked", "softmax", "dropout", "output"});
                plan.layout = rows == 0 ? attn::plane_layout::whole_tensor : attn::plane_layout::in_rows;
                plan.block_rows = rows;
                recorder made(rows != 0);
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
        const recorder whole = record(c, in, attn::stage_plan::every_stage(), false);
        for (std::size_t rows : {1, 2, 3, 6, 7, 50}) {
            CAPTURE(rows);
            for (const std::vector<std::string>& names :
                 {std::vector<std::string>{}, {"softmax"}, {"dropout", "output"}, {"scores", "masked"}}) {
                attn::stage_plan plan = attn::stage_plan::of(names);
                plan.layout = attn::plane_layout::in_rows;
                plan.block_rows = rows;
                const recorder blocked = record(c, in, plan, true);
                for (const auto& got : blocked.got) {
                    const auto& key = got.first;  // CAPTURE takes no structured binding (clang)
                    CAPTURE(key);
                    CHECK(got.second == whole.got.at(key));
                }
                CHECK(blocked.order == (names.empty() ? whole.order : names));
            }
        }
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
        const recorder one = record(c, in, attn::stage_plan::every_stage(), false);
        attn::set_thread_count(4);
        const recorder four = record(c, in, attn::stage_plan::every_stage(), false);
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
}
