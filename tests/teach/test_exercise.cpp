// exercise: the exercise files read and hold together, each student gets their own
// stable numbers, and an answer is graded against the student's own variant. The
// answers here are worked out from the given tensors by hand-written loops (the
// exercise's meaning), not taken from the run that grades them.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include <doctest/doctest.h>

#include "attn/compute/error.hpp"
#include "attn/teach/exercise.hpp"
#include "attn/teach/student_id.hpp"
#include "support.hpp"

namespace {

const std::string exercise_dir = ATTN_EXERCISE_DIR;

const std::vector<attn::exercise>& all() {
    static const std::vector<attn::exercise> exercises = attn::read_exercises(exercise_dir);
    return exercises;
}

const attn::exercise& by_id(const std::string& id) { return attn::find_exercise(all(), id); }

/// The given tensor called `name`, row-major.
xt::xarray<float> given(const attn::exercise_variant& v, const std::string& name) {
    for (const attn::given_tensor& g : v.given)
        if (g.name == name) return g.values.values;
    FAIL("no given tensor " << name);
    return {};
}

/// Q·Kᵀ per batch item and head: [B,H,Sq,dk] · [B,H,Sk,dk] -> [B,H,Sq,Sk], by loops.
xt::xarray<float> qk(const xt::xarray<float>& q, const xt::xarray<float>& k) {
    const std::size_t B = q.shape()[0], H = q.shape()[1], Sq = q.shape()[2], Sk = k.shape()[2], dk = q.shape()[3];
    xt::xarray<float> s = xt::zeros<float>({B, H, Sq, Sk});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < Sq; ++i)
                for (std::size_t j = 0; j < Sk; ++j) {
                    double sum = 0.0;
                    for (std::size_t d = 0; d < dk; ++d) sum += double(q(b, h, i, d)) * double(k(b, h, j, d));
                    s(b, h, i, j) = static_cast<float>(sum);
                }
    return s;
}

struct temp_file {
    std::string path;
    explicit temp_file(const std::string& text) {
        static int count = 0;
        path = (std::filesystem::temp_directory_path() /
                ("attn_test_exercise_" + std::to_string(::getpid()) + "_" + std::to_string(++count) + ".json"))
                   .string();
        std::ofstream(path) << text;
    }
    ~temp_file() { std::remove(path.c_str()); }
};

}  // namespace

