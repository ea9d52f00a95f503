// The layout exercises (shapes after every stage, strides after the transpose): answers
// worked by hand from the sizes (B=2, S=6, D=12, H=4, dk=3), graded against the
// variant's run, and the slips a student makes named.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/compute/error.hpp"
#include "attn/teach/exercise.hpp"
#include "attn/teach/layout_answer.hpp"
#include "support.hpp"

namespace {

/// A file holding `text` for as long as it lives.
struct answer_temp_file {
    std::string path;
    explicit answer_temp_file(const std::string& text) {
        static int count = 0;
        path = (std::filesystem::temp_directory_path() /
                ("attn_test_layout_answer_" + std::to_string(::getpid()) + "_" + std::to_string(++count)))
                   .string();
        std::ofstream(path, std::ios::binary) << text;
    }
    ~answer_temp_file() { std::remove(path.c_str()); }
};

const std::vector<attn::exercise>& layout_exercises() {
    static const std::vector<attn::exercise> exercises = attn::read_exercises(ATTN_EXERCISE_DIR);
    return exercises;
}

/// The diagnosis ids of `answer`'s problems, joined with spaces ("" on a match).
std::string layout_ids(const attn::exercise_variant& v, const char* answer) {
    const attn::layout_report r = attn::check_layout_answer(v, nlohmann::json::parse(answer));
    std::string ids;
    for (const attn::layout_problem& p : r.problems) ids += (ids.empty() ? "" : " ") + p.id;
    CHECK(r.match == ids.empty());
    return ids;
}

// the shapes by hand: q [B,S,D] -> [B,S,H,dk] -> [B,H,S,dk]; [B,H,S,S]; context [B,H,S,dk];
// merge [B,S,H,dk]; concat and out [B,S,D]
const char* right_shapes = R"({"projections": [2,6,12], "view": [2,6,4,3], "transpose": [2,4,6,3],
    "scores": [2,4,6,6], "scaled": [2,4,6,6], "softmax": [2,4,6,6], "context": [2,4,6,3],
    "merge": [2,6,4,3], "concat": [2,6,12], "output": [2,6,12]})";

}  // namespace

TEST_SUITE("layout_answer") {

TEST_CASE("shapes: the hand-worked chain matches, as an object or a list in stage order") {
    const attn::exercise& e = attn::find_exercise(layout_exercises(), "shapes");
    REQUIRE(e.kind == attn::answer_kind::shapes);
    const attn::exercise_variant v = attn::make_variant(e, "alice");
    CHECK(layout_ids(v, right_shapes) == "");
    CHECK(layout_ids(v, R"([[2,6,12],[2,6,4,3],[2,4,6,3],[2,4,6,6],[2,4,6,6],[2,4,6,6],[2,4,6,3],[2,6,4,3],[2,6,12],[2,6,12]])") == "");
    CHECK(layout_ids(v, R"({"input": [2,6,12], "projections": [2,6,12], "view": [2,6,4,3], "transpose": [2,4,6,3],
        "scores": [2,4,6,6], "scaled": [2,4,6,6], "softmax": [2,4,6,6], "context": [2,4,6,3],
        "merge": [2,6,4,3], "concat": [2,6,12], "output": [2,6,12]})") == "");
}

TEST_CASE("shapes: the transpose left out, the merge not transposed back, a stage missing or misnamed") {
    const attn::exercise_variant v = attn::make_variant(attn::find_exercise(layout_exercises(), "shapes"), "");
    // q.view(B,S,H,dk) only: q @ k.transpose(-2,-1) is then [B,S,H,H], weights @ v [B,S,H,dk]
    CHECK(layout_ids(v, R"({"projections": [2,6,12], "view": [2,6,4,3], "transpose": [2,6,4,3],
        "scores": [2,6,4,4], "scaled": [2,6,4,4], "softmax": [2,6,4,4], "context": [2,6,4,3],
        "merge": [2,6,4,3], "concat": [2,6,12], "output": [2,6,12]})") ==
          "shape_without_transpose shape_without_transpose shape_without_transpose shape_without_transpose "
          "shape_without_transpose");
    CHECK(layout_ids(v, R"({"projections": [2,6,12], "view": [2,6,4,3], "transpose": [2,4,6,3],
        "scores": [2,4,6,6], "scaled": [2,4,6,6], "softmax": [2,4,6,6], "context": [2,4,6,3],
        "merge": [2,4,6,3], "concat": [2,6,12], "out": [2,6,12]})") ==
          "merge_without_transpose missing_stage unknown_stage");
    CHECK(layout_ids(v, R"({"projections": [2,6,12], "view": [2,6,4,3], "transpose": [2,4,6,3],
        "scores": [2,4,6,3], "scaled": [2,4,6,6], "softmax": [2,4,6,6], "context": [2,4,6,3],
        "merge": [2,6,4,3], "concat": [2,6,12], "output": "[2,6,12]"})") == "wrong_shape answer_format");
    const attn::layout_report r = attn::check_layout_answer(v, nlohmann::json::parse(R"([[2,6,12]])"));
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].message ==
          "expected a JSON object of a shape per stage, {\"projections\": [...], ...}, or a list of 10 shapes in stage "
          "order (projections, view, transpose, scores, scaled, softmax, context, merge, concat, output)");
}

