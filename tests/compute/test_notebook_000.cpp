// Acceptance: attn reproduces the numbers printed in seed notebook 000
// (/work/shared/seeds/000_da46a80f422e5167.txt), independently of the PyTorch fixtures.
//
// The notebook: torch.manual_seed(24); three nn.Linear(8,8) for query, key and value;
// X_input_tokens = torch.randn(2,5,8); 4 heads of width 2; scores / sqrt(d_k); causal mask
// (torch.tril) filled with -inf; softmax over the last axis; weights @ v, transposed back and
// viewed as [2,5,8]. It has no output projection, so its attention_output is attn's `concat`.
// The literals below are copied from its printed output (precision=4). Where the notebook file
// cuts an output off, only what is printed is copied: each array is a prefix of the tensor in
// row-major order, and the check compares that prefix to within half a unit of the 4th decimal.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"

namespace {

constexpr float ninf = -std::numeric_limits<float>::infinity();
constexpr double printed_tol = 0.5e-4 + 1e-6;  // rounding to 4 decimals, plus a tiny epsilon

// In [8]: X_input_tokens, [2,5,8]: all 80 values
const std::vector<float> notebook_x = {
    // batch 0
     1.5722f, -1.5508f, -0.9508f, -0.8640f, -0.2197f, -0.5222f,  0.5066f,  0.3882f,
    -0.3872f, -2.0749f,  1.8568f, -0.9443f,  1.5268f,  2.4347f, -0.9094f, -0.4100f,
    -0.1295f,  0.8775f, -1.2089f, -0.8320f,  0.0255f, -1.4403f, -0.2634f, -0.4547f,
    -0.2725f,  0.3093f,  1.6942f, -0.7240f,  0.3211f,  1.2152f, -0.2805f, -0.8066f,
     0.4247f, -2.2672f,  0.3589f,  0.9826f, -0.5440f,  0.8139f,  0.7595f,  0.6310f,
    // batch 1
    -0.5642f, -0.3357f,  0.3224f, -0.2222f, -0.2079f, -0.1331f, -0.6866f,  1.3085f,
    -1.4051f, -0.7623f, -0.6487f,  0.9436f, -0.2093f,  0.6138f,  0.7549f, -0.2196f,
     1.1316f,  0.7940f, -0.4966f, -1.6428f,  0.4345f, -0.4395f, -0.1694f,  0.7543f,
     0.4022f,  0.2770f, -0.7614f,  0.8873f, -1.5371f,  0.0049f, -0.1836f, -1.7946f,
    -1.2220f,  1.0616f,  0.2727f, -0.6134f,  1.3609f,  1.3732f,  0.5116f,  0.8456f,
};

// In [19]: attn_scores after masked_fill(mask == 0, -inf), [2,4,5,5]: the first 86 values
const std::vector<float> notebook_masked = {
    // batch 0, head 0
     0.2502f,     ninf,     ninf,     ninf,     ninf,
    -0.4179f, -0.1734f,     ninf,     ninf,     ninf,
     0.0281f,  0.1137f, -0.0939f,     ninf,     ninf,
    -0.6354f, -0.5394f, -0.1098f, -0.2694f,     ninf,
    -0.1238f, -0.2060f,  0.0896f,  0.0569f, -0.3147f,
    // batch 0, head 1
    -0.4693f,     ninf,     ninf,     ninf,     ninf,
    -1.0784f, -0.4054f,     ninf,     ninf,     ninf,
     0.2629f, -0.2601f, -0.2105f,     ninf,     ninf,
    -0.4109f, -0.2085f,  0.0790f, -0.0139f,     ninf,
    -0.9293f, -1.2110f, -0.1219f, -0.1696f, -0.7876f,
    // batch 0, head 2
    -0.1552f,     ninf,     ninf,     ninf,     ninf,
    -0.1664f, -0.4841f,     ninf,     ninf,     ninf,
     0.0737f,  0.2080f,  0.2011f,     ninf,     ninf,
    -0.0485f, -0.1298f, -0.1409f, -0.0246f,     ninf,
    -0.3010f, -1.1245f, -0.4832f, -0.1315f,  0.8267f,
    // batch 0, head 3 (the notebook file cuts off after row 2, key 0)
    -0.0373f,     ninf,     ninf,     ninf,     ninf,
    -0.1096f, -0.0305f,     ninf,     ninf,     ninf,
    -0.0115f,
};

// In [21]: attn_weights = F.softmax(attn_scores, dim=-1), [2,4,5,5]: the first 95 values
const std::vector<float> notebook_weights = {
    // batch 0, head 0
    1.0000f, 0.0000f, 0.0000f, 0.0000f, 0.0000f,
    0.4392f, 0.5608f, 0.0000f, 0.0000f, 0.0000f,
    0.3362f, 0.3662f, 0.2976f, 0.0000f, 0.0000f,
    0.1911f, 0.2103f, 0.3232f, 0.2755f, 0.0000f,
    0.1929f, 0.1777f, 0.2388f, 0.2311f, 0.1594f,
    // batch 0, head 1
    1.0000f, 0.0000f, 0.0000f, 0.0000f, 0.0000f,
    0.3378f, 0.6622f, 0.0000f, 0.0000f, 0.0000f,
    0.4513f, 0.2675f, 0.2811f, 0.0000f, 0.0000f,
    0.1871f, 0.2291f, 0.3054f, 0.2783f, 0.0000f,
    0.1372f, 0.1035f, 0.3077f, 0.2934f, 0.1581f,
    // batch 0, head 2
    1.0000f, 0.0000f, 0.0000f, 0.0000f, 0.0000f,
    0.5788f, 0.4212f, 0.0000f, 0.0000f, 0.0000f,
    0.3049f, 0.3487f, 0.3464f, 0.0000f, 0.0000f,
    0.2592f, 0.2390f, 0.2363f, 0.2655f, 0.0000f,
    0.1528f, 0.0671f, 0.1273f, 0.1810f, 0.4719f,
    // batch 0, head 3 (the notebook file cuts off after row 3)
    1.0000f, 0.0000f, 0.0000f, 0.0000f, 0.0000f,
    0.4802f, 0.5198f, 0.0000f, 0.0000f, 0.0000f,
    0.3300f, 0.3319f, 0.3381f, 0.0000f, 0.0000f,
    0.2693f, 0.2827f, 0.3167f, 0.1313f, 0.0000f,
};

// In [24]: attention_output, [2,5,8] (attn's concat stage): the first 64 values
const std::vector<float> notebook_concat = {
    // batch 0
     0.5889f, -0.2544f,  0.5796f, -0.2053f,  0.8867f,  0.8584f, -0.1849f, -0.0656f,
     1.3559f,  0.1895f,  0.1792f,  0.5596f,  0.5102f,  0.4807f,  0.2403f, -0.2482f,
     0.8766f, -0.1489f,  0.1727f,  0.2288f,  0.4115f,  0.1955f,  0.1986f, -0.1561f,
     0.7896f, -0.1617f, -0.0589f,  0.5489f,  0.2659f,  0.1213f,  0.3184f, -0.1361f,
     0.7703f, -0.0865f, -0.0439f,  0.3919f,  0.2174f,  0.4571f,  0.2243f, -0.2422f,
    // batch 1 (the notebook file cuts off after row 2)
    -0.1676f,  0.1436f, -0.1614f,  0.3819f, -0.1275f, -0.3200f, -0.2202f, -0.5121f,
    -0.0581f, -0.3306f, -0.4269f,  0.1313f,  0.0746f, -0.0504f, -0.2902f, -0.6253f,
    -0.0008f, -0.2957f, -0.2886f,  0.4192f,  0.3742f, -0.0817f, -0.0170f, -0.3264f,
};

/// The notebook's run: seed 24, batch 2, seq 5, d_model 8, heads 4, causal, no output projection.
attn::config notebook_run_config() {
    attn::config c;
    c.seed = 24;
    c.batch = 2;
    c.seq = 5;
    c.kv_seq = 5;
    c.d_model = 8;
    c.heads = 4;
    c.d_in = 8;
    c.d_kv_in = 8;
    c.qkv_bias = true;
    c.out_proj = false;
    c.mask.causal = true;
    c.fill = ninf;
    return c;
}

/// The printed prefix of a tensor against attn's values (row-major): every element within
/// printed_tol, -inf exactly; the message names the first few differing flat indices.
void check_printed(const attn::trace& tr, const char* stage_name, const char* tensor_name,
                   const std::vector<float>& printed) {
    const std::string label = std::string(stage_name) + "." + tensor_name;
    // CHECK and return rather than REQUIRE: a throw would skip the later SUBCASEs too
    const attn::stage* st = tr.find(stage_name);
    CHECK_MESSAGE(st != nullptr, "stage " << stage_name << " is missing");
    if (st == nullptr) return;
    const attn::tensor* t = nullptr;
    for (const auto& candidate : st->tensors)
        if (candidate.name == tensor_name) t = &candidate;
    CHECK_MESSAGE(t != nullptr, label << " is missing");
    if (t == nullptr) return;
    const std::vector<float> actual(t->values.begin(), t->values.end());
    CHECK_MESSAGE(actual.size() >= printed.size(),
                  label << " has " << actual.size() << " values, the notebook prints "
                        << printed.size());
    if (actual.size() < printed.size()) return;
    std::size_t mismatches = 0;
    double max_diff = 0.0;
    std::ostringstream listed;
    listed << std::setprecision(7);
    for (std::size_t i = 0; i < printed.size(); ++i) {
        const float e = printed[i], a = actual[i];
        const bool ok = std::isinf(e) ? a == e : std::fabs(double(a) - e) <= printed_tol;
        if (std::isfinite(e) && std::isfinite(a)) max_diff = std::max(max_diff, std::fabs(double(a) - e));
        if (!ok && mismatches++ < 5)
            listed << "\n    [" << i << "] notebook " << e << ", attn " << a;
    }
    CHECK_MESSAGE(mismatches == 0, label << ": " << mismatches << " of " << printed.size()
                                         << " printed values differ, max |diff| " << max_diff
                                         << listed.str());
}

}  // namespace

TEST_SUITE("notebook_000") {

TEST_CASE("seed 24, 2x5x8, 4 heads, causal: attn prints what notebook 000 printed") {
    const attn::config c = notebook_run_config();
    attn::validate(c);
    const attn::trace tr = attn::compute_trace(c, attn::draw_inputs(c));

    SUBCASE("In [8]: the input tokens") { check_printed(tr, "input", "x", notebook_x); }
    SUBCASE("In [19]: the masked scores") { check_printed(tr, "masked", "masked", notebook_masked); }
    SUBCASE("In [21]: the attention weights") { check_printed(tr, "softmax", "weights", notebook_weights); }
    SUBCASE("In [24]: the attention output (concat)") { check_printed(tr, "concat", "concat", notebook_concat); }
    SUBCASE("no output projection, as in the notebook") {
        CHECK(tr.find("output") == nullptr);
        const attn::stage* input = tr.find("input");
        REQUIRE(input != nullptr);
        CHECK(input->tensors.size() == 1);  // x only: self-attention
    }
}

}  // TEST_SUITE("notebook_000")