TEST_SUITE("exercise") {

TEST_CASE("the exercises: at least 12, numbered 1, 2, ... with their own ids, each a run attn can make") {
    REQUIRE(all().size() >= 12);
    std::set<std::string> ids;
    for (std::size_t i = 0; i < all().size(); ++i) {
        const attn::exercise& e = all()[i];
        CAPTURE(e.path);
        CHECK(e.number == static_cast<int>(i + 1));
        CHECK(ids.insert(e.id).second);
        CHECK(!e.title.empty());
        CHECK(!e.task.empty());
        CHECK(!e.given.empty());
        CHECK(e.hints.size() >= 2);
        CHECK((!e.mistakes.empty() || e.kind != attn::answer_kind::tensor));  // a layout answer has its own diagnoses
        const attn::exercise_variant v = attn::make_variant(e, "");  // throws if the answer's shape is not the run's
        CHECK(v.given.size() == e.given.size());
    }
}

TEST_CASE("the exercises cover the seed notebooks' material") {
    const auto asks = [](const std::string& id) { return by_id(id).answer_stage + "." + by_id(id).answer_tensor; };
    CHECK(asks("qk-by-hand") == "scores.scores");
    CHECK(asks("scaling") == "scaled.scaled");
    CHECK(by_id("causal-mask").cfg.mask.causal);
    CHECK(by_id("padding-mask").cfg.mask.padding);
    CHECK((by_id("padding-and-causal").cfg.mask.causal && by_id("padding-and-causal").cfg.mask.padding));
    CHECK(by_id("softmax-row").answer_shape == std::vector<std::size_t>{1, 1, 1, 5});
    CHECK(asks("split-heads") == "transpose.q");
    CHECK(asks("merge-heads") == "concat.concat");
    CHECK(by_id("cross-attention").cfg.cross());
    CHECK(by_id("cross-attention").cfg.d_kv_in != by_id("cross-attention").cfg.d_in);
    CHECK(by_id("window-mask").cfg.mask.window);
    CHECK(by_id("fully-masked-row").cfg.fill == -1e9f);
    CHECK(asks("multi-head-attention") == "output.out");
}

TEST_CASE("a config gives only what differs from attn trace's defaults") {
    const attn::config& c = by_id("cross-attention").cfg;  // seq 3, kv_seq 5, d_in 6, d_kv_in 4, d_model 8, heads 2
    CHECK(c.batch == 1);
    CHECK(c.qkv_bias);
    CHECK(c.out_proj);
    CHECK(!c.mask.any());
    CHECK(std::isinf(c.fill));
    const attn::config& s = by_id("split-heads").cfg;  // batch 2, seq 5, d_model 8, heads 4
    CHECK(s.kv_seq == 5);
    CHECK(s.d_in == 8);
    CHECK(s.d_kv_in == 8);
    CHECK(!s.cross());
    CHECK(attn::fill_text(by_id("padding-and-causal").cfg) == "-1e9");
}

TEST_CASE("an exercise is found by number or id; an unknown one is a usage error naming the range") {
    CHECK(attn::find_exercise(all(), "7").id == "causal-weights");
    CHECK(attn::find_exercise(all(), "causal-weights").number == 7);
    CHECK_THROWS_AS(attn::find_exercise(all(), "99"), attn::usage_error);
    CHECK_THROWS_WITH(attn::find_exercise(all(), "99"),
                      ("exercise 99: no such exercise; there are 1 to " + std::to_string(all().back().number) +
                       " (attn exercise list)").c_str());
    CHECK_THROWS_AS(attn::find_exercise(all(), "07"), attn::usage_error);
}

TEST_CASE("a student's seed: FNV-1a of \"<id>:<student>\" XOR the exercise's seed, mod 2^31") {
    // Python: h = 14695981039346656037; for b in s.encode(): h = ((h ^ b) * 1099511628211) % 2**64
    const attn::exercise& e = by_id("qk-by-hand");  // seed 1
    CHECK(attn::student_seed(e, "alice") == 538500306u);  // h = 0xc0d3e9312018dcd3
    CHECK(attn::student_seed(e, "bob") == 2136977609u);   // h = 0x8799ac927f5fb0c8
    CHECK(attn::student_seed(by_id("causal-weights"), "alice") == 1024086593u);
    CHECK(attn::student_seed(e, "") == 1u);  // no student: the exercise's own seed
    CHECK(attn::make_variant(e, "alice").cfg.seed == 538500306u);
}

TEST_CASE("with a class secret: FNV-1a of \"<secret>\\n<id>:<student>\", mod 2^31, and the variant says so") {
    // the same Python over "s3cret\nqk-by-hand:alice" and the others
    const attn::exercise& e = by_id("qk-by-hand");
    CHECK(attn::student_seed(e, "alice", "s3cret") == 1378382081u);
    CHECK(attn::student_seed(e, "", "s3cret") == 99410919u);  // not the exercise's own seed
    CHECK(attn::student_seed(e, "alice", "other") == 175785963u);
    const attn::exercise_variant v = attn::make_variant(e, "alice", "s3cret");
    CHECK(v.secret);
    CHECK(v.cfg.seed == 1378382081u);
    CHECK_FALSE(attn::make_variant(e, "alice").secret);
}

TEST_CASE("student IDs: logins, e-mail addresses (lowercased) and names in any script, precomposed") {
    using attn::normalise_student_id;
    CHECK(normalise_student_id("alice") == "alice");
    CHECK(normalise_student_id("Alice") == "Alice");  // kept: a hand-out made before keeps its numbers
    CHECK(normalise_student_id("s-01.b_2") == "s-01.b_2");
    CHECK(normalise_student_id("Alice.Martin+lab@Uni.Example") == "alice.martin+lab@uni.example");
    CHECK(normalise_student_id("zo\xc3\xab") == "zo\xc3\xab");                // zoë, U+00EB
    CHECK(normalise_student_id("\xe7\x8e\x8b\xe8\x8a\xb3") == "\xe7\x8e\x8b\xe8\x8a\xb3");  // 王芳
    CHECK(normalise_student_id("J\xc3\x9cRGEN@X.ORG") == "j\xc3\x9crgen@x.org");  // only ASCII is lowercased
    CHECK(normalise_student_id(std::string(64, 'a')).size() == 64);
    CHECK(normalise_student_id("\xc3\xa9" + std::string(63, 'a')).size() == 65);  // 64 characters, 65 bytes
    for (const std::string bad : {"../x", "a b", "", "a/b", ".a", "-a", "@a", "+a", "a\tb",
                                  "zoe\xcc\x88",        // e + combining diaeresis: not NFC
                                  "a\xe2\x80\x8b" "b",  // zero-width space
                                  "a\xe2\x80\xae" "b",  // right-to-left override
                                  "a\xc2\xa0" "b",       // no-break space
                                  "\xff" "a", "\xc3", "\xc0\xaf", "\xed\xa0\x80"}) {  // not UTF-8, overlong, surrogate
        CAPTURE(bad);
        CHECK_THROWS_AS(normalise_student_id(bad), attn::usage_error);
    }
    CHECK_THROWS_AS(normalise_student_id(std::string(65, 'a')), attn::usage_error);
    CHECK_THROWS_WITH(normalise_student_id("zoe\xcc\x88"),
                      doctest::Contains("a combining accent (U+0308): type the letter precomposed (NFC)"));
}

TEST_CASE("Q·Kᵀ by hand: the hand-worked product passes, a perturbed one and another student's fail") {
    const attn::exercise& e = by_id("qk-by-hand");
    const attn::exercise_variant alice = attn::make_variant(e, "alice");
    const attn::exercise_variant bob = attn::make_variant(e, "bob");
    const xt::xarray<float> right = qk(given(alice, "q"), given(alice, "k"));  // [1,1,3,3]
    REQUIRE(right.shape() == std::vector<std::size_t>{1, 1, 3, 3});
    CHECK(given(alice, "q") != given(bob, "q"));

    const attn::check_report r = attn::check_exercise(alice, answer_of(right));
    CHECK(r.match);
    CHECK(r.diagnosis_id.empty());
    CHECK(r.max_error < 1e-5);

    xt::xarray<float> rounded = xt::round(right * 1000.0f) / 1000.0f;  // worked by hand to 3 digits: within 0.001
    CHECK(attn::check_exercise(alice, answer_of(rounded)).match);

    xt::xarray<float> perturbed = right;
    perturbed(0, 0, 1, 2) += 0.01f;
    const attn::check_report p = attn::check_exercise(alice, answer_of(perturbed));
    CHECK(!p.match);
    CHECK(!p.diagnosis_id.empty());
    CHECK(p.max_error == doctest::Approx(0.01).epsilon(1e-3));
    CHECK(p.max_error_at == std::vector<std::size_t>{0, 0, 1, 2});

    CHECK(!attn::check_exercise(bob, answer_of(right)).match);  // alice's right answer is bob's wrong one
}

TEST_CASE("scaling: scores / √dk with dk = 4 passes; / √D fails") {
    const attn::exercise_variant v = attn::make_variant(by_id("scaling"), "carol");
    const xt::xarray<float> scores = given(v, "scores");
    CHECK(attn::check_exercise(v, answer_of(scores / 2.0f)).match);
    CHECK(!attn::check_exercise(v, answer_of(scores / std::sqrt(8.0f))).match);
    CHECK(!attn::check_exercise(v, answer_of(scores)).match);
}

TEST_CASE("split and merge heads: index arithmetic passes, the reshape without transpose fails") {
    const attn::exercise_variant split = attn::make_variant(by_id("split-heads"), "dave");
    const xt::xarray<float> q = given(split, "q");  // [2,5,8]
    xt::xarray<float> heads = xt::zeros<float>({2, 4, 5, 2});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t i = 0; i < 5; ++i)
                for (std::size_t d = 0; d < 2; ++d) heads(b, h, i, d) = q(b, i, 2 * h + d);
    CHECK(attn::check_exercise(split, answer_of(heads)).match);
    xt::xarray<float> reshaped = q;
    reshaped.reshape({2, 4, 5, 2});
    CHECK(!attn::check_exercise(split, answer_of(reshaped)).match);

    const attn::exercise_variant merge = attn::make_variant(by_id("merge-heads"), "dave");
    const xt::xarray<float> context = given(merge, "context");  // [2,4,5,2]
    xt::xarray<float> concat = xt::zeros<float>({2, 5, 8});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 4; ++h)
            for (std::size_t i = 0; i < 5; ++i)
                for (std::size_t d = 0; d < 2; ++d) concat(b, i, 2 * h + d) = context(b, h, i, d);
    CHECK(attn::check_exercise(merge, answer_of(concat)).match);
}

