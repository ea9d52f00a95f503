#pragma once
// PyTorch 1.13's default CPU generator (x86 AVX2 kernel), bit for bit, as share/attn/doc/
// torch-rng.md specifies: MT19937 seeded as torch.manual_seed, and torch.rand, torch.randn,
// uniform_ and nn.Linear's default initialisation.
#include <cstddef>
#include <cstdint>
#include <optional>

namespace attn {

class torch_generator {
public:
    /// torch.manual_seed(seed): only seed mod 2^32 reaches MT19937.
    explicit torch_generator(std::uint64_t seed);

    std::uint32_t next_u32();  // one tempered MT19937 word
    std::uint64_t next_u64();  // (first word << 32) | second word

    /// torch.rand(n) into out[0..n): (u32 & 0xFFFFFF) * 2^-24 per element.
    void rand(float* out, std::size_t n);
    /// tensor.uniform_(a, b) on n float32 elements (AVX2 kernel: fused).
    void uniform(float* out, std::size_t n, double a, double b);
    /// torch.randn(n): the cached double Box-Muller below 16 elements, the vectorised float path from 16 on.
    void randn(float* out, std::size_t n);
    /// nn.Linear(in, out, bias): weight [out, in] (kaiming_uniform_, a = √5), then bias [out] if non-null.
    void linear_init(float* weight, float* bias, std::size_t out_features, std::size_t in_features);

private:
    double uniform_double();  // 53 random bits in [0, 1)
    float uniform_float();    // 24 random bits in [0, 1)
    void twist();

    std::uint32_t state_[624];
    int next_ = 0;
    int left_ = 1;  // so that the first draw twists
    std::optional<double> cached_normal_;
};

}  // namespace attn
