// summary_keeper: the table and torch formats print from the rows it keeps exactly what
// they print from the whole trace, for every view (--batch-index, --head, --row, --full),
// whole planes or rows in blocks, dropout and cross-attention sizes; and it keeps only
// those rows.
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/render/render_table.hpp"
#include "attn/render/render_torch.hpp"
#include "attn/render/summary_keeper.hpp"

namespace {

attn::config sizes(std::int64_t batch, std::int64_t seq, std::int64_t kv_seq, std::int64_t heads) {
    attn::config c;
    c.batch = batch;
    c.seq = seq;
    c.kv_seq = kv_seq;
    c.separate_kv = kv_seq != seq;
    c.heads = heads;
    c.d_model = c.d_in = c.d_kv_in = 4 * heads;
    c.seed = 3;
    return c;
}

std::vector<attn::config> configs() {
    attn::config causal_dropout = sizes(2, 40, 40, 3);  // planes of 9600 elements: summarised
    causal_dropout.mask.causal = true;
    causal_dropout.dropout.p = 0.25;
    causal_dropout.dropout.train = true;
    causal_dropout.dropout.seed = 4;
    attn::config cross = sizes(1, 37, 29, 8);  // 8 heads: the head axis summarised too
    cross.mask.causal = true;
    std::vector<attn::config> all{causal_dropout, cross, sizes(3, 9, 9, 2)};  // the last: 486, not summarised
    for (attn::config& c : all) attn::validate(c);
    return all;
}

std::vector<attn::render_options> views() {
    std::vector<attn::render_options> all(6);
    all[1].head = 1;
    all[2].batch_index = 0;
    all[3].row = 5;
    all[4].head = 2;
    all[4].row = 8;
    all[5].full = true;
    return all;
}

std::string text(const attn::trace& t, const attn::render_options& view, bool torch) {
    std::ostringstream out;
    if (torch)
        attn::render_torch(t, view, out);
    else
        attn::render_table(t, view, out);
    return out.str();
}

}  // namespace