TEST_CASE("a fully masked row with -1e9: uniform weights 1/3 in batch item 1") {
    const attn::exercise_variant v = attn::make_variant(by_id("fully-masked-row"), "erin");
    const xt::xarray<float> scaled = given(v, "scaled");  // [2,1,3,3], lengths 2 and 0
    xt::xarray<float> weights = xt::zeros<float>({2, 1, 3, 3});
    for (std::size_t i = 0; i < 3; ++i) {
        const double a = std::exp(double(scaled(0, 0, i, 0))), b = std::exp(double(scaled(0, 0, i, 1)));
        weights(0, 0, i, 0) = static_cast<float>(a / (a + b));
        weights(0, 0, i, 1) = static_cast<float>(b / (a + b));
        for (std::size_t j = 0; j < 3; ++j) weights(1, 0, i, j) = 1.0f / 3.0f;
    }
    CHECK(attn::check_exercise(v, answer_of(weights)).match);
    xt::xarray<float> with_inf = weights;  // -inf: NaN in every weight of batch item 1
    for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = 0; j < 3; ++j) with_inf(1, 0, i, j) = std::nanf("");
    CHECK(!attn::check_exercise(v, answer_of(with_inf)).match);
}

TEST_CASE("a wrong shape is a mismatch, not an error") {
    const attn::exercise_variant v = attn::make_variant(by_id("scaling"), "");
    const attn::check_report r = attn::check_exercise(v, answer_of(xt::zeros<float>({2, 4, 4})));
    CHECK(!r.match);
    CHECK(r.answer_shape == std::vector<std::size_t>{2, 4, 4});
    CHECK(r.expected_shape == std::vector<std::size_t>{1, 2, 4, 4});
}

