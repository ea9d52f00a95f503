// tensor_file: one tensor from a .json or .npy file, picked by the extension, and
// the helpers every reader shares. The JSON text itself is test_json_tensor.cpp's.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/io/tensor_file.hpp"
#include "support.hpp"

namespace {



}  // namespace

TEST_SUITE("tensor_file") {
    TEST_CASE("read_tensor_file picks the reader by extension") {
        const auto from_json = attn::read_tensor_file(io_dir + "x.json", "--input x.json");
        const auto from_npy = attn::read_tensor_file(io_dir + "x.npy", "--input x.npy");
        CHECK(from_json.shape == std::vector<std::size_t>{2, 3, 4});
        check_same(from_json, from_npy);
        CHECK(from_json.values(1, 2, 3) == -2.316041946411133f);  // torch.manual_seed(0); torch.randn(2,3,4)[1,2,3]
        CHECK(from_json.non_finite == 0);
    }

    TEST_CASE("files that cannot be read") {
        CHECK_THROWS_WITH_AS(attn::read_tensor_file(io_dir + "missing.json", "--input missing.json"),
                             "--input missing.json: cannot open: No such file or directory", attn::error);
        CHECK_THROWS_WITH_AS(attn::read_tensor_file(io_dir, "--input io/"),
                             "--input io/: unknown file type; expected .json (nested arrays) or .npy (NumPy)", attn::error);
        CHECK_THROWS_WITH_AS(attn::read_tensor_file(io_dir + "x.txt", "--input x.txt"),
                             "--input x.txt: unknown file type '.txt'; expected .json (nested arrays) or .npy (NumPy)",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::read_tensor_file(io_dir + "params.npz", "--input params.npz"),
                             "--input params.npz: unknown file type '.npz'; expected .json (nested arrays) or .npy (NumPy)",
                             attn::error);
        CHECK_THROWS_WITH_AS(attn::read_tensor_file(io_dir + "..", "--input a.json"),
                             "--input a.json: unknown file type; expected .json (nested arrays) or .npy (NumPy)", attn::error);
        CHECK_THROWS_WITH_AS(attn::read_json_tensors(io_dir, "--params io"), "--params io: cannot open: Is a directory",
                             attn::error);
    }

    TEST_CASE("count_non_finite: how many, and the index of the first") {
        attn::loaded_tensor t;
        t.shape = {2, 3};
        t.values = xt::xarray<float>::from_shape({2, 3});
        t.values.fill(0.0f);
        attn::count_non_finite(t);
        CHECK(t.non_finite == 0);
        CHECK(t.first_non_finite.empty());
        t.values(1, 2) = -inf;
        t.values(1, 1) = std::numeric_limits<float>::quiet_NaN();
        attn::count_non_finite(t);
        CHECK(t.non_finite == 2);
        CHECK(t.first_non_finite == std::vector<std::size_t>{1, 1});
    }
}