TEST_CASE("strides after the transpose: k.view(2,6,4,3).transpose(1,2) is (72, 3, 12, 1) for every student") {
    const attn::exercise& e = attn::find_exercise(layout_exercises(), "strides-after-transpose");
    REQUIRE(e.kind == attn::answer_kind::strides);
    for (const char* student : {"", "alice", "bob"}) {
        const attn::exercise_variant v = attn::make_variant(e, student);
        CHECK(layout_ids(v, "[72, 3, 12, 1]") == "");
        CHECK(layout_ids(v, "[72, 18, 3, 1]") == "strides_of_a_copy");         // .contiguous()'s
        CHECK(layout_ids(v, "[72, 12, 3, 1]") == "strides_before_transpose");  // the view's
        CHECK(layout_ids(v, "[288, 12, 48, 4]") == "strides_in_bytes");
        CHECK(layout_ids(v, "[72, 3, 1, 12]") == "wrong_strides");
        CHECK(layout_ids(v, "[72, 3, 12]") == "answer_format");
    }
    const attn::exercise_variant v = attn::make_variant(e, "");
    const attn::layout_report r = attn::check_layout_answer(v, nlohmann::json::parse("[72, 3, 1, 12]"));
    CHECK(r.problems.at(0).message == "(72, 3, 1, 12) are not the strides of k after transpose: axes 2 (kv_seq) and "
                                      "3 (head_dim) are wrong");
}

TEST_CASE("a layout answer file: JSON only, a .npy named as such") {
    const attn::exercise_variant v = attn::make_variant(attn::find_exercise(layout_exercises(), "shapes"), "");
    const answer_temp_file npy(std::string("\x93NUMPY\x01\x00", 8) + "{'descr': '<f4'}");
    CHECK_THROWS_WITH_AS(attn::check_layout_answer_file(v, npy.path, "--answer a.npy"),
                         "--answer a.npy: a NumPy .npy file; this exercise takes a .json answer (json.dump(answer, f))",
                         attn::error);
    const answer_temp_file shapes(right_shapes);
    CHECK(attn::check_layout_answer_file(v, shapes.path, "--answer a.json").match);
}

TEST_CASE("an exercise file's answer kind: tensor, shapes or strides") {
    const std::string start = R"({"number": 1, "id": "x", "title": "t", "task": ["a"], "config": {"seq": 3},
        "given": ["input.x"], "hints": [], "mistakes": [], )";
    const answer_temp_file typo(start + R"("answer": {"kind": "shape"}})");
    CHECK_THROWS_WITH_AS(attn::read_exercise(typo.path),
                         (typo.path + ": answer \"kind\" is \"shape\"; expected \"tensor\", \"shapes\" or \"strides\"").c_str(),
                         attn::error);
    const answer_temp_file strides(start + R"("answer": {"kind": "strides", "stage": "transpose", "tensor": "q", "shape": [1,2,3,4]}})");
    CHECK(attn::read_exercise(strides.path).kind == attn::answer_kind::strides);
    const answer_temp_file shapes(start + R"("answer": {"kind": "shapes"}})");
    CHECK(attn::read_exercise(shapes.path).kind == attn::answer_kind::shapes);
}

}  // TEST_SUITE("layout_answer")