TEST_SUITE("summary_keeper") {
    TEST_CASE("table and torch print from the kept rows what they print from the whole trace") {
        for (const attn::config& c : configs()) {
            const attn::inputs in = attn::draw_inputs(c);
            const attn::trace whole = attn::compute_trace(c, in);
            for (const attn::render_options& view : views()) {
                if (view.row && *view.row >= static_cast<std::size_t>(c.seq)) continue;
                if (view.head && *view.head >= static_cast<std::size_t>(c.heads)) continue;
                // 0: whole tensors, reused in place; else rows, a plane at a time (as plan_memory
                // chooses: smaller blocks may change the last bit of BLAS-sized products)
                for (const std::size_t block_rows : {std::size_t{0}, static_cast<std::size_t>(c.seq)}) {
                    attn::stage_plan plan = attn::stage_plan::every_stage();
                    plan.layout = block_rows == 0 ? attn::plane_layout::whole_tensor : attn::plane_layout::in_rows;
                    plan.block_rows = block_rows;
                    plan.sink_keeps = false;  // it copies what it keeps of the [B,H,Sq,Sk] tensors
                    attn::trace kept;
                    kept.cfg = c;
                    attn::summary_keeper keeper(kept, view, 0);  // every summarised tensor in part
                    kept.warnings = attn::compute_stages(c, in, plan, keeper);
                    for (const bool torch : {true, false}) {
                        CAPTURE(c.seq);
                        CAPTURE(block_rows);
                        CAPTURE(torch);
                        CAPTURE(view.full);
                        CHECK(text(kept, view, torch) == text(whole, view, torch));
                    }
                }
            }
        }
    }

    TEST_CASE("only the printed rows are computed (show_printed_rows_only): the same text") {
        attn::config few_products = sizes(2, 40, 40, 8);  // planes summarised, products small enough for aten's loop
        few_products.mask.causal = true;
        few_products.fill = -1e9f;
        attn::validate(few_products);
        attn::config dropout_heads = few_products;  // heads left out of the print: their draws still count
        dropout_heads.dropout.p = 0.25;
        dropout_heads.dropout.train = true;
        dropout_heads.dropout.seed = 6;
        attn::validate(dropout_heads);
        std::vector<attn::config> all = configs();
        all.push_back(few_products);
        all.push_back(dropout_heads);
        for (const attn::config& c : all) {
            const attn::inputs in = attn::draw_inputs(c);
            const attn::trace whole = attn::compute_trace(c, in);
            for (attn::render_options view : views()) {
                if (view.row && *view.row >= static_cast<std::size_t>(c.seq)) continue;
                if (view.head && *view.head >= static_cast<std::size_t>(c.heads)) continue;
                // every stage, and two plane stages alone (no context needs every plane)
                for (const std::vector<std::string>& stages : {std::vector<std::string>{}, {"softmax", "dropout"}}) {
                    view.stages = stages;
                    attn::stage_plan plan = attn::stage_plan::of(stages);
                    plan.layout = attn::plane_layout::in_rows;
                    plan.block_rows = 4;  // smaller than a plane: rows no output shows are left out
                    plan.sink_keeps = false;
                    attn::show_printed_rows_only(c, view, plan);
                    attn::trace kept;
                    kept.cfg = c;
                    attn::summary_keeper keeper(kept, view, 0);
                    kept.warnings = attn::compute_stages(c, in, plan, keeper);
                    for (const bool torch : {true, false}) {
                        CAPTURE(c.seq);
                        CAPTURE(stages.size());
                        CAPTURE(torch);
                        CAPTURE(view.full);
                        CHECK(text(kept, view, torch) == text(whole, view, torch));
                    }
                }
            }
        }
    }

    TEST_CASE("show_printed_rows_only: the first and last 3 of each summarised axis, none when printed whole") {
        attn::config c = sizes(1, 40, 40, 8);
        attn::validate(c);
        attn::stage_plan plan = attn::stage_plan::of({"softmax", "output"});
        attn::show_printed_rows_only(c, attn::render_options{}, plan);
        const std::vector<bool> edges{true, true, true, false, false, true, true, true};
        CHECK(plan.shown_batch.empty());  // one batch item: printed whole
        CHECK(plan.shown_head == edges);
        REQUIRE(plan.shown_query.size() == 40);
        for (std::size_t i = 0; i < 40; ++i) CHECK(plan.shown_query[i] == (i < 3 || i >= 37));
        attn::render_options full;
        full.full = true;
        attn::stage_plan every = attn::stage_plan::of({"softmax", "output"});
        attn::show_printed_rows_only(c, full, every);
        CHECK(every.shown_head.empty());
        CHECK(every.shown_query.empty());
    }

    TEST_CASE("only the printed rows are kept: the rest reads as 0") {
        attn::config c = sizes(1, 40, 40, 8);
        attn::validate(c);
        const attn::inputs in = attn::draw_inputs(c);
        attn::stage_plan plan = attn::stage_plan::of({"scores"});
        plan.layout = attn::plane_layout::in_rows;
        plan.block_rows = 40;
        attn::trace kept;
        kept.cfg = c;
        const attn::render_options view;
        attn::summary_keeper keeper(kept, view, 0);
        attn::compute_stages(c, in, plan, keeper);
        REQUIRE(kept.stages.size() == 1);
        const attn::tensor& scores = kept.stages[0].tensors[0];  // [1,8,40,40]: heads 0-2, 5-7; queries 0-2, 37-39
        CHECK(scores.values(0, 0, 0, 0) != 0.0f);
        CHECK(scores.values(0, 7, 39, 39) != 0.0f);
        CHECK(scores.values(0, 3, 0, 0) == 0.0f);    // head 3: not printed
        CHECK(scores.values(0, 0, 20, 5) == 0.0f);   // query 20: not printed
        CHECK(scores.values(0, 5, 38, 17) != 0.0f);  // a printed row: every key
    }
}
