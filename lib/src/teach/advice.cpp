#include "attn/teach/advice.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "attn/compute/mistake.hpp"
#include "attn/teach/mistake_text.hpp"

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

warning_list run_advice(const config& c) {
    warning_list out = settings_advice(c);
    if (c.mistake != mistake::none)  // --mistake ID: made on purpose, said where it is made
        out.push_back({std::string(mistake_stage(c.mistake, c.mistake_variant)), mistake_warning(c)});
    return out;
}

}  // namespace attn
