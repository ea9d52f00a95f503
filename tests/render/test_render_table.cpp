// --format table: the exact text students compare with their PyTorch notebooks.
//
// Every trace here is built by hand with small, exactly representable values,
// so the expected text can be written out literally.
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/render/render_table.hpp"
#include "support.hpp"

namespace {

using attn::element_type;
using attn::render_options;
using attn::stage;
using attn::tensor;
using attn::trace;



trace make_trace(std::vector<stage> stages) {
    trace t;
    t.stages = std::move(stages);
    return t;
}

/// The whole table: the run header, then the stages.
std::string render_with_header(const trace& t, const render_options& options = {}) {
    std::ostringstream out;
    attn::render_table(t, options, out);
    return out.str();
}

/// The stages only: what follows the run header and its blank line.
std::string render(const trace& t, const render_options& options = {}) {
    const std::string text = render_with_header(t, options);
    REQUIRE(text.find("run") <= std::string_view("\x1b[2m").size());  // maybe after a colour code
    const std::size_t end = text.find("\n\n");
    REQUIRE(end != std::string::npos);
    return text.substr(end + 2);
}

// scores [1,2,3,3]: two heads of a 3x3 score matrix.
tensor small_scores() {
    xt::xarray<float> v = {{{{0.5f, -1.25f, 2.0f}, {0.0f, 3.125f, -0.75f}, {1.0f, 0.25f, -2.5f}},
                            {{-0.125f, 0.375f, 1.5f}, {2.25f, -0.5f, 0.0625f}, {-1.75f, 1.125f, 0.875f}}}};
    return {"scores", bhqk, v};
}

// A causal mask [1,1,3,3]: query i may attend keys j <= i.
tensor causal_mask() {
    xt::xarray<float> v = {{{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}}};
    return {"mask", bhqk, v, element_type::boolean};
}

// A [2,1,40,40] tensor (3200 elements, more than PyTorch's threshold of 1000)
// holding 0, 1, 2, ... in row-major order.
tensor counting_weights() {
    xt::xarray<float> v = xt::zeros<float>({2, 1, 40, 40});
    for (std::size_t i = 0; i < v.size(); ++i) v.data()[i] = static_cast<float>(i);
    return {"weights", bhqk, v};
}

std::size_t count_lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text) n += c == '\n';
    return n;
}

}  // namespace

