// The flash stage (--flash-block N): the online softmax against PyTorch's loop
// (tests/reference/make_flash_fixtures.py), against a hand-worked row, on fully masked rows,
// and query chunks against the whole plane (notebook 002's chunked attention done right).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <tuple>

#include "attn/compute/attention.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/flash.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/stage_sink.hpp"
#include "support.hpp"

extern "C" char* openblas_get_corename(void);

namespace {

namespace fs = std::filesystem;

/// A fixture's "config" (make_fixtures.py's keys and "flash_block") as a config.
attn::config flash_fixture_config(const nlohmann::json& j) {
    attn::config c;
    c.batch = j.at("batch");
    c.seq = j.at("seq");
    c.kv_seq = j.at("kv_seq");
    c.d_model = j.at("d_model");
    c.heads = j.at("heads");
    c.d_in = j.at("d_in");
    c.d_kv_in = j.at("d_kv_in");
    c.qkv_bias = j.at("qkv_bias");
    c.out_proj = j.at("out_proj");
    c.seed = j.at("seed");
    attn::parse_mask_kinds(j.at("mask").get<std::string>(), c.mask);
    if (j.contains("lengths")) c.mask.lengths = j.at("lengths").get<std::vector<std::int64_t>>();
    if (j.contains("causal_align")) c.mask.causal_align = *attn::parse_causal_alignment(j.at("causal_align").get<std::string>());
    const nlohmann::json& fill = j.at("fill");
    c.fill = fill.is_string() ? -inf : static_cast<float>(fill.get<double>());
    c.flash_block = j.at("flash_block");
    return c;
}

float flash_fixture_value(const nlohmann::json& v) {
    if (v.is_string()) return v == "nan" ? not_a_number : (v == "inf" ? inf : -inf);
    return static_cast<float>(v.get<double>());
}

/// Whether make_flash_fixtures.py made this OpenBLAS kernel's bits (flash/kernels.txt), and
/// the file of its set: openblas/<set>/flash/<name> where that exists, else flash/<name>.
struct flash_fixture_set {
    std::string set;
    fs::path file(const std::string& name) const {
        const fs::path overlay = fs::path(reference_path("openblas")) / set / "flash" / name;
        return !set.empty() && fs::exists(overlay) ? overlay : fs::path(reference_path("flash")) / name;
    }
};

flash_fixture_set running_flash_set() {
    flash_fixture_set s;
    std::ifstream in(reference_path("flash/kernels.txt"));
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string kernel, set;
        if (!line.empty() && line[0] != '#' && (words >> kernel >> set) && kernel == openblas_get_corename()) s.set = set;
    }
    return s;
}

/// Every element of `actual` against the fixture's: to the bit when `bits_checked`, else within 1e-5.
void check_flash_tensor(const attn::tensor& actual, const nlohmann::json& expected, bool bits_checked,
                        const std::string& label) {
    const auto shape = expected.at("shape").get<std::vector<std::size_t>>();
    REQUIRE_MESSAGE(std::vector<std::size_t>(actual.values.shape().begin(), actual.values.shape().end()) == shape, label);
    const xt::xarray<float> a = attn::row_major_copy(actual);
    const nlohmann::json& data = expected.at("data");
    std::size_t wrong = 0;
    for (std::size_t e = 0; e < a.size(); ++e) {
        const float want = flash_fixture_value(data[e]), got = a.data()[e];
        const bool same = bits_checked ? bits(want) == bits(got) || (std::isnan(want) && std::isnan(got))
                          : std::isnan(want) ? std::isnan(got)
                                             : want == got || std::fabs(want - got) <= 1e-5f + 1e-5f * std::fabs(want);
        if (!same && wrong++ < 3) MESSAGE(label << "[" << e << "]: " << got << ", PyTorch " << want);
    }
    CHECK_MESSAGE(wrong == 0, label << ": " << wrong << " of " << a.size() << " elements differ");
}

/// [1,1,n,1]: one batch item, one head, n positions of width 1.
xt::xarray<float> flash_column(const std::vector<float>& values) {
    auto x = xt::xarray<float>::from_shape({1, 1, values.size(), 1});
    std::copy(values.begin(), values.end(), x.begin());
    return x;
}

double figure(const attn::stage& s, const std::string& name) {
    for (const attn::stage_figure& f : s.figures)
        if (f.name == name) return f.value;
    FAIL("no figure " << name);
    return 0;
}

/// The context of `c` computed by compute_stages with the planes in blocks of `rows` query rows.
xt::xarray<float> context_in_row_blocks(const attn::config& c, std::size_t rows) {
    attn::stage_plan plan = attn::stage_plan::of({"context"});
    plan.layout = attn::plane_layout::in_rows;
    plan.block_rows = rows;
    attn::trace t;
    attn::trace_keeper keeper(t);
    attn::compute_stages(c, attn::draw_inputs(c), plan, keeper);
    return attn::row_major_copy(t.stages.at(0).at("context"));
}

}  // namespace