TEST_CASE("a broken exercise file: one error naming the file and what is wrong") {
    const std::string good_start = R"({"number": 1, "id": "x", "title": "t", "task": ["a"], "config": {"seq": 3},)";
    SUBCASE("a missing key") {
        const temp_file f(good_start + R"("given": ["scores.scores"]})");
        CHECK_THROWS_WITH_AS(attn::read_exercise(f.path), (f.path + ": no \"answer\"").c_str(), attn::error);
    }
    SUBCASE("a given tensor the run lacks") {
        const temp_file f(good_start + R"("given": ["masked.masked"], "answer": {"stage": "softmax",
            "tensor": "weights", "shape": [1,2,3,3]}, "hints": [], "mistakes": []})");
        CHECK_THROWS_WITH_AS(attn::read_exercise(f.path),
                             (f.path + ": given \"masked.masked\": this exercise's run has no such tensor").c_str(),
                             attn::error);
    }
    SUBCASE("an unknown mistake") {
        const temp_file f(good_start + R"("given": ["scores.scores"], "answer": {"stage": "softmax",
            "tensor": "weights", "shape": [1,2,3,3]}, "hints": [], "mistakes": ["typo"]})");
        CHECK_THROWS_WITH_AS(attn::read_exercise(f.path), (f.path + ": mistakes: \"typo\" is not a diagnosis id").c_str(),
                             attn::error);
    }
    SUBCASE("a config key attn does not know") {
        const temp_file f(R"({"number": 1, "id": "x", "title": "t", "task": ["a"], "config": {"sequence": 3}})");
        CHECK_THROWS_WITH_AS(attn::read_exercise(f.path),
                             (f.path + ": config \"sequence\" is not a setting this attn knows (a dump of a newer attn?)")
                                 .c_str(),
                             attn::error);
    }
    SUBCASE("an answer shape that is not the run's") {
        const temp_file f(good_start + R"("given": ["scores.scores"], "answer": {"stage": "softmax",
            "tensor": "weights", "shape": [1,2,4,4]}, "hints": [], "mistakes": []})");
        const attn::exercise e = attn::read_exercise(f.path);
        CHECK_THROWS_WITH_AS(attn::make_variant(e, ""),
                             (f.path + ": answer shape [1,2,4,4] is not the run's [1,2,3,3]").c_str(), attn::error);
    }
}

// tests/fuzz/crashes/exercise/number-past-double-range.json: nlohmann's out_of_range (406)
// escaped read_exercise as a message naming no file.
TEST_CASE("an exercise file with a number past double's range is refused naming the file") {
    const temp_file f("3.33332e2333");
    CHECK_THROWS_WITH_AS(attn::read_exercise(f.path),
                         (f.path + ": not valid JSON: number overflow parsing '3.33332e2333'").c_str(), attn::error);
    const temp_file nested(R"({"number": 1, "id": "x", "config": {"seq": 1e400}})");
    CHECK_THROWS_WITH_AS(attn::read_exercise(nested.path),
                         (nested.path + ": not valid JSON: number overflow parsing '1e400'").c_str(), attn::error);
}

TEST_CASE("the exercise folder is found in the first candidate that has one") {
    const std::string share = exercise_dir.substr(0, exercise_dir.size() - std::string("/exercises").size());
    CHECK(attn::find_exercise_dir({"", "/nonexistent", share}) == exercise_dir);
    CHECK_THROWS_WITH_AS(attn::find_exercise_dir({"/nonexistent"}),
                         "cannot find the exercises (looked in /nonexistent/exercises); set ATTN_SHARE_DIR to the "
                         "folder that holds exercises/",
                         attn::error);
}

}  // TEST_SUITE
