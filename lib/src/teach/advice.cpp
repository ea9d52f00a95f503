// Advice about settings (advice.hpp): the sentences are share/attn/text/advice.md's.
#include "attn/teach/advice.hpp"

#include <string>

#include "attn/compute/mistake.hpp"
#include "attn/teach/mistake_text.hpp"
#include "attn/teach/prose.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

/// "a..b", or "a" when a == b.
std::string range(std::int64_t first, std::int64_t last) {
    return first == last ? std::to_string(first) : std::to_string(first) + ".." + std::to_string(last);
}

/// A causal mask with Sq != Sk: the alignment it uses, what that means for the
/// first and last queries, and the flag for the other one.
std::string causal_alignment_advice(const config& c) {
    const std::int64_t sq = c.seq, sk = c.kv_seq;
    if (c.mask.causal_align == causal_alignment::upper_left) {
        const std::string what =
            sq < sk ? prose("advice.causal.upper_left.unseen_keys", {{"count", sk - sq}})
                    : prose("advice.causal.upper_left.free_queries", {{"queries", range(sk, sq - 1)}});
        return prose("advice.causal.upper_left", {{"Sq", sq}, {"Sk", sk}, {"what", what}});
    }
    const std::int64_t d = sk - sq;  // torch.tril's diagonal
    const std::string what = d > 0 ? prose("advice.causal.lower_right.cached_keys", {{"d", d}})
                                   : prose("advice.causal.lower_right.blind_queries", {{"queries", range(0, -d - 1)}});
    const std::string offset = (d > 0 ? "+ " : "- ") + std::to_string(d > 0 ? d : -d);
    return prose("advice.causal.lower_right", {{"Sq", sq}, {"Sk", sk}, {"d", d}, {"offset", offset}, {"what", what}});
}

}  // namespace

warning_list settings_advice(const config& c) {
    warning_list out;
    if (c.dropout.p > 0.0 && !c.dropout.train)
        out.push_back({"softmax", prose("advice.dropout_without_train", {{"p", significant_text(c.dropout.p)}})});
    if (c.dropout.train && c.dropout.p == 0.0) out.push_back({"softmax", prose("advice.train_without_dropout")});
    // a decoding step (--past N) aligns lower-right by itself, rightly: only upper-left is worth a word
    const bool step_aligned = c.past > 0 && c.mask.causal_align == causal_alignment::lower_right;
    if (c.mask.causal && c.seq != c.kv_seq && !step_aligned) out.push_back({"mask", causal_alignment_advice(c)});
    return out;
}

warning_list run_advice(const config& c) {
    warning_list out = settings_advice(c);
    if (c.mistake != mistake::none)  // --mistake ID: made on purpose, said where it is made
        out.push_back({std::string(info_of(*mistake_stage(c.mistake, c.mistake_variant)).name), mistake_warning(c)});
    return out;
}

}  // namespace attn
