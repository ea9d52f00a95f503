// Shapes, indices and strides as text, in attn's, Python's and PyTorch's ways.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "attn/text/index_text.hpp"

TEST_SUITE("index_text") {
    TEST_CASE("tensor_index_text: [2,3], [] for a 0-d tensor's shape") {
        CHECK(attn::tensor_index_text({2, 5, 4, 2}) == "[2,5,4,2]");
        CHECK(attn::tensor_index_text({7}) == "[7]");
        CHECK(attn::tensor_index_text({}) == "[]");
    }

    TEST_CASE("element_index_text: Python's t[0][1][3]") {
        CHECK(attn::element_index_text({0, 1, 3}) == "[0][1][3]");
        CHECK(attn::element_index_text({}) == "");
    }

    TEST_CASE("python_tuple: as PyTorch prints t.stride() and NumPy a header's shape") {
        CHECK(attn::python_tuple(std::vector<std::int64_t>{40, 8, 2, 1}) == "(40, 8, 2, 1)");
        CHECK(attn::python_tuple(std::vector<std::size_t>{4}) == "(4,)");
        CHECK(attn::python_tuple(std::vector<std::size_t>{}) == "()");
    }
}
