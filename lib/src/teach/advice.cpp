#include "attn/teach/advice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace attn {
namespace {

std::string number(double v, const char* format = "%.4g") {
    char text[32];
    std::snprintf(text, sizeof text, format, v);
    return text;
}

}  // namespace

warning_list settings_advice(const config& c) {
    warning_list out;
    if (c.dropout.p > 0.0 && !c.dropout.train)
        out.push_back({"softmax", "--dropout " + number(c.dropout.p, "%g") +
                                      " does nothing without --train: in eval mode (model.eval()) dropout is the "
                                      "identity, so there is no stage 11; add --train to apply it"});
    if (c.dropout.train && c.dropout.p == 0.0)
        out.push_back({"softmax", "--train does nothing without --dropout P (P > 0): dropout is the only layer "
                                  "that training mode changes here"});
    if (c.mask.causal && c.seq != c.kv_seq) {
        const std::string sq = std::to_string(c.seq), sk = std::to_string(c.kv_seq);
        std::string what = c.seq < c.kv_seq
                               ? "the last " + std::to_string(c.kv_seq - c.seq) + " keys are attended by no query"
                               : "queries " + sk + ".." + std::to_string(c.seq - 1) + " may attend every key";
        out.push_back({"mask", "causal with Sq = " + sq + " queries and Sk = " + sk +
                                   " keys is aligned upper-left, as torch.tril(torch.ones(" + sq + ", " + sk +
                                   ")) and SDPA's is_causal: query i may attend keys j <= i, so " + what +
                                   " (a KV-cache decoder aligns lower-right instead)"});
    }
    return out;
}

void weak_fill_advice(const config& c, const xt::xarray<bool>& mask, const xt::xarray<float>& scaled,
                      const xt::xarray<float>& weights, warning_list& out) {
    if (std::isinf(c.fill)) return;
    const std::size_t batch = weights.shape()[0], heads = weights.shape()[1];
    const std::size_t sq = weights.shape()[2], sk = weights.shape()[3];
    float worst = 0.0f, low = INFINITY, high = -INFINITY;
    std::size_t at[4] = {0, 0, 0, 0};
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* allowed = mask.data() + (b * sq + i) * sk;
            if (std::find(allowed, allowed + sk, true) == allowed + sk) continue;  // uniform by design
            for (std::size_t h = 0; h < heads; ++h) {
                const std::size_t row = ((b * heads + h) * sq + i) * sk;
                for (std::size_t j = 0; j < sk; ++j) {
                    if (allowed[j]) {
                        low = std::min(low, scaled.data()[row + j]);
                        high = std::max(high, scaled.data()[row + j]);
                    } else if (weights.data()[row + j] > worst) {
                        worst = weights.data()[row + j];
                        at[0] = b, at[1] = h, at[2] = i, at[3] = j;
                    }
                }
            }
        }
    if (!(worst >= 1e-6f)) return;
    out.push_back({"masked", "--fill " + fill_text(c) + " is not far below the scores (the scaled scores of allowed keys "
                             "lie in " + number(low) + " .. " + number(high) + "), so masked keys still get weight: up to " +
                             number(worst) + " at batch " + std::to_string(at[0]) + ", head " + std::to_string(at[1]) +
                             ", query " + std::to_string(at[2]) + ", key " + std::to_string(at[3]) +
                             ". Use -inf, or a fill such as -1e9"});
}

}  // namespace attn
