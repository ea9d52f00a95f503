#include "attn/teach/advice.hpp"

#include <algorithm>
#include <array>
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

/// "a..b", or "a" when a == b.
std::string range(std::int64_t first, std::int64_t last) {
    return first == last ? std::to_string(first) : std::to_string(first) + ".." + std::to_string(last);
}

/// A causal mask with Sq != Sk: the alignment it uses, what that means for the
/// first and last queries, and the flag for the other one.
std::string causal_alignment_advice(const config& c) {
    const std::int64_t sq = c.seq, sk = c.kv_seq;
    const std::string shape = "causal with Sq = " + std::to_string(sq) + " queries and Sk = " + std::to_string(sk) +
                              " keys is aligned ";
    const std::string ones = "torch.ones(" + std::to_string(sq) + ", " + std::to_string(sk) + ")";
    if (c.mask.causal_align == causal_alignment::upper_left) {
        const std::string what = sq < sk ? "the last " + std::to_string(sk - sq) + " keys are attended by no query"
                                         : "queries " + range(sk, sq - 1) + " may attend every key";
        return shape + "upper-left (--causal-align upper-left, the default), as torch.tril(" + ones +
               ") and SDPA's is_causal: query i may attend keys j <= i, so " + what +
               "; a KV-cache decoder aligns lower-right: --causal-align lower-right";
    }
    const std::int64_t d = sk - sq;  // torch.tril's diagonal
    const std::string what =
        d > 0 ? "query 0 sees keys 0.." + std::to_string(d) + " (" + std::to_string(d) +
                    " earlier keys, as a KV cache holds, and its own) and the last query sees every key"
              : "queries " + range(0, -d - 1) + " may attend no key";
    return shape + "lower-right (--causal-align lower-right), as torch.tril(" + ones + ", diagonal=" +
           std::to_string(d) + "), flash-attention and KV-cache decoding: query i may attend keys j <= i " +
           (d > 0 ? "+ " : "- ") + std::to_string(d > 0 ? d : -d) + ", so " + what +
           "; torch.tril and SDPA's is_causal align upper-left: --causal-align upper-left";
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
    if (c.mask.causal && c.seq != c.kv_seq) out.push_back({"mask", causal_alignment_advice(c)});
    return out;
}

void weak_fill_advice(const config& c, const xt::xarray<bool>& mask, const xt::xarray<float>& scaled,
                      const xt::xarray<float>& weights, warning_list& out) {
    if (std::isinf(c.fill)) return;
    const std::size_t batch = weights.shape()[0], heads = weights.shape()[1];
    const std::size_t sq = weights.shape()[2], sk = weights.shape()[3];
    weak_fill_finding f;
    for (std::size_t b = 0; b < batch; ++b)
        for (std::size_t i = 0; i < sq; ++i) {
            const bool* allowed = mask.data() + (b * sq + i) * sk;
            if (std::find(allowed, allowed + sk, true) == allowed + sk) continue;  // uniform by design
            for (std::size_t h = 0; h < heads; ++h) {
                const std::size_t row = ((b * heads + h) * sq + i) * sk;
                for (std::size_t j = 0; j < sk; ++j) {
                    if (allowed[j]) {
                        f.low = std::min(f.low, scaled.data()[row + j]);
                        f.high = std::max(f.high, scaled.data()[row + j]);
                    } else if (weights.data()[row + j] > f.worst) {
                        f.worst = weights.data()[row + j];
                        f.at[0] = b, f.at[1] = h, f.at[2] = i, f.at[3] = j;
                    }
                }
            }
        }
    weak_fill_warning(c, f, out);
}

void weak_fill_finding::merge(const weak_fill_finding& other) {
    low = std::min(low, other.low);
    high = std::max(high, other.high);
    const auto order = [](const weak_fill_finding& x) {  // weak_fill_advice's scan: batch, query, head, key
        return std::array<std::size_t, 4>{x.at[0], x.at[2], x.at[1], x.at[3]};
    };
    if (other.worst > worst || (other.worst == worst && other.worst > 0.0f && order(other) < order(*this))) {
        worst = other.worst;
        std::copy(other.at, other.at + 4, at);
    }
}

void weak_fill_warning(const config& c, const weak_fill_finding& f, warning_list& out) {
    if (std::isinf(c.fill) || !(f.worst >= 1e-6f)) return;
    out.push_back({"masked", "--fill " + fill_text(c) + " is not far below the scores (the scaled scores of allowed keys "
                             "lie in " + number(f.low) + " .. " + number(f.high) + "), so masked keys still get weight: up to " +
                             number(f.worst) + " at batch " + std::to_string(f.at[0]) + ", head " + std::to_string(f.at[1]) +
                             ", query " + std::to_string(f.at[2]) + ", key " + std::to_string(f.at[3]) +
                             ". Use -inf, or a fill such as -1e9"});
}

}  // namespace attn
