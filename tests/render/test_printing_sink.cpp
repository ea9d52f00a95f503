// table_stream and torch_stream (printing_sink): the table and torch formats print stage
// by stage, as the stages come, exactly what they print from the whole trace, for every
// view (--batch-index, --head, --row, --full), whole planes or rows in blocks, dropout and
// cross-attention sizes; and of a stage in rows they keep only the rows printed.
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

namespace {

attn::config sized_config(std::int64_t batch, std::int64_t seq, std::int64_t kv_seq, std::int64_t heads) {
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
    attn::config causal_dropout = sized_config(2, 40, 40, 3);  // planes of 9600 elements: summarised
    causal_dropout.mask.causal = true;
    causal_dropout.dropout.p = 0.25;
    causal_dropout.dropout.train = true;
    causal_dropout.dropout.seed = 4;
    attn::config cross = sized_config(1, 37, 29, 8);  // 8 heads: the head axis summarised too
    cross.mask.causal = true;
    std::vector<attn::config> all{causal_dropout, cross, sized_config(3, 9, 9, 2)};  // the last: 486, not summarised
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

/// What the table or torch prints of a run of `plan`, stage by stage as it is computed.
std::string printed(const attn::config& c, const attn::inputs& in, const attn::stage_plan& plan,
                     const attn::render_options& view, bool torch) {
    std::ostringstream out;
    if (torch) {
        attn::torch_stream printer(view, out);
        attn::compute_stages(c, in, plan, printer);
    } else {
        attn::table_stream printer(c, view, out);
        attn::compute_stages(c, in, plan, printer);
        printer.finish();
    }
    return out.str();
}

/// The grids a printing_sink prints each stage through.
class grids_seen : public attn::printing_sink {
public:
    using printing_sink::printing_sink;
    std::vector<attn::element_grid> grids;
    std::vector<std::vector<float>> values;  // each grid's data, as far as it reaches

private:
    void print(const attn::trace&, const attn::stage&, const std::vector<attn::element_grid>& g) override {
        grids = g;
        for (const attn::element_grid& grid : g) {
            const std::size_t n = grid.shown[0].size() * static_cast<std::size_t>(grid.strides[0]);
            values.emplace_back(grid.data, grid.data + n);
            grids.back().data = values.back().data();
        }
    }
};

}  // namespace

TEST_SUITE("printing_sink") {
    TEST_CASE("table and torch print, stage by stage, what they print from the whole trace") {
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
                    plan.sink_keeps = false;  // printed before the next step reuses the tensor
                    for (const bool torch : {true, false}) {
                        CAPTURE(c.seq);
                        CAPTURE(block_rows);
                        CAPTURE(torch);
                        CAPTURE(view.full);
                        CHECK(printed(c, in, plan, view, torch) == text(whole, view, torch));
                    }
                }
            }
        }
    }

    TEST_CASE("only the printed rows are computed (show_printed_rows_only): the same text") {
        attn::config few_products = sized_config(2, 40, 40, 8);  // planes summarised, products small enough for aten's loop
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
                for (const attn::stage_set stages :
                     {attn::stage_set{0}, attn::stages(attn::stage_id::softmax, attn::stage_id::dropout)}) {
                    view.stages = stages;
                    attn::stage_plan plan = attn::stage_plan::of(stages);
                    plan.layout = attn::plane_layout::in_rows;
                    plan.block_rows = 4;  // smaller than a plane: rows no output shows are left out
                    plan.sink_keeps = false;
                    attn::show_printed_rows_only(c, view, plan);
                    for (const bool torch : {true, false}) {
                        CAPTURE(c.seq);
                        CAPTURE(stages);
                        CAPTURE(torch);
                        CAPTURE(view.full);
                        CHECK(printed(c, in, plan, view, torch) == text(whole, view, torch));
                    }
                }
            }
        }
    }

    TEST_CASE("show_printed_rows_only: the first and last 3 of each summarised axis, none when printed whole") {
        attn::config c = sized_config(1, 40, 40, 8);
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

    TEST_CASE("a stage in rows is kept in the rows printed, and no others") {
        attn::config c = sized_config(1, 40, 40, 8);
        attn::validate(c);
        const attn::inputs in = attn::draw_inputs(c);
        const attn::trace whole = attn::compute_trace(c, in);
        const attn::tensor& scores = whole.find("scores")->tensors[0];  // [1,8,40,40]
        attn::stage_plan plan = attn::stage_plan::of({"scores"});
        plan.layout = attn::plane_layout::in_rows;
        plan.block_rows = 40;
        const attn::render_options view;
        grids_seen seen(view);
        attn::compute_stages(c, in, plan, seen);
        REQUIRE(seen.grids.size() == 1);
        const attn::element_grid& g = seen.grids[0];
        CHECK(g.packed);
        CHECK(g.strides == std::vector<std::ptrdiff_t>{6 * 6 * 40, 6 * 40, 40, 1});  // heads 0-2, 5-7; queries 0-2, 37-39
        CHECK(seen.values[0].size() == 6 * 6 * 40);
        for (const std::size_t h : {0, 2, 5, 7})
            for (const std::size_t q : {0, 1, 37, 39})
                for (const std::size_t k : {0, 17, 39})
                    CHECK(g.at(g.step(1, h) + g.step(2, q) + g.step(3, k)) == scores.values(0, h, q, k));
    }
}
