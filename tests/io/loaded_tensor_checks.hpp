#pragma once
// Test helper shared by the file-reading suites: two loaded tensors are the same.
#include <cmath>

#include <doctest/doctest.h>

#include "attn/io/tensor_file.hpp"

/// Same shape, same flags, same values (NaN where NaN).
inline void check_same(const attn::loaded_tensor& a, const attn::loaded_tensor& b) {
    REQUIRE(a.shape == b.shape);
    CHECK(a.boolean == b.boolean);
    CHECK(a.non_finite == b.non_finite);
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t e = 0; e < a.values.size(); ++e) {
        const float x = a.values.data()[e], y = b.values.data()[e];
        REQUIRE((x == y || (std::isnan(x) && std::isnan(y))));
    }
}
