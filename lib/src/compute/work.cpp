#include "attn/compute/work.hpp"

#include <algorithm>
#include <chrono>
#include <vector>

#include "attn/compute/generator.hpp"
#include "attn/compute/linalg.hpp"
#include "attn/compute/torch_exp.hpp"

namespace attn {
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
