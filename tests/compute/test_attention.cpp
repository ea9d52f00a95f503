// attention: compute_trace stage by stage.
//
// First a tiny case worked out by hand, independent of PyTorch: B=1, Sq=Sk=2, D=2, H=1
// (dk=2), every weight the identity, every bias zero and x = I. Then
//   Q = K = V = I,  scores = Q·Kᵀ = I,  scaled = I/√2,
//   softmax row 0 = [e^(1/√2), 1] / (e^(1/√2) + 1) = [0.66976155, 0.33023845], row 1 mirrored,
//   context = weights·V = weights, merge and concat = the same numbers, out = concat·Iᵀ + 0.
// With a causal mask the first query may only see the first key: weights row 0 = [1, 0].
//
// Then the structure of a trace from drawn inputs: stage order, tensor names, shapes, dims,
// the reshapes and transposes, the callback, the mask's element type and the warnings.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/stage_sink.hpp"
#include "attn/compute/trace.hpp"
#include "attn/teach/stage_text.hpp"
#include "support.hpp"

namespace {

constexpr float r = 0.70710678f;    // 1/√2
constexpr float hi = 0.66976155f;   // e^(1/√2) / (e^(1/√2) + 1)
constexpr float lo = 0.33023845f;   // 1 / (e^(1/√2) + 1)

using shape_t = std::vector<std::size_t>;

shape_t shape_of(const attn::tensor& t) { return {t.values.shape().begin(), t.values.shape().end()}; }

/// Same shape, and every element within 1e-6 (-inf and NaN exactly).
void check_values(const attn::tensor& actual, const xt::xarray<float>& expected, const std::string& label) {
    CAPTURE(label);
    REQUIRE(shape_of(actual) == shape_t(expected.shape().begin(), expected.shape().end()));
    const std::vector<float> row_major(actual.values.begin(), actual.values.end());  // through the strides
    for (std::size_t i = 0; i < expected.size(); ++i) {
        CAPTURE(i);
        const float a = row_major[i], e = expected.data()[i];
        if (std::isnan(e))
            CHECK(std::isnan(a));
        else if (std::isinf(e))
            CHECK(a == e);
        else
            CHECK(a == doctest::Approx(e).epsilon(1e-6));
    }
}

/// A [1,2,2] (or any 2x2 plane) array with the given values.
xt::xarray<float> plane(std::vector<std::size_t> shape, float a, float b, float c, float d) {
    xt::xarray<float> x = xt::xarray<float>::from_shape(shape);
    x.data()[0] = a;
    x.data()[1] = b;
    x.data()[2] = c;
    x.data()[3] = d;
    return x;
}

/// B=1, Sq=Sk=2, D=Din=Dkv=2, H=1.
attn::config tiny_config() {
    attn::config c;
    c.batch = 1;
    c.seq = c.kv_seq = 2;
    c.d_model = c.d_in = c.d_kv_in = 2;
    c.heads = 1;
    return c;
}

/// Identity weights, zero biases, x = [[1,0],[0,1]].
attn::inputs identity_inputs() {
    const xt::xarray<float> eye{{1, 0}, {0, 1}};
    const xt::xarray<float> zero{0, 0};
    attn::inputs in;
    in.x = plane({1, 2, 2}, 1, 0, 0, 1);
    in.params.w_q = in.params.w_k = in.params.w_v = eye;
    in.params.b_q = in.params.b_k = in.params.b_v = zero;
    in.params.w_o = eye;
    in.params.b_o = zero;
    return in;
}

const attn::stage& stage_of(const attn::trace& t, const char* name) {
    const attn::stage* s = t.find(name);
    REQUIRE_MESSAGE(s != nullptr, "no stage " << name);
    return *s;
}

bool bits_equal(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

TEST_SUITE("attention") {

TEST_CASE("a hand-worked 2x2 case: identity weights, x = I") {
    const attn::config c = tiny_config();
    const attn::inputs in = identity_inputs();
    const attn::trace t = attn::compute_trace(c, in);

    CHECK(stage_names(t) == names{"input", "params", "projections", "view", "transpose", "scores", "scaled",
                                  "softmax", "context", "merge", "concat", "output"});
    CHECK(t.warnings.empty());

    check_values(stage_of(t, "input").at("x"), plane({1, 2, 2}, 1, 0, 0, 1), "input.x");
    check_values(stage_of(t, "params").at("w_q"), plane({2, 2}, 1, 0, 0, 1), "params.w_q");
    for (const char* name : {"q", "k", "v"}) check_values(stage_of(t, "projections").at(name), plane({1, 2, 2}, 1, 0, 0, 1), name);
    for (const char* name : {"q", "k", "v"}) check_values(stage_of(t, "view").at(name), plane({1, 2, 1, 2}, 1, 0, 0, 1), name);
    for (const char* name : {"q", "k", "v"})
        check_values(stage_of(t, "transpose").at(name), plane({1, 1, 2, 2}, 1, 0, 0, 1), name);

    check_values(stage_of(t, "scores").at("scores"), plane({1, 1, 2, 2}, 1, 0, 0, 1), "scores");
    check_values(stage_of(t, "scaled").at("scaled"), plane({1, 1, 2, 2}, r, 0, 0, r), "scaled");
    check_values(stage_of(t, "softmax").at("weights"), plane({1, 1, 2, 2}, hi, lo, lo, hi), "weights");
    check_values(stage_of(t, "context").at("context"), plane({1, 1, 2, 2}, hi, lo, lo, hi), "context");
    check_values(stage_of(t, "merge").at("context"), plane({1, 2, 1, 2}, hi, lo, lo, hi), "merge");
    check_values(stage_of(t, "concat").at("concat"), plane({1, 2, 2}, hi, lo, lo, hi), "concat");
    check_values(stage_of(t, "output").at("out"), plane({1, 2, 2}, hi, lo, lo, hi), "out");
}

TEST_CASE("a hand-worked 2x2 case with biases: every bias is added once") {
    // b_q = [1,0]: Q = [[2,0],[1,1]]; K = V = I (b_k, b_v zero).
    // scores = Q·Kᵀ = Q; scaled = Q/√2 = [[1.41421356,0],[0.70710678,0.70710678]]
    // softmax row 0: [e^√2, 1] / (e^√2 + 1) = [0.80442968, 0.19557032]; row 1: [0.5, 0.5]
    // context = weights·V = weights; out = weights + b_o with b_o = [1,-1]
    const attn::config c = tiny_config();
    attn::inputs in = identity_inputs();
    in.params.b_q = xt::xarray<float>{1, 0};
    in.params.b_o = xt::xarray<float>{1, -1};
    const attn::trace t = attn::compute_trace(c, in);
    check_values(stage_of(t, "projections").at("q"), plane({1, 2, 2}, 2, 0, 1, 1), "q");
    check_values(stage_of(t, "scaled").at("scaled"), plane({1, 1, 2, 2}, 1.41421356f, 0, r, r), "scaled");
    check_values(stage_of(t, "softmax").at("weights"), plane({1, 1, 2, 2}, 0.80442968f, 0.19557032f, 0.5f, 0.5f),
                 "weights");
    check_values(stage_of(t, "output").at("out"), plane({1, 2, 2}, 1.80442968f, -0.80442968f, 1.5f, -0.5f), "out");
}

TEST_CASE("a hand-worked 2x2 case with a causal mask: the first query sees only the first key") {
    attn::config c = tiny_config();
    c.mask.causal = true;
    const attn::trace t = attn::compute_trace(c, identity_inputs());

    CHECK(stage_names(t) == names{"input", "params", "projections", "view", "transpose", "scores", "scaled", "mask",
                                  "masked", "softmax", "context", "merge", "concat", "output"});
    CHECK(t.warnings.empty());
    check_values(stage_of(t, "mask").at("mask"), plane({1, 1, 2, 2}, 1, 0, 1, 1), "mask");
    check_values(stage_of(t, "masked").at("masked"), plane({1, 1, 2, 2}, r, -inf, 0, r), "masked");
    check_values(stage_of(t, "softmax").at("weights"), plane({1, 1, 2, 2}, 1, 0, lo, hi), "weights");
    check_values(stage_of(t, "context").at("context"), plane({1, 1, 2, 2}, 1, 0, lo, hi), "context");
    check_values(stage_of(t, "concat").at("concat"), plane({1, 2, 2}, 1, 0, lo, hi), "concat");
    check_values(stage_of(t, "output").at("out"), plane({1, 2, 2}, 1, 0, lo, hi), "out");
    CHECK(stage_of(t, "softmax").at("weights").values(0, 0, 0, 1) == 0.0f);  // exactly 0, not tiny

    SUBCASE("a finite fill gives the same weights here") {
        c.fill = -1e9f;
        const attn::trace t2 = attn::compute_trace(c, identity_inputs());
        check_values(stage_of(t2, "masked").at("masked"), plane({1, 1, 2, 2}, r, -1e9f, 0, r), "masked");
        check_values(stage_of(t2, "softmax").at("weights"), plane({1, 1, 2, 2}, 1, 0, lo, hi), "weights");
    }
}

TEST_CASE("stages and tensors: which exist, their names and shapes") {
    attn::config c;
    c.batch = 2;
    c.seq = 3;
    c.d_model = 6;
    c.heads = 3;  // dk = 2
    c.d_in = 4;
    SUBCASE("self-attention with a mask: the input holds only x") {
        c.kv_seq = 3;
        c.d_kv_in = 4;
        c.mask.causal = true;
        const attn::trace t = run(c);
        CHECK(stage_names(t) == names{"input", "params", "projections", "view", "transpose", "scores", "scaled",
                                      "mask", "masked", "softmax", "context", "merge", "concat", "output"});
        CHECK(tensor_names(stage_of(t, "input")) == names{"x"});
        CHECK(shape_of(stage_of(t, "input").at("x")) == shape_t{2, 3, 4});
        CHECK(tensor_names(stage_of(t, "params")) == names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"});
        CHECK(tensor_names(stage_of(t, "mask")) == names{"mask"});
        CHECK(shape_of(stage_of(t, "mask").at("mask")) == shape_t{2, 1, 3, 3});
        CHECK(shape_of(stage_of(t, "masked").at("masked")) == shape_t{2, 3, 3, 3});
    }
    SUBCASE("cross-attention: the input holds x and x_kv, k and v use Sk and Dkv") {
        c.kv_seq = 5;
        c.d_kv_in = 7;
        REQUIRE(c.cross());
        const attn::trace t = run(c);
        CHECK(stage_names(t) == names{"input", "params", "projections", "view", "transpose", "scores", "scaled",
                                      "softmax", "context", "merge", "concat", "output"});
        const attn::stage& input = stage_of(t, "input");
        CHECK(tensor_names(input) == names{"x", "x_kv"});
        CHECK(shape_of(input.at("x")) == shape_t{2, 3, 4});
        CHECK(shape_of(input.at("x_kv")) == shape_t{2, 5, 7});
        const attn::stage& params = stage_of(t, "params");
        CHECK(shape_of(params.at("w_q")) == shape_t{6, 4});
        CHECK(shape_of(params.at("w_k")) == shape_t{6, 7});
        CHECK(shape_of(params.at("w_v")) == shape_t{6, 7});
        CHECK(shape_of(params.at("w_o")) == shape_t{6, 6});
        for (const char* b : {"b_q", "b_k", "b_v", "b_o"}) CHECK(shape_of(params.at(b)) == shape_t{6});
        CHECK(shape_of(stage_of(t, "projections").at("q")) == shape_t{2, 3, 6});
        CHECK(shape_of(stage_of(t, "projections").at("k")) == shape_t{2, 5, 6});
        CHECK(shape_of(stage_of(t, "projections").at("v")) == shape_t{2, 5, 6});
        CHECK(shape_of(stage_of(t, "view").at("q")) == shape_t{2, 3, 3, 2});
        CHECK(shape_of(stage_of(t, "view").at("k")) == shape_t{2, 5, 3, 2});
        CHECK(shape_of(stage_of(t, "view").at("v")) == shape_t{2, 5, 3, 2});
        CHECK(shape_of(stage_of(t, "transpose").at("q")) == shape_t{2, 3, 3, 2});
        CHECK(shape_of(stage_of(t, "transpose").at("k")) == shape_t{2, 3, 5, 2});
        CHECK(shape_of(stage_of(t, "transpose").at("v")) == shape_t{2, 3, 5, 2});
        CHECK(shape_of(stage_of(t, "scores").at("scores")) == shape_t{2, 3, 3, 5});
        CHECK(shape_of(stage_of(t, "scaled").at("scaled")) == shape_t{2, 3, 3, 5});
        CHECK(shape_of(stage_of(t, "softmax").at("weights")) == shape_t{2, 3, 3, 5});
        CHECK(shape_of(stage_of(t, "context").at("context")) == shape_t{2, 3, 3, 2});
        CHECK(shape_of(stage_of(t, "merge").at("context")) == shape_t{2, 3, 3, 2});
        CHECK(shape_of(stage_of(t, "concat").at("concat")) == shape_t{2, 3, 6});
        CHECK(shape_of(stage_of(t, "output").at("out")) == shape_t{2, 3, 6});
    }
    SUBCASE("a separate key/value input of the same shape is cross-attention too") {
        c.kv_seq = 3;
        c.d_kv_in = 4;
        c.separate_kv = true;
        const attn::trace t = run(c);
        CHECK(tensor_names(stage_of(t, "input")) == names{"x", "x_kv"});
        CHECK(shape_of(stage_of(t, "input").at("x_kv")) == shape_t{2, 3, 4});
    }
    SUBCASE("without qkv bias the params hold only w_q, w_k, w_v, w_o, b_o") {
        c.kv_seq = 3;
        c.d_kv_in = 4;
        c.qkv_bias = false;
        const attn::trace t = run(c);
        CHECK(tensor_names(stage_of(t, "params")) == names{"w_q", "w_k", "w_v", "w_o", "b_o"});
    }
    SUBCASE("without the output projection: no output stage, no w_o or b_o") {
        c.kv_seq = 3;
        c.d_kv_in = 4;
        c.out_proj = false;
        const attn::trace t = run(c);
        CHECK(stage_names(t) == names{"input", "params", "projections", "view", "transpose", "scores", "scaled",
                                      "softmax", "context", "merge", "concat"});
        CHECK(t.find("output") == nullptr);
        CHECK(tensor_names(stage_of(t, "params")) == names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v"});
    }
    SUBCASE("neither qkv bias nor output projection") {
        c.kv_seq = 3;
        c.d_kv_in = 4;
        c.qkv_bias = false;
        c.out_proj = false;
        const attn::trace t = run(c);
        CHECK(tensor_names(stage_of(t, "params")) == names{"w_q", "w_k", "w_v"});
    }
}

TEST_CASE("every stage's info is its entry of stage_table, in increasing steps") {
    attn::config c;
    c.mask.causal = true;
    const attn::trace t = run(c);
    const attn::stage* last = nullptr;
    for (const auto& s : t.stages) {
        CAPTURE(s.name());
        REQUIRE(s.info != nullptr);
        CHECK(s.info == attn::find_stage_info(s.name()));
        if (last != nullptr) CHECK(last->info->step < s.info->step);
        last = &s;
    }
    CHECK(stage_of(t, "mask").info->step.text() == "8");
    CHECK(stage_of(t, "output").info->step.text() == "15");
}

TEST_CASE("dimension names of every tensor") {
    attn::config c;
    c.mask.padding = true;
    c.mask.lengths = {2};
    const attn::trace t = run(c);
    const names bsd{"batch", "seq", "d_model"}, kv_bsd{"batch", "kv_seq", "d_model"};
    const names bqk{"batch", "head", "query", "key"};
    CHECK(stage_of(t, "input").at("x").dims == names{"batch", "seq", "d_in"});
    CHECK(stage_of(t, "params").at("w_q").dims == names{"d_model", "d_in"});
    CHECK(stage_of(t, "params").at("w_k").dims == names{"d_model", "d_kv_in"});
    CHECK(stage_of(t, "params").at("w_v").dims == names{"d_model", "d_kv_in"});
    CHECK(stage_of(t, "params").at("w_o").dims == names{"d_model", "d_model"});
    for (const char* b : {"b_q", "b_k", "b_v", "b_o"}) CHECK(stage_of(t, "params").at(b).dims == names{"d_model"});
    CHECK(stage_of(t, "projections").at("q").dims == bsd);
    CHECK(stage_of(t, "projections").at("k").dims == kv_bsd);
    CHECK(stage_of(t, "projections").at("v").dims == kv_bsd);
    CHECK(stage_of(t, "view").at("q").dims == names{"batch", "seq", "head", "head_dim"});
    CHECK(stage_of(t, "view").at("k").dims == names{"batch", "kv_seq", "head", "head_dim"});
    CHECK(stage_of(t, "transpose").at("q").dims == names{"batch", "head", "seq", "head_dim"});
    CHECK(stage_of(t, "transpose").at("v").dims == names{"batch", "head", "kv_seq", "head_dim"});
    CHECK(stage_of(t, "scores").at("scores").dims == bqk);
    CHECK(stage_of(t, "scaled").at("scaled").dims == bqk);
    CHECK(stage_of(t, "mask").at("mask").dims == bqk);
    CHECK(stage_of(t, "masked").at("masked").dims == bqk);
    CHECK(stage_of(t, "softmax").at("weights").dims == bqk);
    CHECK(stage_of(t, "context").at("context").dims == names{"batch", "head", "seq", "head_dim"});
    CHECK(stage_of(t, "merge").at("context").dims == names{"batch", "seq", "head", "head_dim"});
    CHECK(stage_of(t, "concat").at("concat").dims == bsd);
    CHECK(stage_of(t, "output").at("out").dims == bsd);

    // one name per axis everywhere
    for (const auto& s : t.stages)
        for (const auto& tensor : s.tensors) {
            CAPTURE(s.name());
            CAPTURE(tensor.name);
            CHECK(tensor.dims.size() == tensor.values.dimension());
        }
    CHECK(stage_of(t, "input").at("x").dims == names{"batch", "seq", "d_in"});
    CHECK_THROWS_WITH_AS(stage_of(t, "input").at("x_kv"), "stage input has no tensor x_kv", attn::error);
}

TEST_CASE("view, transpose, merge and concat move numbers exactly as PyTorch does") {
    attn::config c;
    c.batch = 2;
    c.seq = 3;
    c.kv_seq = 4;
    c.d_model = 6;
    c.heads = 3;
    c.d_in = c.d_kv_in = 6;
    const attn::trace t = run(c);
    const std::size_t B = 2, H = 3, dk = 2;

    SUBCASE("view is a pure reshape of the projections: the same memory, read in the same order") {
        for (const char* name : {"q", "k", "v"}) {
            CAPTURE(name);
            const auto& p = stage_of(t, "projections").at(name).values;
            const auto& v = stage_of(t, "view").at(name).values;
            REQUIRE(p.size() == v.size());
            CHECK(v.data() == p.data());
            CHECK(std::equal(p.begin(), p.end(), v.begin()));
            // [b,s,d] with d = h*dk + e is view[b,s,h,e]
            CHECK(v(1, 2, 2, 1) == p(1, 2, 5));
        }
    }
    SUBCASE("transpose swaps the sequence and head axes: t[b,h,s,d] == view[b,s,h,d]") {
        for (const char* name : {"q", "k", "v"}) {
            CAPTURE(name);
            const auto& v = stage_of(t, "view").at(name).values;
            const auto& tr = stage_of(t, "transpose").at(name).values;
            const std::size_t S = v.shape()[1];
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t h = 0; h < H; ++h)
                    for (std::size_t s = 0; s < S; ++s)
                        for (std::size_t d = 0; d < dk; ++d) CHECK(tr(b, h, s, d) == v(b, s, h, d));
            // and it reads the view's memory: no element was copied
            CHECK(&tr(1, 2, 1, 0) == &v(1, 1, 2, 0));
        }
    }
    SUBCASE("scaled is scores / √dk, elementwise") {
        const auto& s = stage_of(t, "scores").at("scores").values;
        const auto& sc = stage_of(t, "scaled").at("scaled").values;
        auto scaled = sc.begin();
        for (const float score : s) CHECK(*scaled++ == doctest::Approx(score / std::sqrt(2.0f)));
    }
    SUBCASE("scores[b,h,i,j] is the dot product of q[b,h,i,:] and k[b,h,j,:]") {
        const auto& q = stage_of(t, "transpose").at("q").values;
        const auto& k = stage_of(t, "transpose").at("k").values;
        const auto& s = stage_of(t, "scores").at("scores").values;
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 4; ++j)
                CHECK(s(1, 2, i, j) == doctest::Approx(q(1, 2, i, 0) * k(1, 2, j, 0) + q(1, 2, i, 1) * k(1, 2, j, 1)));
    }
    SUBCASE("merge swaps back: merge[b,s,h,d] == context[b,h,s,d]") {
        const auto& ctx = stage_of(t, "context").at("context").values;
        const auto& m = stage_of(t, "merge").at("context").values;
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t s = 0; s < 3; ++s)
                    for (std::size_t d = 0; d < dk; ++d) CHECK(m(b, s, h, d) == ctx(b, h, s, d));
        CHECK(&m(1, 2, 1, 0) == &ctx(1, 1, 2, 0));  // the same memory: no element was copied
    }
    SUBCASE("concat holds merge's elements in row-major order, in memory of its own (the copy)") {
        const auto& m = stage_of(t, "merge").at("context").values;
        const auto& cat = stage_of(t, "concat").at("concat").values;
        REQUIRE(m.size() == cat.size());
        CHECK(std::equal(m.begin(), m.end(), cat.begin()));
        CHECK(std::equal(cat.data(), cat.data() + cat.size(), cat.begin()));  // row-major in its storage
        CHECK(stage_of(t, "concat").at("concat").storage != stage_of(t, "merge").at("context").storage);
        CHECK(cat(1, 2, 3) == m(1, 2, 1, 1));
    }
}

TEST_CASE("a sink is handed each stage once, in order, as soon as it is complete") {
    // records each stage's end, and whether the trace so far ends with that stage
    struct recording_keeper : attn::trace_keeper {
        attn::trace& kept;
        std::vector<std::string> seen;
        bool always_last = true;
        explicit recording_keeper(attn::trace& into) : trace_keeper(into), kept(into) {}
        void end(const attn::trace& so_far, const attn::stage& s) override {
            trace_keeper::end(so_far, s);
            seen.emplace_back(s.name());
            always_last = always_last && !kept.stages.empty() && kept.stages.back().name() == s.name() &&
                          kept.stages.size() == seen.size();
        }
    };
    attn::config c;
    c.mask.causal = true;
    attn::trace t;
    t.stages.reserve(attn::stage_count);
    recording_keeper keeper(t);
    attn::compute_stages(c, attn::draw_inputs(c), attn::stage_plan::every_stage(), keeper);
    CHECK(keeper.seen == stage_names(t));
    CHECK(keeper.seen.size() == 14);
    CHECK(keeper.always_last);
}

TEST_CASE("the mask tensor holds booleans; every other tensor float32") {
    attn::config c;
    c.mask.window = true;
    c.mask.window_size = 1;
    const attn::trace t = run(c);
    for (const auto& s : t.stages)
        for (const auto& tensor : s.tensors) {
            CAPTURE(s.name());
            CHECK((tensor.type == attn::element_type::boolean) == (s.name() == "mask"));
        }
    for (float v : stage_of(t, "mask").at("mask").values) CHECK((v == 0.0f || v == 1.0f));
}

TEST_CASE("the masked stage holds the fill exactly where the mask is false, for every head") {
    attn::config c;
    c.batch = 2;
    c.mask.padding = true;
    c.mask.lengths = {1, 3};
    c.fill = -1e9f;
    const attn::trace t = run(c);
    const auto& mask = stage_of(t, "mask").at("mask").values;
    const auto& scaled = stage_of(t, "scaled").at("scaled").values;
    const auto& masked = stage_of(t, "masked").at("masked").values;
    const auto& weights = stage_of(t, "softmax").at("weights").values;
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 4; ++i)
                for (std::size_t j = 0; j < 4; ++j) {
                    const bool allowed = mask(b, 0, i, j) != 0.0f;
                    CHECK(allowed == (j < (b == 0 ? 1u : 3u)));
                    CHECK(masked(b, h, i, j) == (allowed ? scaled(b, h, i, j) : -1e9f));
                    if (!allowed) CHECK(weights(b, h, i, j) == 0.0f);
                }
}

TEST_CASE("rows with no allowed key: warnings name them, weights NaN with -inf, uniform with a finite fill") {
    // Up to three such rows get a warning each, in plain words; more get one warning in
    // which consecutive empty rows of one batch item are one range, "batch 1 queries 0..3";
    // after eight ranges the rest is counted.
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 3;
    c.d_model = c.d_in = c.d_kv_in = 4;
    c.mask.padding = true;
    c.mask.lengths = {3, 0};
    SUBCASE("-inf: NaN, as PyTorch; one warning per row") {
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 3);
        for (std::size_t i = 0; i < 3; ++i) {
            CHECK(t.warnings[i].stage == "softmax");
            CHECK(t.warnings[i].text == "batch 1, query " + std::to_string(i) +
                                            ": no key may be attended, so its weights are NaN (fill -inf)");
        }
        const auto& w = stage_of(t, "softmax").at("weights").values;
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 3; ++j) {
                    CHECK(std::isnan(w(1, h, i, j)));
                    CHECK_FALSE(std::isnan(w(0, h, i, j)));
                }
    }
    SUBCASE("-1e9: uniform; the fill as typed") {
        c.fill = -1e9f;
        c.fill_text = "-1e9";
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 3);
        CHECK(t.warnings[2].text == "batch 1, query 2: no key may be attended, so its weights are uniform (fill -1e9), and its context is the plain mean of V");
        const auto& w = stage_of(t, "softmax").at("weights").values;
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 3; ++j) CHECK(w(1, h, i, j) == doctest::Approx(1.0 / 3).epsilon(1e-6));
    }
    SUBCASE("more than three rows: one warning, uniform with a finite fill") {
        c.seq = c.kv_seq = 4;
        c.mask.lengths = {4, 0};
        c.fill = -1e9f;
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text ==
              "no key may be attended in batch 1 queries 0..3: their weights are uniform (the fill -1e+09 is finite), and their context is the plain mean of V");
    }
    SUBCASE("only the empty rows are named (causal + padding + window)") {
        c.mask.causal = true;
        c.mask.lengths = {3, 2};  // nothing empty: causal keeps key 0 for every query
        CHECK(run(c).warnings.empty());
        c.mask.window = true;
        c.mask.window_size = 0;  // causal + window 0 = the diagonal; padding 2 empties query 2 of batch 1
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text == "batch 1, query 2: no key may be attended, so its weights are NaN (fill -inf)");
    }
    SUBCASE("a range and a single row in different batch items (window 0 + padding {0, 2})") {
        c.mask.window = true;
        c.mask.window_size = 0;
        c.mask.lengths = {0, 2};
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text ==
              "no key may be attended in batch 0 queries 0..2, batch 1 query 2: their weights are NaN (the fill is "
              "-inf; PyTorch gives NaN too)");
    }
    SUBCASE("a gap splits one batch item's rows into two ranges (random, seed 2, keep 0.3)") {
        c.batch = 1;
        c.seq = 6;
        c.kv_seq = 2;
        c.mask = attn::mask_spec{};
        c.mask.random = true;
        c.mask.random_seed = 2;
        c.mask.random_keep = 0.3;
        const attn::trace t = run(c);
        const auto& mask = stage_of(t, "mask").at("mask").values;  // rows 0, 1, 2, 5 are empty
        CHECK(mask == xt::xarray<float>{{{{0, 0}, {0, 0}, {0, 0}, {0, 1}, {0, 1}, {0, 0}}}});
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text ==
              "no key may be attended in batch 0 queries 0..2, batch 0 query 5: their weights are NaN (the fill is "
              "-inf; PyTorch gives NaN too)");
    }
    SUBCASE("eight ranges are all named") {
        c.batch = 8;
        c.seq = 2;
        c.mask.lengths = std::vector<std::int64_t>(8, 0);
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text ==
              "no key may be attended in batch 0 queries 0..1, batch 1 queries 0..1, batch 2 queries 0..1, "
              "batch 3 queries 0..1, batch 4 queries 0..1, batch 5 queries 0..1, batch 6 queries 0..1, "
              "batch 7 queries 0..1: their weights are NaN (the fill is -inf; PyTorch gives NaN too)");
    }
    SUBCASE("more than eight ranges: the first eight, then the number of rows") {
        c.batch = 9;
        c.seq = 2;
        c.mask.lengths = std::vector<std::int64_t>(9, 0);
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text ==
              "no key may be attended in batch 0 queries 0..1, batch 1 queries 0..1, batch 2 queries 0..1, "
              "batch 3 queries 0..1, batch 4 queries 0..1, batch 5 queries 0..1, batch 6 queries 0..1, "
              "batch 7 queries 0..1, ... (18 rows in all): their weights are NaN (the fill is -inf; PyTorch gives "
              "NaN too)");
    }
    SUBCASE("no mask, no warning") {
        c.mask = attn::mask_spec{};
        CHECK(run(c).warnings.empty());
    }
}

