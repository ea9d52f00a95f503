// exercise_folder: the nested lists a student's DIR/<name>.json holds are tensor.tolist()'s,
// in the order of the indices even for a view whose elements lie otherwise in memory.
#include <limits>
#include <sstream>

#include <doctest/doctest.h>

#include "attn/render/exercise_folder.hpp"

TEST_SUITE("exercise_folder") {

TEST_CASE("nested lists: a transposed view in index order, as t.transpose(0, 1).tolist()") {
    const attn::tensor base("x", {"row", "col"}, xt::xarray<float>{{1.0f, 2.0f, 3.0f}, {4.0f, 5.0f, 6.0f}});
    const attn::tensor t = attn::as_strided(base, "s.x", "xt", {"col", "row"}, {3, 2}, {1, 3});  // [3,2]
    std::ostringstream out;
    attn::write_nested_lists(t, out);
    CHECK(out.str() == "[[1,4],[2,5],[3,6]]\n");
}

TEST_CASE("nested lists: shortest float32 text, non-finite as strings, booleans as true/false") {
    const float inf = std::numeric_limits<float>::infinity();
    std::ostringstream floats;
    attn::write_nested_lists(attn::tensor("f", {"a"}, xt::xarray<float>{0.1f, -inf, std::nanf(""), -2.5f}), floats);
    CHECK(floats.str() == "[0.1,\"-inf\",\"nan\",-2.5]\n");
    std::ostringstream bools;
    attn::write_nested_lists(attn::tensor("m", {"a", "b"}, xt::xarray<float>{{1.0f, 0.0f}}, attn::element_type::boolean),
                             bools);
    CHECK(bools.str() == "[[true,false]]\n");
}

}  // TEST_SUITE
