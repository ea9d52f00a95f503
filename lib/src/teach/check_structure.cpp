// An answer's structure against the run's mask and rows (check_structure.hpp).
#include "attn/teach/check_structure.hpp"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <vector>

#include <xtensor/xmanipulation.hpp>

#include "attn/compute/mask.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/join.hpp"

namespace attn {
namespace {

/// A [B,H,Sq,Sk] element's place, as attn check names it.
struct place {
    std::size_t b, h, i, j;
};

std::string place_text(const place& p) {
    return "query " + std::to_string(p.i) + " → key " + std::to_string(p.j) + " (batch " + std::to_string(p.b) +
           ", head " + std::to_string(p.h) + ")";
}

/// The run's mask kinds that forbid (b, i, j), as a phrase: "the causal mask", "the causal
/// and padding masks"; "the mask" when no rule forbids it (a random mask or a mask file).
std::string forbidding_kinds(const config& c, const place& p) {
    const auto forbids = [&](bool mask_spec::*kind) {
        if (!(c.mask.*kind)) return false;
        mask_spec only;
        only.*kind = true;
        only.causal_align = c.mask.causal_align;
        only.lengths = c.mask.lengths;
        only.window_size = c.mask.window_size;
        const mask_rows rows(only, c.seq, c.kv_seq);
        const std::unique_ptr<bool[]> row(new bool[static_cast<std::size_t>(c.kv_seq)]);
        return !rows.row(p.b, p.i, row.get())[p.j];
    };
    std::vector<std::string> kinds;
    if (forbids(&mask_spec::causal)) kinds.emplace_back("causal");
    if (forbids(&mask_spec::padding)) kinds.emplace_back("padding");
    if (forbids(&mask_spec::window)) kinds.emplace_back("window");
    if (kinds.empty()) return "the mask";
    if (kinds.size() == 1) return "the " + kinds[0] + " mask";
    return "the " + join(kinds, ", ", " and ") + " masks";
}

/// What the stage's elements are called: weight, or score at the masked stage.
std::string value_word(std::string_view stage) { return stage == "masked" ? "score" : "weight"; }

}  // namespace

bool structure_readable(std::string_view stage) {
    return stage == "masked" || stage == "softmax" || stage == "dropout";
}

std::optional<structure_finding> read_structure(const trace& right, std::string_view stage_name,
                                                const xt::xarray<float>& answer, const xt::xarray<float>& expected,
                                                const check_tolerance& tol) {
    if (!structure_readable(stage_name) || expected.dimension() != 4 || answer.shape() != expected.shape()) return std::nullopt;
    const std::size_t B = expected.shape()[0], H = expected.shape()[1], Sq = expected.shape()[2],
                      Sk = expected.shape()[3];
    const config& c = right.cfg;
    const stage* mask_stage = right.find(stage_id::mask);
    const bool masked_stage = stage_name == "masked";
    const std::string word = value_word(stage_name);
    const auto at = [&](const xt::xarray<float>& t, const place& p) {
        return t.data()[((p.b * H + p.h) * Sq + p.i) * Sk + p.j];
    };
    if (Sq == Sk && Sq > 1 && all_close(answer, xt::xarray<float>(xt::transpose(expected, {0, 1, 3, 2})), tol))
        return structure_finding{"planes_transposed",
                                 "each [Sq,Sk] plane of your " + word + "s is the right one transposed: query i → key j "
                                 "holds query j → key i's; a .transpose(-2, -1) too many (or the rows read as columns)",
                                 "each plane is transposed"};
    if (mask_stage != nullptr) {
        const xt::xarray<float>& mask = mask_stage->tensors.front().values;  // [B,1,Sq,Sk], 1 = may attend
        const auto allowed = [&](const place& p) { return mask.data()[(p.b * Sq + p.i) * Sk + p.j] != 0.0f; };
        // weight (or a score other than the fill) where the mask forbids; -inf is no weight
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < Sq; ++i)
                    for (std::size_t j = 0; j < Sk; ++j) {
                        const place p{b, h, i, j};
                        if (allowed(p)) continue;
                        const float a = at(answer, p), e = at(expected, p);
                        const bool departs = masked_stage ? a != e : (a != 0.0f && std::isfinite(a) && !std::isnan(e));
                        if (!departs) continue;
                        const std::string kinds = forbidding_kinds(c, p);
                        const bool several = kinds.size() > 6 && kinds.compare(kinds.size() - 6, 6, " masks") == 0;
                        const std::string where = place_text(p) + " has " + word + " " + short_number(a) + " where " +
                                                  kinds + (several ? " forbid it" : " forbids it");
                        return structure_finding{
                            "weight_where_masked",
                            where + ": " + kinds + (several ? " were" : " was") +
                                " not applied there; fill the forbidden scores with " +
                                python_fill(c) +
                                " before the softmax: scores.masked_fill(mask == 0, ...)",
                            where};
                    }
        // none where the mask allows and the run has some
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < Sq; ++i)
                    for (std::size_t j = 0; j < Sk; ++j) {
                        const place p{b, h, i, j};
                        if (!allowed(p)) continue;
                        const float a = at(answer, p), e = at(expected, p);
                        const bool departs = masked_stage ? std::isinf(a) && !std::isinf(e)
                                                          : a == 0.0f && std::abs(e) > tol.atol;
                        if (!departs) continue;
                        const std::string where = place_text(p) + " has " + word + " " + short_number(a) +
                                                  " where the mask allows it (expected " + short_number(e) + ")";
                        return structure_finding{"zero_where_allowed",
                                                 where + ": your mask forbids keys the run's allows; compare it with "
                                                         "the run's (attn trace --stage mask)",
                                                 where};
                    }
    }
    if (stage_name != "softmax") return std::nullopt;
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < Sq; ++i) {
                double sum = 0.0, expected_sum = 0.0;
                bool finite = true;
                for (std::size_t j = 0; j < Sk; ++j) {
                    const float a = at(answer, {b, h, i, j});
                    finite = finite && std::isfinite(a);
                    sum += a;
                    expected_sum += at(expected, {b, h, i, j});
                }
                if (!finite || !std::isfinite(expected_sum) || std::abs(sum - 1.0) <= 1e-3) continue;
                const std::string where = "the weights of query " + std::to_string(i) + " (batch " + std::to_string(b) +
                                          ", head " + std::to_string(h) + ") sum to " + short_number(sum);
                return structure_finding{"rows_not_normalized",
                                         where + ", not 1: softmax over the keys makes each row sum to 1: "
                                                 "torch.softmax(scores, dim=-1)",
                                         where};
            }
    return std::nullopt;
}

}  // namespace attn