TEST_CASE("--safe-softmax: a row with no allowed key gets 0 weights; the other rows are unchanged bit for bit") {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 3;
    c.d_model = c.d_in = c.d_kv_in = 4;
    c.mask.padding = true;
    c.mask.lengths = {3, 0};
    const auto weights = [](const attn::trace& t) { return xt::xarray<float>(stage_of(t, "softmax").at("weights").values); };
    const auto check_safe = [&](const attn::config& plain_config) {
        attn::config safe_config = plain_config;
        safe_config.safe_softmax = true;
        const attn::trace plain = run(plain_config), safe = run(safe_config);
        const auto &w_plain = weights(plain), &w_safe = weights(safe);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 3; ++j) {
                    CHECK(w_safe(1, h, i, j) == 0.0f);                         // batch 1: every key is padding
                    CHECK(bits_equal(w_safe(0, h, i, j), w_plain(0, h, i, j)));  // batch 0: untouched
                }
        // and what comes after: the context of an empty row is 0, the rest the same
        const auto& ctx = stage_of(safe, "context").at("context").values;
        for (std::size_t e = 0; e < ctx.size() / 2; ++e) CHECK(ctx.data()[ctx.size() / 2 + e] == 0.0f);
        CHECK(safe.warnings.back().text == "batch 1, query 2: no key may be attended, so its weights are 0 (--safe-softmax)");
        CHECK(attn::stage_formula(safe.cfg, "softmax") ==
              "weights = softmax(masked, dim=-1); a row with no allowed key (all -inf) gets 0 weights, not NaN "
              "(--safe-softmax, as torch._safe_softmax)");
    };
    SUBCASE("fill -inf: 0 instead of NaN") { check_safe(c); }
    SUBCASE("a finite fill is refused: torch._safe_softmax would leave its empty rows uniform") {
        c.fill = -1e9f;
        c.fill_text = "-1e9";
        c.safe_softmax = true;
        CHECK_THROWS_WITH_AS(attn::validate(c),
                             "--safe-softmax with --fill -1e9: PyTorch's safe softmax zeroes only rows that are all "
                             "-inf, and a finite fill leaves none (a row with no allowed key stays uniform); use "
                             "--fill -inf or drop --safe-softmax",
                             attn::usage_error);
    }
    SUBCASE("more than three empty rows: one warning saying 0") {
        c.seq = c.kv_seq = 4;
        c.mask.lengths = {4, 0};
        c.safe_softmax = true;
        const attn::trace t = run(c);
        REQUIRE(t.warnings.size() == 1);
        CHECK(t.warnings[0].text == "no key may be attended in batch 1 queries 0..3: their weights are 0 (--safe-softmax)");
    }
    SUBCASE("no empty row: every weight as without it") {
        c.mask.lengths = {3, 1};
        attn::config safe = c;
        safe.safe_softmax = true;
        const xt::xarray<float> a = weights(run(c)), b = weights(run(safe));
        CHECK(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
    }
}

