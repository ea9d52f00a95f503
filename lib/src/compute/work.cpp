#include "attn/compute/work.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "attn/compute/generator.hpp"
#include "attn/compute/linalg.hpp"
#include "attn/compute/torch_exp.hpp"

namespace attn {
namespace {

double count_of(const std::vector<bool>& shown, double all) {
    return shown.empty() ? all : static_cast<double>(std::count(shown.begin(), shown.end(), true));
}

}  // namespace

std::vector<stage_work> estimate_work(const config& c, const stage_plan& plan) {
    const double B = static_cast<double>(c.batch), Sq = static_cast<double>(c.seq),
                 Sk = static_cast<double>(c.kv_seq), D = static_cast<double>(c.d_model),
                 H = static_cast<double>(c.heads), dk = D / H, Din = static_cast<double>(c.d_in),
                 Dkv = static_cast<double>(c.d_kv_in), N = static_cast<double>(c.past),
                 Dg = static_cast<double>(c.kv_width()), S_kv = c.past > 0 ? Sq : Sk;  // k v: G·dk wide, new tokens
    const stage_set needed = stages_needed(c, plan.shown);
    const auto needs = [&](stage_id id) { return (needed & stage_bit(id)) != 0; };
    const bool whole = plan.layout == plane_layout::whole_tensor;

    // the [B,H,Sq,Sk] steps: the planes and query rows computed
    const double rows = plan.computes_every_query_row(c) ? Sq : count_of(plan.shown_query, Sq);
    const bool every_plane = whole || needs(stage_id::dropout);
    const double shown_planes = every_plane ? B * H : count_of(plan.shown_batch, B) * count_of(plan.shown_head, H);
    const double scores_flops = 2 * rows * Sk * dk;  // per plane: [rows,dk] · [dk,Sk]
    const double plane_elements = rows * Sk;         // per plane and elementwise step
    double steps_before = 0;                         // in rows: the elementwise steps a pass makes again

    std::vector<stage_work> list;
    for (const stage_info& info : stage_table) {
        const bool drawn = info.id == stage_id::input && !c.from_projections;  // drawn whether shown or not
        if (!needs(info.id) && !drawn) continue;
        work w;
        switch (info.id) {
            case stage_id::input:  // drawn before the run: the weights, then x (and x_kv)
                if (!c.params_from_file) w.draws += D * Din + 2 * Dg * Dkv + (c.out_proj ? D * D : 0);
                if (!c.x_from_file) w.draws += B * (c.past > 0 ? Sk : Sq) * Din;
                if (c.cross() && !c.x_kv_from_file) w.draws += B * Sk * Dkv;
                break;
            case stage_id::projections:
                if (!c.from_projections) w.flops = 2 * B * Sq * Din * D + 2 * 2 * B * S_kv * Dkv * Dg;
                break;
            case stage_id::cache:  // the N earlier tokens' k and v, projected again (a real cache keeps them)
                w.flops = 2 * 2 * B * N * Dkv * Dg;
                break;
            case stage_id::append:  // torch.cat: copies
            case stage_id::repeat_kv:
                w.elements = 2 * B * Sk * (info.id == stage_id::append ? Dg : D);
                break;
            case stage_id::mask:
                w.elements = B * Sq * Sk;
                break;
            case stage_id::scores:
            case stage_id::scaled:
            case stage_id::masked:
            case stage_id::softmax:
            case stage_id::dropout: {
                const bool pass = whole || plan.shows(info.id);  // in rows: a pass from the scores
                if (info.id == stage_id::dropout) w.draws = B * H * Sq * Sk;
                if (info.id != stage_id::scores) ++steps_before;
                if (!pass) break;
                w.flops = (whole && info.id != stage_id::scores ? 0 : scores_flops) * shown_planes;
                w.elements = (whole ? 1 : steps_before) * plane_elements * shown_planes;
                break;
            }
            case stage_id::context:  // its own pass over every plane, unless the last one shown was it
                w.flops = 2 * rows * Sk * dk * B * H + (whole ? 0 : scores_flops * B * H);
                w.elements = whole ? 0 : steps_before * plane_elements * B * H;
                break;
            case stage_id::flash:  // per plane: S_j = Q·K_jᵀ and P_j·V_j over every block, exp and sums on each score
                w.flops = 2 * 2 * Sq * Sk * dk * B * H;
                w.elements = 3 * Sq * Sk * B * H;
                break;
            case stage_id::concat:
                w.elements = B * Sq * D;
                break;
            case stage_id::output:
                w.flops = 2 * B * Sq * D * D;
                break;
            default:  // params (drawn with input), view, transpose, merge: no work of their own
                break;
        }
        list.push_back({info.id, w});
    }
    return list;
}

machine_speed measure_speed() {
    using clock = std::chrono::steady_clock;
    const auto per_second = [](double amount, clock::time_point start) {
        const double seconds = std::chrono::duration<double>(clock::now() - start).count();
        return amount / std::max(seconds, 1e-6);
    };
    machine_speed speed;
    constexpr std::size_t n = 256;  // a [256,256] · [256,256] product
    std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), product(n * n);
    matmul(a.data(), b.data(), product.data(), n, n, n, true);  // OpenBLAS's threads start here
    auto start = clock::now();
    matmul(a.data(), b.data(), product.data(), n, n, n, true);
    speed.flops = per_second(2.0 * n * n * n, start);

    std::vector<float> values(std::size_t{1} << 16);
    start = clock::now();
    torch_generator(0).randn(values.data(), values.size());
    speed.draws = per_second(static_cast<double>(values.size()), start);
    start = clock::now();
    exp_shifted(values.data(), values.size(), 4.0f);
    speed.elements = per_second(static_cast<double>(values.size()), start);
    return speed;
}

double seconds_of(const work& w, const machine_speed& speed) {
    return w.flops / speed.flops + w.draws / speed.draws + w.elements / speed.elements;
}

}  // namespace attn