TEST_SUITE("render_table") {

TEST_CASE("the run header: where Q, K, V come from, the seed, the sizes with √dk, the mask and fill") {
    SUBCASE("defaults") {
        CHECK(render_with_header(make_trace({})) ==
              "run    self-attention: Q, K, V from x; seed 0\n"
              "sizes  B=1  Sq=4  Sk=4  Din=8  D=8  H=2  dk=4  √dk=2\n"
              "mask   none (every query may attend every key)\n"
              "\n");
    }
    SUBCASE("seed notebook 000, then its first stage") {
        trace t = make_trace({make_stage("scores", {small_scores()})});
        t.cfg.seed = 24;
        t.cfg.batch = 2;
        t.cfg.seq = t.cfg.kv_seq = 5;
        t.cfg.heads = 4;
        t.cfg.mask.causal = true;
        t.cfg.out_proj = false;
        CHECK(render_with_header(t) ==
              "run    self-attention: Q, K, V from x; seed 24; no output projection\n"
              "sizes  B=2  Sq=5  Sk=5  Din=8  D=8  H=4  dk=2  √dk=1.4142\n"
              "mask   causal, fill -inf\n"
              "\n" +
                  render(t));
    }
    SUBCASE("cross-attention from files, padding with a typed fill, dropout in training mode") {
        trace t = make_trace({});
        t.cfg.batch = 2;
        t.cfg.kv_seq = 6;
        t.cfg.d_kv_in = 12;
        t.cfg.sources.x_from_file = t.cfg.sources.x_kv_from_file = true;
        t.cfg.qkv_bias = false;
        t.cfg.mask.padding = true;
        t.cfg.mask.lengths = {6, 2};
        t.cfg.fill = -1e9f;
        t.cfg.fill_text = "-1e9";
        t.cfg.dropout.p = 0.25;
        t.cfg.dropout.train = true;
        t.cfg.dropout.seed = 5;
        CHECK(render_with_header(t) ==
              "run      cross-attention: Q from x (--input), K and V from x_kv (--kv-input); seed 0; Q, K, V without bias\n"
              "sizes    B=2  Sq=4  Sk=6  Din=8  Dkv=12  D=8  H=2  dk=4  √dk=2\n"
              "mask     padding (lengths 6,2), fill -1e9\n"
              "dropout  p=0.25, training mode: stage 11, keep drawn with --dropout-seed 5\n"
              "\n");
    }
    SUBCASE("Q, K, V given, a mask file with causal, dropout in eval mode") {
        trace t = make_trace({});
        t.cfg.sources.from_projections = true;
        t.cfg.out_proj = false;  // nothing is drawn, so no seed
        t.cfg.mask.causal = t.cfg.mask.from_file = true;
        t.cfg.dropout.p = 0.5;
        CHECK(render_with_header(t) ==
              "run      self-attention: Q, K, V from --q --k --v; no output projection\n"
              "sizes    B=1  Sq=4  Sk=4  D=8  H=2  dk=4  √dk=2\n"
              "mask     causal AND --mask-file, fill -inf\n"
              "dropout  p=0.5, eval mode: the identity (stage 11 needs --train)\n"
              "\n");
    }
    SUBCASE("labels dim with colour") {
        render_options color;
        color.color = true;
        CHECK(render_with_header(make_trace({}), color).rfind("\x1b[2mrun\x1b[0m    self-attention", 0) == 0);
    }
}

TEST_CASE("a stage prints its heading, formula, shape and labelled 2-D slices") {
    const std::string expected =
        "── 6 · scores ── every query against every key, per head\n"
        "   Q·Kᵀ\n"
        "scores [1,2,3,3] (batch, head, query, key) strides [18,9,3,1], contiguous\n"
        "scores[batch=0, head=0]\n"
        "           key 0    key 1    key 2\n"
        "query 0   0.5000  -1.2500   2.0000\n"
        "query 1   0.0000   3.1250  -0.7500\n"
        "query 2   1.0000   0.2500  -2.5000\n"
        "scores[batch=0, head=1]\n"
        "           key 0    key 1    key 2\n"
        "query 0  -0.1250   0.3750   1.5000\n"
        "query 1   2.2500  -0.5000   0.0625\n"
        "query 2  -1.7500   1.1250   0.8750\n";
    CHECK(render(make_trace({make_stage("scores", {small_scores()})})) == expected);
}

TEST_CASE("a 3-D tensor is sliced over its leading axis") {
    xt::xarray<float> x = {{{1.5f, -2.0f, 0.25f}, {3.0f, 0.5f, -1.0f}},
                           {{0.0f, 10.5f, -0.125f}, {2.0f, -3.5f, 4.0f}}};
    const std::string expected =
        "── 1 · input ── the token embeddings\n"
        "   x = torch.randn(B,Sq,Din); keys and values also come from x (self-attention)\n"
        "x [2,2,3] (batch, seq, d_in) strides [6,3,1], contiguous\n"
        "x[batch=0]\n"
        "        d_in 0   d_in 1   d_in 2\n"
        "seq 0   1.5000  -2.0000   0.2500\n"
        "seq 1   3.0000   0.5000  -1.0000\n"
        "x[batch=1]\n"
        "        d_in 0   d_in 1   d_in 2\n"
        "seq 0   0.0000  10.5000  -0.1250\n"
        "seq 1   2.0000  -3.5000   4.0000\n";
    CHECK(render(make_trace({make_stage("input", {{"x", {"batch", "seq", "d_in"}, x}})})) == expected);
}

TEST_CASE("a 2-D tensor has no slice label, a 1-D bias is one row, a 0-D tensor one value; rows line up") {
    xt::xarray<float> w = {{0.5f, -0.25f}, {1.75f, 0.125f}};
    xt::xarray<float> b = {0.1f, -0.2f, 0.3f};
    xt::xarray<float> s = 3.5f;
    const std::string expected =
        "── 2 · params ── weights in nn.Linear layout [out, in]\n"
        "   y = x·Wᵀ + b\n"
        "w_q [2,2] (d_model, d_in) strides [2,1], contiguous\n"
        "              d_in 0     d_in 1\n"
        "d_model 0     0.5000    -0.2500\n"
        "d_model 1     1.7500     0.1250\n"
        "b_q [3] (d_model) strides [1], contiguous\n"
        "           d_model 0  d_model 1  d_model 2\n"
        "b_q           0.1000    -0.2000     0.3000\n"
        "scale [] strides [], contiguous\n"
        "3.5000\n";
    const stage params = make_stage("params", {{"w_q", {"d_model", "d_in"}, w},
                                               {"b_q", {"d_model"}, b},
                                               {"scale", {}, s}});
    render_options whole;
    whole.stages = attn::stages(attn::stage_id::params);  // asked for by name: printed whole
    CHECK(render(make_trace({params}), whole) == expected);
}

TEST_CASE("params: one line per tensor (min, mean, max) unless asked for by name or --full") {
    xt::xarray<float> w = {{0.5f, -0.25f}, {1.75f, 0.0f}};
    xt::xarray<float> b = {0.1f, -0.2f, 0.3f};
    const trace t = make_trace({make_stage("params", {{"w_q", {"d_model", "d_in"}, w}, {"b_q", {"d_model"}, b}})});
    const std::string expected =
        "── 2 · params ── weights in nn.Linear layout [out, in]\n"
        "   y = x·Wᵀ + b\n"
        "   (each tensor as min, mean and max: --stage params or --full prints them whole)\n"
        "                               min     mean      max\n"
        "w_q [2,2] (d_model, d_in)  -0.2500   0.5000   1.7500\n"
        "b_q [3] (d_model)          -0.2000   0.0667   0.3000\n";
    CHECK(render(t) == expected);
    SUBCASE("also when other stages are named") {
        render_options others;
        others.stages = attn::stages(attn::stage_id::params, attn::stage_id::scores);
        CHECK(render(t, others).find("min, mean and max") == std::string::npos);
        others.stages = attn::stages(attn::stage_id::scores);
        CHECK(render(t, others).empty());  // the header only
    }
    SUBCASE("--full prints them whole") {
        render_options full;
        full.full = true;
        const std::string text = render(t, full);
        CHECK(text.find("min, mean and max") == std::string::npos);
        CHECK(text.find("d_model 1     1.7500     0.0000\n") != std::string::npos);
    }
    SUBCASE("the notation follows min and max") {
        xt::xarray<float> tiny = {0.00001f, 0.5f};
        const trace small = make_trace({make_stage("params", {{"b_q", {"d_model"}, tiny}})});
        CHECK(render(small).find("   (scientific notation: some values are below 0.00005)\n") != std::string::npos);
    }
}

TEST_CASE("numbers: one fixed notation per stage, scientific only where fixed would lose a value") {
    // One row of a 1-D tensor whose column labels ("d 0") are narrower than its values.
    auto render_row = [](xt::xarray<float> values, render_options options = {}) {
        return render(make_trace({make_stage("output", {{"out", {"d"}, values}})}), options);
    };
    auto row = [&](xt::xarray<float> values, render_options options = {}) {
        const std::string text = render_row(values, options);
        return text.substr(text.rfind('\n', text.size() - 2) + 1);
    };
    SUBCASE("fixed, with options.precision digits") {
        CHECK(row({0.5f, -1.25f}) == "out   0.5000  -1.2500\n");
        render_options two_digits;
        two_digits.precision = 2;
        CHECK(row({0.5f, -1.25f}, two_digits) == "out   0.50  -1.25\n");
    }
    SUBCASE("integer values keep the decimals (no PyTorch-style \"1.  0.\")") {
        CHECK(row({1.0f, -2.0f, 0.0f}) == "out   1.0000  -2.0000   0.0000\n");
    }
    SUBCASE("a wide range alone stays fixed (PyTorch switches at max/min > 1000)") {
        CHECK(row({0.001f, 2.0f}) == "out  0.0010  2.0000\n");
        CHECK(row({1.0f, 5000.0f}) == "out     1.0000  5000.0000\n");
    }
    SUBCASE("scientific when a nonzero value would print as 0.0000, and a note says so") {
        CHECK(row({0.00004f, 0.001f}) == "out  4.0000e-05  1.0000e-03\n");
        CHECK(render_row({0.00004f, 0.001f})
                  .find("\n   (scientific notation: some values are below 0.00005)\nout [2] (d) strides [1], contiguous\n") !=
              std::string::npos);
        CHECK(row({-0.00004f, 0.5f}) == "out  -4.0000e-05   5.0000e-01\n");  // "-0.0000" would lose it too
        CHECK(row({0.00006f, 0.5f}) == "out  0.0001  0.5000\n");            // rounds to a nonzero digit: fixed
        render_options two_digits;
        two_digits.precision = 2;
        CHECK(render_row({0.004f, 0.5f}, two_digits).find("(scientific notation: some values are below 0.005)") !=
              std::string::npos);
    }
    SUBCASE("scientific when a value is 1e8 or larger") {
        CHECK(row({1.0f, 2e8f}) == "out  1.0000e+00  2.0000e+08\n");
        CHECK(render_row({1.0f, 2e8f}).find("   (scientific notation: some values are 1e8 or larger)\n") !=
              std::string::npos);
        CHECK(render_row({0.00001f, 2e8f}).find("(scientific notation: some values are below 0.00005 and some are 1e8 or larger)") !=
              std::string::npos);
    }
    SUBCASE("--sci-mode on and off force the notation, without a note") {
        render_options on, off;
        on.notation = attn::sci_mode::on;
        off.notation = attn::sci_mode::off;
        CHECK(row({0.5f, 1.0f}, on) == "out  5.0000e-01  1.0000e+00\n");
        CHECK(row({0.00004f, 0.5f}, off) == "out  0.0000  0.5000\n");
        CHECK(render_row({0.00004f, 0.5f}, off).find("scientific") == std::string::npos);
    }
    SUBCASE("zeros and non-finite values do not decide the notation") {
        CHECK(row({0.0f, 0.5f, -inf, inf, NAN}) == "out  0.0000  0.5000    -inf     inf     nan\n");
        CHECK(row({0.0f, NAN}) == "out  0.0000     nan\n");
    }
}

TEST_CASE("numbers: every float tensor of a stage in the same notation, columns lined up") {
    // PyTorch alone would print k in scientific notation (max/min = 2000 > 1000) and q in fixed.
    xt::xarray<float> q = {{{0.5f, -0.25f}}};
    xt::xarray<float> k = {{{0.001f, 2.0f}, {-1.5f, 0.125f}}};
    const std::string expected =
        "── 3 · projections ── queries, keys and values\n"
        "   Q = X·W_qᵀ + b_q, K = X·W_kᵀ + b_k, V = X·W_vᵀ + b_v\n"
        "q [1,1,2] (batch, seq, d_model) strides [2,2,1], contiguous\n"
        "q[batch=0]\n"
        "          d_model 0  d_model 1\n"
        "seq 0        0.5000    -0.2500\n"
        "k [1,2,2] (batch, kv_seq, d_model) strides [4,2,1], contiguous\n"
        "k[batch=0]\n"
        "          d_model 0  d_model 1\n"
        "kv_seq 0     0.0010     2.0000\n"
        "kv_seq 1    -1.5000     0.1250\n";
    CHECK(render(make_trace({make_stage("projections", {{"q", {"batch", "seq", "d_model"}, q},
                                                        {"k", {"batch", "kv_seq", "d_model"}, k}})})) == expected);
    SUBCASE("one tiny value puts the whole stage in scientific notation") {
        xt::xarray<float> tiny = {{{0.00001f, 2.0f}, {-1.5f, 0.125f}}};
        const std::string text = render(make_trace({make_stage(
            "projections", {{"q", {"batch", "seq", "d_model"}, q}, {"k", {"batch", "kv_seq", "d_model"}, tiny}})}));
        CHECK(text.find("seq 0      5.0000e-01  -2.5000e-01\n") != std::string::npos);
        CHECK(text.find("kv_seq 0   1.0000e-05   2.0000e+00\n") != std::string::npos);
    }
}

TEST_CASE("a finite fill prints as typed in the masked stage; the scores stay in fixed notation") {
    xt::xarray<float> v = {{{{0.5f, -1e9f, -1e9f}, {0.0f, 3.125f, -1e9f}, {1.0f, 0.25f, -2.5f}}}};
    trace t = make_trace({make_stage("masked", {{"masked", bhqk, v}})});
    t.cfg.fill = -1e9f;
    t.cfg.fill_text = "-1e9";
    const std::string expected =
        "── 9 · masked ── scaled scores with the fill value where the mask is false\n"
        "   masked = scaled.masked_fill(mask == false, -1e9)\n"
        "masked [1,1,3,3] (batch, head, query, key) strides [9,9,3,1], contiguous\n"
        "masked[batch=0, head=0]\n"
        "           key 0    key 1    key 2\n"
        "query 0   0.5000     -1e9     -1e9\n"
        "query 1   0.0000   3.1250     -1e9\n"
        "query 2   1.0000   0.2500  -2.5000\n";
    CHECK(render(t) == expected);
    SUBCASE("--sci-mode on writes it as a number") {
        render_options on;
        on.notation = attn::sci_mode::on;
        CHECK(render(t, on).find("query 0   5.0000e-01  -1.0000e+09  -1.0000e+09\n") != std::string::npos);
    }
    SUBCASE("only in the masked stage") {
        trace scores = make_trace({make_stage("scaled", {{"scaled", bhqk, v}})});
        scores.cfg = t.cfg;
        CHECK(render(scores).find("(scientific notation: some values are 1e8 or larger)") != std::string::npos);
    }
}

TEST_CASE("a -inf fill keeps fixed notation and prints -inf in the common width") {
    xt::xarray<float> v = {{{{0.5f, -inf}, {-0.25f, 1.5f}}}};
    const std::string expected =
        "masked[batch=0, head=0]\n"
        "           key 0    key 1\n"
        "query 0   0.5000     -inf\n"
        "query 1  -0.2500   1.5000\n";
    const std::string text = render(make_trace({make_stage("masked", {{"masked", bhqk, v}})}));
    CHECK(text.substr(text.find("masked[")) == expected);
}

TEST_CASE("the mask prints True and False, one slice per batch item for every head") {
    const std::string expected =
        "── 8 · mask ── where each query may attend (true = may attend)\n"
        "   mask[b,0,i,j] = (j <= i); true = query i may attend key j, the same for every head\n"
        "mask [1,1,3,3] (batch, head, query, key) strides [9,9,3,1], contiguous\n"
        "mask[batch=0] (the same for every head)\n"
        "         key 0  key 1  key 2\n"
        "query 0   True  False  False\n"
        "query 1   True   True  False\n"
        "query 2   True   True   True\n";
    trace t = make_trace({make_stage("mask", {causal_mask()})});
    t.cfg.mask.causal = true;
    CHECK(render(t) == expected);
}

TEST_CASE("a head axis of size 1 in a boolean mask is broadcast: no head=0 in its labels") {
    SUBCASE("[2,1,2,2]: one slice per batch item") {
        xt::xarray<float> m = {{{{1, 0}, {1, 1}}}, {{{0, 0}, {1, 0}}}};
        const std::string text = render(make_trace({make_stage("mask", {{"mask", bhqk, m, element_type::boolean}})}));
        CHECK(text.find("mask[batch=0] (the same for every head)\n") != std::string::npos);
        CHECK(text.find("mask[batch=1] (the same for every head)\n") != std::string::npos);
        CHECK(text.find("head=") == std::string::npos);
    }
    SUBCASE("dropout's keep [1,2,2,2] has a mask per head") {
        xt::xarray<float> k = {{{{1, 0}, {1, 1}}, {{0, 1}, {1, 0}}}};
        const std::string text = render(make_trace({make_stage("dropout", {{"keep", bhqk, k, element_type::boolean}})}));
        CHECK(text.find("keep[batch=0, head=1]\n") != std::string::npos);
        CHECK(text.find("the same for every head") == std::string::npos);
    }
    SUBCASE("float scores of one head are that head's: head=0 stays") {
        xt::xarray<float> v = {{{{0.5f, 1.0f}, {1.5f, 2.0f}}}};
        const std::string text = render(make_trace({make_stage("scores", {{"scores", bhqk, v}})}));
        CHECK(text.find("scores[batch=0, head=0]\n") != std::string::npos);
    }
}

TEST_CASE("more than 1000 elements: the first and last 3 of every long axis") {
    const std::string text = render(make_trace({make_stage("softmax", {counting_weights()})}));
    // 0 .. 3199 in fixed notation (PyTorch would switch to scientific: max/min = 3199 > 1000).
    const std::string expected_first_slice =
        "weights [2,1,40,40] (batch, head, query, key) strides [1600,1600,40,1], contiguous "
        "(summarised: --full prints all 3200 values)\n"
        "weights[batch=0, head=0]\n"
        "              key 0      key 1      key 2  ...     key 37     key 38     key 39\n"
        "query 0      0.0000     1.0000     2.0000  ...    37.0000    38.0000    39.0000\n"
        "query 1     40.0000    41.0000    42.0000  ...    77.0000    78.0000    79.0000\n"
        "query 2     80.0000    81.0000    82.0000  ...   117.0000   118.0000   119.0000\n"
        "...\n"
        "query 37  1480.0000  1481.0000  1482.0000  ...  1517.0000  1518.0000  1519.0000\n"
        "query 38  1520.0000  1521.0000  1522.0000  ...  1557.0000  1558.0000  1559.0000\n"
        "query 39  1560.0000  1561.0000  1562.0000  ...  1597.0000  1598.0000  1599.0000\n"
        "weights[batch=1, head=0]\n";
    const std::size_t start = text.find("weights [");
    REQUIRE(start != std::string::npos);
    CHECK(text.substr(start, expected_first_slice.size()) == expected_first_slice);
    CHECK(text.find("key 3 ") == std::string::npos);
    CHECK(text.find("query 3 ") == std::string::npos);
    CHECK(count_lines(text) == 2 + 1 + 2 * 9);  // heading, formula, header, 2 slices of 9 lines
}

TEST_CASE("a long leading axis is cut to its first and last 3 slices") {
    // [8,1,2,100]: 1600 elements; batch and key are longer than 6, query is not.
    xt::xarray<float> v = xt::zeros<float>({8, 1, 2, 100});
    const std::string text = render(make_trace({make_stage("scores", {{"scores", bhqk, v}})}));
    CHECK(text.find("scores[batch=2, head=0]\n") != std::string::npos);
    CHECK(text.find("scores[batch=3, head=0]") == std::string::npos);
    CHECK(text.find("scores[batch=5, head=0]\n") != std::string::npos);
    CHECK(text.find("\n... (2 more slices: batch=3..4) ...\nscores[batch=5, head=0]\n") != std::string::npos);
}

TEST_CASE("--full prints every value") {
    render_options full;
    full.full = true;
    const std::string text = render(make_trace({make_stage("softmax", {counting_weights()})}), full);
    CHECK(text.find("weights [2,1,40,40] (batch, head, query, key) strides [1600,1600,40,1], contiguous\n") !=
          std::string::npos);
    CHECK(text.find("summarised") == std::string::npos);
    CHECK(text.find("...") == std::string::npos);
    CHECK(text.find("  key 20  ") != std::string::npos);
    CHECK(text.find("\nquery 20  ") != std::string::npos);
    // All integers 0..3199, in fixed notation.
    CHECK(text.find("  3199.0000\n") != std::string::npos);
    CHECK(count_lines(text) == 2 + 1 + 2 * (1 + 1 + 40));  // per slice: label, column labels, 40 rows
}

TEST_CASE("stages are separated by one blank line and filtered by options.stages") {
    const trace t =
        make_trace({make_stage("scores", {small_scores()}), make_stage("mask", {causal_mask()})});
    SUBCASE("all stages, one blank line between them") {
        const std::string text = render(t);
        CHECK(text.find("  -1.7500   1.1250   0.8750\n\n── 8 · mask ──") != std::string::npos);
        CHECK(text.find("\n\n\n") == std::string::npos);
        CHECK(text.back() == '\n');
        CHECK(text[text.size() - 2] != '\n');
    }
    SUBCASE("only the stages asked for") {
        render_options only_mask;
        only_mask.stages = attn::stages(attn::stage_id::mask);
        const std::string text = render(t, only_mask);
        CHECK(text.rfind("── 8 · mask ──", 0) == 0);
        CHECK(text.find("scores") == std::string::npos);
    }
}

TEST_CASE("a warning is printed right under the heading of the stage it concerns, before the tensors") {
    trace t = make_trace({make_stage("mask", {causal_mask()})});
    t.cfg.mask.causal = true;
    const std::string without = render(t);
    t.warnings.push_back({"mask", "batch 0, query 0: no key may be attended, so its weights are NaN (fill -inf)"});
    t.warnings.push_back({"softmax", "not in this trace"});
    const std::string heading =
        "── 8 · mask ── where each query may attend (true = may attend)\n"
        "   mask[b,0,i,j] = (j <= i); true = query i may attend key j, the same for every head\n";
    REQUIRE(without.rfind(heading, 0) == 0);
    CHECK(render(t) == heading + "   ! batch 0, query 0: no key may be attended, so its weights are NaN (fill -inf)\n" +
                           without.substr(heading.size()));
}

TEST_CASE("skipped stages between two shown ones get one line: 8-9 without a mask, 11 without dropout") {
    xt::xarray<float> v = {{{{0.5f, 0.25f}}}};
    const trace t = make_trace({make_stage("scaled", {{"scaled", bhqk, v}}), make_stage("softmax", {{"weights", bhqk, v}}),
                                make_stage("context", {{"context", {"batch", "head", "seq", "head_dim"}, v}})});
    const std::string no_mask = "\n\n── 8-9 · mask, masked ── skipped: no --mask, --mask-file or --key-padding-mask, so every query may attend every key\n\n── 10 · softmax ──";
    const std::string no_dropout = "\n\n── 11 · dropout ── skipped: no --dropout, so the weights go on unchanged\n\n── 12 · context ──";
    SUBCASE("all shown") {
        const std::string text = render(t);
        CHECK(text.find(no_mask) != std::string::npos);
        CHECK(text.find(no_dropout) != std::string::npos);
    }
    SUBCASE("eval mode says so") {
        trace eval = t;
        eval.cfg.dropout.p = 0.5;
        CHECK(render(eval).find("\n── 11 · dropout ── skipped: eval mode (--dropout acts only with --train), so the "
                                "weights go on unchanged\n") != std::string::npos);
    }
    SUBCASE("only when the neighbouring stages are shown") {
        render_options some;
        some.stages = attn::stages(attn::stage_id::softmax);
        CHECK(render(t, some).find("skipped") == std::string::npos);
        some.stages = attn::stages(attn::stage_id::scaled, attn::stage_id::context);
        CHECK(render(t, some).find("skipped") == std::string::npos);
        some.stages = attn::stages(attn::stage_id::softmax, attn::stage_id::context);
        const std::string text = render(t, some);
        CHECK(text.find("8-9") == std::string::npos);
        CHECK(text.find(no_dropout) != std::string::npos);
    }
}

TEST_CASE("colour: escape codes only when options.color") {
    xt::xarray<float> v = {{{{0.5f, -inf}, {NAN, 1.5f}}}};
    const trace t =
        make_trace({make_stage("masked", {{"masked", bhqk, v}}), make_stage("mask", {causal_mask()})});
    SUBCASE("color = false: none at all") {
        CHECK(render(t).find('\x1b') == std::string::npos);
    }
    SUBCASE("color = true: bold heading, dim labels and -inf and False, red nan") {
        render_options color;
        color.color = true;
        const std::string text = render(t, color);
        CHECK(text.rfind("\x1b[1m── 9 · masked ── scaled scores with the fill value where the mask "
                         "is false\x1b[0m\n",
                         0) == 0);
        CHECK(text.find("masked [1,1,2,2] \x1b[2m(batch, head, query, key)\x1b[0m "
                        "\x1b[2mstrides [4,4,2,1], contiguous\x1b[0m\n") != std::string::npos);
        CHECK(text.find("\n\x1b[2mquery 0\x1b[0m  0.5000    \x1b[2m-inf\x1b[0m\n") != std::string::npos);
        CHECK(text.find("\n\x1b[2mquery 1\x1b[0m     \x1b[31mnan\x1b[0m  1.5000\n") != std::string::npos);
        CHECK(text.find("\n\x1b[2mquery 0\x1b[0m   True  \x1b[2mFalse\x1b[0m  \x1b[2mFalse\x1b[0m\n") !=
              std::string::npos);
    }
}

TEST_CASE("each tensor's header line gives its strides, whether it is contiguous, and whose memory a view reads") {
    attn::config c;  // B=1, S=4, D=8, H=2, dk=4
    attn::validate(c);
    const trace t = attn::compute_trace(c, attn::draw_inputs(c));
    render_options some;
    some.stages = attn::stages(attn::stage_id::projections, attn::stage_id::view, attn::stage_id::transpose, attn::stage_id::context, attn::stage_id::merge, attn::stage_id::concat);
    const std::string text = render(t, some);
    for (const char* header : {
             "\nq [1,4,8] (batch, seq, d_model) strides [32,8,1], contiguous\n",
             "\nq [1,4,2,4] (batch, seq, head, head_dim) strides [32,8,4,1], contiguous: a view of projections.q\n",
             "\nv [1,4,2,4] (batch, kv_seq, head, head_dim) strides [32,8,4,1], contiguous: a view of projections.v\n",
             "\nq [1,2,4,4] (batch, head, seq, head_dim) strides [32,4,8,1], not contiguous: a view of projections.q\n",
             "\nk [1,2,4,4] (batch, head, kv_seq, head_dim) strides [32,4,8,1], not contiguous: a view of projections.k\n",
             "\ncontext [1,2,4,4] (batch, head, seq, head_dim) strides [32,16,4,1], contiguous\n",
             "\ncontext [1,4,2,4] (batch, seq, head, head_dim) strides [32,4,16,1], not contiguous: a view of "
             "context.context\n",
             "\nconcat [1,4,8] (batch, seq, d_model) strides [32,8,1], contiguous\n"}) {
        CAPTURE(header);
        CHECK(text.find(header) != std::string::npos);
    }
}

}  // TEST_SUITE