TEST_SUITE("flash") {
    TEST_CASE("every flash tensor equals PyTorch's block-by-block loop, and the context the exact one within the tolerance") {
        const flash_fixture_set set = running_flash_set();
        if (set.set.empty()) MESSAGE("OpenBLAS kernel " << std::string(openblas_get_corename()) << " has no flash fixtures: tolerance only");
        std::size_t cases = 0;
        for (const auto& entry : fs::directory_iterator(reference_path("flash"))) {
            if (entry.path().extension() != ".json") continue;
            ++cases;
            const std::string name = entry.path().filename().string();
            CAPTURE(name);
            const nlohmann::json fixture = read_json(set.file(name).string());
            const attn::config c = flash_fixture_config(fixture.at("config"));
            const attn::trace t = run(c);
            const attn::stage* flash = t.find("flash");
            REQUIRE(flash != nullptr);
            for (const char* tensor : {"m", "l", "rescale", "acc", "context"})
                check_flash_tensor(flash->at(tensor), fixture.at("stages").at("flash").at(tensor), !set.set.empty(),
                                   name + " flash." + tensor);
            check_flash_tensor(t.find("context")->at("context"), fixture.at("stages").at("context").at("context"),
                               !set.set.empty(), name + " context.context");
            const double diff = figure(*flash, "max_abs_diff");
            CHECK(diff <= figure(*flash, "tolerance"));
            CHECK(diff > 0.0);  // the two paths round differently: the comparison is not with itself
            if (!set.set.empty()) CHECK(diff == fixture.at("max_abs_diff").get<double>());
            CHECK(t.warnings_of("flash").empty());
        }
        CHECK(cases >= 6);
    }

    TEST_CASE("one row by hand: scores 1 and 2 in blocks of one key, values 10 and 20") {
        // block 0: m = 1, rescale = e^(-inf) = 0, l = 1, acc = 10
        // block 1: m = 2, rescale = e^(1-2), l = e^-1 + 1, acc = 10·e^-1 + 20; context = acc / l
        const attn::tensor q("q", {"batch", "head", "seq", "head_dim"}, flash_column({1.0f}));
        const attn::tensor k("k", {"batch", "head", "kv_seq", "head_dim"}, flash_column({1.0f, 2.0f}));
        const attn::tensor v("v", {"batch", "head", "kv_seq", "head_dim"}, flash_column({10.0f, 20.0f}));
        const std::vector<attn::tensor> out = attn::flash_attention({&q, &k, &v, nullptr, 1.0f, 0.0f, 1});
        REQUIRE(out.size() == 5);
        const double e = std::exp(-1.0);
        CHECK(out[0].values(0, 0, 0, 0) == 1.0f);
        CHECK(out[0].values(0, 0, 0, 1) == 2.0f);
        CHECK(out[2].values(0, 0, 0, 0) == 0.0f);
        CHECK(out[2].values(0, 0, 0, 1) == doctest::Approx(e).epsilon(1e-6));
        CHECK(out[1].values(0, 0, 0, 0) == 1.0f);
        CHECK(out[1].values(0, 0, 0, 1) == doctest::Approx(e + 1).epsilon(1e-6));
        CHECK(out[3].values(0, 0, 0, 0, 0) == 10.0f);
        CHECK(out[3].values(0, 0, 0, 1, 0) == doctest::Approx(10 * e + 20).epsilon(1e-6));
        CHECK(out[4].values(0, 0, 0, 0) == doctest::Approx((10 * e + 20) / (e + 1)).epsilon(1e-6));
    }

    TEST_CASE("a row with no allowed key: m stays -inf, rescale and l 0, context 0 (never NaN); the exact softmax gives NaN") {
        attn::config c;
        c.batch = 2;
        c.seq = c.kv_seq = 5;
        c.mask.padding = true;
        c.mask.lengths = {5, 0};
        c.flash_block = 2;
        const attn::trace t = run(c);
        const attn::stage& flash = *t.find("flash");
        const xt::xarray<float> m = attn::row_major_copy(flash.at("m")), l = attn::row_major_copy(flash.at("l")),
                                r = attn::row_major_copy(flash.at("rescale")), ctx = attn::row_major_copy(flash.at("context"));
        const std::size_t per_batch = m.size() / 2;
        for (std::size_t e = per_batch; e < m.size(); ++e) {
            CHECK(m.data()[e] == -inf);
            CHECK(l.data()[e] == 0.0f);
            CHECK(r.data()[e] == 0.0f);
        }
        for (std::size_t e = ctx.size() / 2; e < ctx.size(); ++e) CHECK(ctx.data()[e] == 0.0f);
        CHECK(std::isnan(t.find("context")->at("context").values(1, 0, 0, 0)));
        CHECK(figure(flash, "max_abs_diff") <= figure(flash, "tolerance"));  // the NaN rows left out
    }

    TEST_CASE("a block of keys all masked in the middle of a row: rescale 1, m and l unchanged") {
        attn::config c;
        c.seq = c.kv_seq = 6;
        c.mask.padding = true;
        c.mask.lengths = {2};
        c.flash_block = 2;
        const attn::trace t = run(c);
        const attn::tensor& m = t.find("flash")->at("m");
        const attn::tensor& l = t.find("flash")->at("l");
        const attn::tensor& r = t.find("flash")->at("rescale");
        CHECK(r.values(0, 1, 3, 1) == 1.0f);
        CHECK(r.values(0, 1, 3, 2) == 1.0f);
        CHECK(m.values(0, 1, 3, 2) == m.values(0, 1, 3, 0));
        CHECK(l.values(0, 1, 3, 2) == l.values(0, 1, 3, 0));
    }

    TEST_CASE("--flash-block is refused below 1 and with dropout in training; the stage is absent without it") {
        attn::config c;
        c.flash_block = -1;
        CHECK_THROWS_AS(attn::validate(c), attn::usage_error);
        c.flash_block = 2;
        c.dropout.p = 0.1;
        c.dropout.train = true;
        CHECK_THROWS_WITH_AS(attn::validate(c), doctest::Contains("--flash-block with --train"), attn::usage_error);
        c.dropout.train = false;
        CHECK_NOTHROW(attn::validate(c));
        CHECK(attn::stage_in_run(c, attn::stage_id::flash));
        c.flash_block = 0;
        CHECK_FALSE(attn::stage_in_run(c, attn::stage_id::flash));
        CHECK(attn::absent_because(attn::stage_id::flash).find("--flash-block") != std::string::npos);
    }

    TEST_CASE("flash needs the context and the transposed q, k, v; its acc is nb times the context in the memory estimate") {
        attn::config c;
        c.seq = c.kv_seq = 10;
        c.flash_block = 3;  // nb = 4
        const attn::stage_set needed = attn::stages_needed(c, attn::stage_bit(attn::stage_id::flash));
        CHECK((needed & attn::stage_bit(attn::stage_id::context)) != 0);
        CHECK((needed & attn::stage_bit(attn::stage_id::transpose)) != 0);
        CHECK((needed & attn::stage_bit(attn::stage_id::merge)) == 0);
        std::uint64_t bytes = 0;
        for (const attn::stage_bytes& s : attn::estimate_stage_bytes(c))
            if (s.id == attn::stage_id::flash) bytes = s.bytes;
        // B·H·Sq = 20 rows: m, l, rescale 3·4 floats each, acc 4·dk = 16, context dk = 4
        CHECK(bytes == 20u * (3 * 4 + 4 * 4 + 4) * 4);
        CHECK_THROWS_AS(attn::check_memory(c, attn::estimate_total_bytes(c) - 1), attn::error);
    }

    TEST_CASE("queries in chunks give the whole context (notebook 002's chunked attention done right)") {
        // each query row's softmax needs only its own row, so blocks of query rows (--block-rows,
        // what --max-memory chooses) give the whole context: bit for bit while each row's products
        // are summed in one order (aten's small loop: dk·Sq·Sk = 4·6·6 < 400), and within rounding
        // when they go to BLAS (16·16·16), whose kernel may tile a chunk otherwise than the plane
        for (const auto& sizes : {std::tuple<int, int, bool>{6, 8, true}, {16, 32, false}}) {
            const int seq = std::get<0>(sizes), d_model = std::get<1>(sizes);  // no structured binding: CAPTURE is a lambda
            const bool bit_for_bit = std::get<2>(sizes);
            attn::config c;
            c.batch = 2;
            c.seq = c.kv_seq = seq;
            c.d_model = c.d_in = c.d_kv_in = d_model;
            c.heads = 2;
            c.mask.causal = true;
            const xt::xarray<float> whole = context_in_row_blocks(c, 0);
            for (std::size_t rows : {1u, 2u, 5u}) {
                CAPTURE(rows);
                CAPTURE(seq);
                const xt::xarray<float> chunked = context_in_row_blocks(c, rows);
                REQUIRE(chunked.size() == whole.size());
                if (bit_for_bit) {
                    CHECK(std::memcmp(chunked.data(), whole.data(), whole.size() * sizeof(float)) == 0);
                } else {
                    float largest = 0.0f;
                    for (std::size_t e = 0; e < whole.size(); ++e)
                        largest = std::max(largest, std::fabs(chunked.data()[e] - whole.data()[e]));
                    CHECK(largest < 1e-6f);
                }
            }
        }
    }
}