TEST_CASE("the trace keeps a copy of its config") {
    attn::config c;
    c.seed = 42;
    c.mask.causal = true;
    const attn::trace t = run(c);
    CHECK(t.cfg.seed == 42);
    CHECK(t.cfg.mask.causal);
    CHECK(t.cfg.d_model == 8);
}

TEST_CASE("stage_in_run names exactly the stages compute_trace produces") {
    attn::config c = tiny_config();
    SUBCASE("defaults") {}
    SUBCASE("with a mask") { c.mask.causal = true; }
    SUBCASE("without the output projection") { c.out_proj = false; }
    SUBCASE("mask, no output projection, no qkv bias") {
        c.mask.causal = true;
        c.out_proj = false;
        c.qkv_bias = false;
    }
    SUBCASE("dropout in training mode") {
        c.dropout.p = 0.5;
        c.dropout.train = true;
    }
    SUBCASE("dropout in eval mode is the identity: no stage") { c.dropout.p = 0.5; }
    attn::given_inputs given;
    SUBCASE("starting at the given projections") {
        c.sources.from_projections = true;
        const std::size_t B = c.batch, Sq = c.seq, Sk = c.kv_seq, D = c.d_model;
        given.qkv = attn::projections{xt::ones<float>({B, Sq, D}), xt::ones<float>({B, Sk, D}),
                                      xt::ones<float>({B, Sk, D})};
    }
    const attn::trace t = attn::compute_trace(c, attn::draw_inputs(c, std::move(given)));
    for (const auto& info : attn::stage_table) {
        CAPTURE(info.name);
        CHECK(attn::stage_in_run(c, info.name) == (t.find(info.name) != nullptr));
    }
    CHECK_FALSE(attn::stage_in_run(c, "no-such-stage"));
}

}  // TEST_SUITE("attention")
