// explain: --explain's texts, checked against independent references:
//   - the shapes they name against the tensors compute_trace actually holds;
//   - each einsum against those tensors' shapes (every letter one size);
//   - the memory texts against what PyTorch 1.13 reported for the same lines
//     (tests/reference/explain_layouts.json: strides, contiguity, matmul's copies);
//   - the key lines of seed notebook 000's shape, written out here.
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"
#include "attn/teach/explain.hpp"
#include "attn/teach/stage_text.hpp"
#include "support.hpp"

namespace {

using sizes = std::vector<std::int64_t>;

bool has(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

/// `numbers` between `open` and `close`, split by `comma`: "[2,5,8]" as attn writes a shape,
/// "(40, 8, 1)" and "(1,)" as PyTorch prints t.stride().
std::string listed(const sizes& numbers, const char* open, const char* comma, const char* close) {
    std::string text = open;
    for (std::size_t a = 0; a < numbers.size(); ++a) text += (a ? comma : "") + std::to_string(numbers[a]);
    return text + (numbers.size() == 1 && *close == ')' ? ",)" : close);
}

/// B=2 Sq=Sk=5 D=8 H=4 with a causal mask: seed notebook 000's shape.
attn::config notebook_config() {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 5;
    c.d_model = c.d_in = c.d_kv_in = 8;
    c.heads = 4;
    c.mask.causal = true;
    return c;
}

/// The trace of `c`; a run that starts at the projections gets Q, K and V of ones.
attn::trace traced(const attn::config& c) {
    attn::given_inputs given;
    if (c.sources.from_projections) {
        const std::size_t B = c.batch, Sq = c.seq, Sk = c.kv_seq, D = c.d_model;
        given.qkv = attn::projections{xt::ones<float>({B, Sq, D}), xt::ones<float>({B, Sk, D}),
                                      xt::ones<float>({B, Sk, D})};
    }
    return run(c, std::move(given));
}

sizes sizes_of(const attn::tensor& t) { return {t.values.shape().begin(), t.values.shape().end()}; }

const attn::tensor& tensor_of(const attn::trace& t, std::string_view stage, std::string_view name) {
    const attn::stage* s = t.find(stage);
    REQUIRE(s != nullptr);
    return s->at(name);
}

std::vector<std::string> split(std::string_view text, std::string_view separator) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (std::size_t at; (at = text.find(separator, start)) != std::string_view::npos; start = at + separator.size())
        parts.emplace_back(text.substr(start, at - start));
    parts.emplace_back(text.substr(start));
    return parts;
}

/// `spec` ("bhqd,bhkd->bhqk") read against the operands' and the result's shapes:
/// one letter per axis, and each letter the same size wherever it appears.
void check_einsum(const std::string& spec, const std::vector<sizes>& operands, const sizes& result) {
    CAPTURE(spec);
    const std::vector<std::string> sides = split(spec, "->");
    REQUIRE(sides.size() == 2);
    const std::vector<std::string> inputs = split(sides[0], ",");
    REQUIRE(inputs.size() == operands.size());
    std::map<char, std::int64_t> size_of;
    const auto read = [&](const std::string& letters, const sizes& shape) {
        REQUIRE(letters.size() == shape.size());
        for (std::size_t a = 0; a < letters.size(); ++a) {
            const auto [it, fresh] = size_of.emplace(letters[a], shape[a]);
            CHECK(it->second == shape[a]);
        }
    };
    for (std::size_t i = 0; i < inputs.size(); ++i) read(inputs[i], operands[i]);
    REQUIRE(sides[1].size() == result.size());
    for (std::size_t a = 0; a < result.size(); ++a) {
        CAPTURE(a);
        REQUIRE(size_of.count(sides[1][a]) == 1);  // no letter the operands do not have
        CHECK(size_of[sides[1][a]] == result[a]);
    }
}

/// Checks every einsum of a run against the shapes of the tensors it relates.
void check_einsums(const attn::config& c, const attn::trace& t) {
    const auto spec = [&](std::string_view stage) { return attn::explain_stage(c, stage).einsum; };
    if (!c.sources.from_projections) {  // "q: bqi,oi->bqo; k, v: bki,oi->bko"
        const std::vector<std::string> parts = split(spec("projections"), "; k, v: ");
        REQUIRE(parts.size() == 2);
        REQUIRE(parts[0].rfind("q: ", 0) == 0);
        const attn::tensor& x_kv = c.cross() ? tensor_of(t, "input", "x_kv") : tensor_of(t, "input", "x");
        check_einsum(parts[0].substr(3), {sizes_of(tensor_of(t, "input", "x")), sizes_of(tensor_of(t, "params", "w_q"))},
                     sizes_of(tensor_of(t, "projections", "q")));
        check_einsum(parts[1], {sizes_of(x_kv), sizes_of(tensor_of(t, "params", "w_k"))},
                     sizes_of(tensor_of(t, "projections", "k")));
    } else {
        CHECK(spec("projections").empty());
    }
    for (const char* name : {"q", "k", "v"})
        check_einsum(spec("transpose"), {sizes_of(tensor_of(t, "view", name))}, sizes_of(tensor_of(t, "transpose", name)));
    check_einsum(spec("scores"), {sizes_of(tensor_of(t, "transpose", "q")), sizes_of(tensor_of(t, "transpose", "k"))},
                 sizes_of(tensor_of(t, "scores", "scores")));
    check_einsum(spec("context"),
                 {sizes_of(tensor_of(t, "softmax", "weights")), sizes_of(tensor_of(t, "transpose", "v"))},
                 sizes_of(tensor_of(t, "context", "context")));
    check_einsum(spec("merge"), {sizes_of(tensor_of(t, "context", "context"))}, sizes_of(tensor_of(t, "merge", "context")));
    if (c.out_proj && !c.sources.from_projections)
        check_einsum(spec("output"), {sizes_of(tensor_of(t, "concat", "concat")), sizes_of(tensor_of(t, "params", "w_o"))},
                     sizes_of(tensor_of(t, "output", "out")));
}

/// Every tensor a stage holds is named with its shape in the stage's shape line.
void check_shapes_named(const attn::config& c, const attn::trace& t) {
    for (const attn::stage& s : t.stages) {
        const std::string shapes = attn::explain_stage(c, s.name()).shapes;
        for (const attn::tensor& x : s.tensors) {
            CAPTURE(s.name());
            CAPTURE(x.name);
            CAPTURE(shapes);
            CHECK(has(shapes, listed(sizes_of(x), "[", ",", "]")));
        }
    }
}

/// The runs the structural checks go over: notebook 000's shape and its variants.
std::vector<std::pair<std::string, attn::config>> variants() {
    std::vector<std::pair<std::string, attn::config>> runs;
    attn::config c = notebook_config();
    runs.emplace_back("notebook 000's shape, causal", c);
    attn::config cross = c;
    cross.kv_seq = 6;
    cross.d_kv_in = 12;
    runs.emplace_back("cross-attention, Sk = 6, Dkv = 12", cross);
    attn::config bare = c;
    bare.qkv_bias = false;
    bare.out_proj = false;
    bare.mask = {};
    runs.emplace_back("no qkv bias, no output projection, no mask", bare);
    attn::config dropout = c;
    dropout.dropout.p = 0.1;
    dropout.dropout.train = true;
    dropout.mask.padding = true;
    dropout.mask.lengths = {5, 3};
    runs.emplace_back("dropout in training mode, causal+padding", dropout);
    attn::config one_head = c;
    one_head.heads = 1;
    runs.emplace_back("one head", one_head);
    attn::config one_feature = c;
    one_feature.heads = 8;
    runs.emplace_back("dk = 1", one_feature);
    attn::config given = c;
    given.sources.from_projections = true;
    given.kv_seq = 7;
    runs.emplace_back("Q, K, V given, Sk = 7", given);
    return runs;
}

attn::config layout_config(const nlohmann::json& layout_case) {
    attn::config c;
    c.batch = layout_case["B"];
    c.seq = layout_case["Sq"];
    c.kv_seq = layout_case["Sk"];
    c.d_model = c.d_in = c.d_kv_in = layout_case["D"];
    c.heads = layout_case["H"];
    return c;
}

}  // namespace

TEST_SUITE("explain") {
    TEST_CASE("notebook 000's shape: the key lines, with B=2 Sq=5 D=8 H=4 dk=2") {
        const attn::config c = notebook_config();
        const attn::stage_explanation scores = attn::explain_stage(c, "scores");
        CHECK(has(scores.shapes, "[2,4,5,2] · [2,4,2,5] -> [2,4,5,5]"));
        CHECK(scores.einsum == "bhqd,bhkd->bhqk");
        CHECK(scores.torch == "scores = q @ k.transpose(-2, -1)");
        CHECK(has(scores.memory, "(40, 2, 1, 8)"));  // k.transpose(-2, -1), as PyTorch's stride()
        CHECK(has(scores.memory, "copies both"));

        CHECK(attn::explain_stage(c, "projections").torch ==
              "q = w_q(x); k = w_k(x); v = w_v(x)  # each x @ w.weight.T + w.bias");
        CHECK(attn::explain_stage(c, "view").torch == "q = q.view(B, Sq, H, dk); k = k.view(B, Sk, H, dk); v = v.view(B, Sk, H, dk)");
        CHECK(has(attn::explain_stage(c, "view").memory, "(40, 8, 1) -> (40, 8, 2, 1)"));
        const attn::stage_explanation transpose = attn::explain_stage(c, "transpose");
        CHECK(transpose.torch == "q = q.transpose(1, 2); k = k.transpose(1, 2); v = v.transpose(1, 2)");
        CHECK(has(transpose.memory, "(40, 8, 2, 1) -> (40, 2, 8, 1)"));
        CHECK(has(transpose.memory, "no longer contiguous (q.is_contiguous() is False)"));
        CHECK(attn::explain_stage(c, "scaled").torch == "scaled = scores / math.sqrt(dk)");
        CHECK(has(attn::explain_stage(c, "scaled").words, "√dk = √2 = 1.4142"));
        CHECK(attn::explain_stage(c, "mask").torch == "mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))");
        CHECK(attn::explain_stage(c, "masked").torch == "masked = scaled.masked_fill(~mask, float('-inf'))");
        CHECK(attn::explain_stage(c, "softmax").torch == "weights = torch.softmax(masked, dim=-1)");
        CHECK(has(attn::explain_stage(c, "softmax").shapes, "2·4·5 = 40 rows of Sk = 5 weights"));
        CHECK(attn::explain_stage(c, "context").torch == "context = weights @ v");
        CHECK(attn::explain_stage(c, "context").einsum == "bhqk,bhkd->bhqd");
        const attn::stage_explanation merge = attn::explain_stage(c, "merge");
        CHECK(merge.torch == "merged = context.transpose(1, 2)");
        CHECK(has(merge.memory, "(40, 10, 2, 1) -> (40, 2, 10, 1)"));
        CHECK(has(merge.memory, "merged is not contiguous"));
        const attn::stage_explanation concat = attn::explain_stage(c, "concat");
        CHECK(concat.torch == "concat = merged.contiguous().view(B, Sq, D)");
        CHECK(has(concat.memory, "the copy: merged is not contiguous, so .contiguous() copies it into new memory"));
        CHECK(has(concat.memory, "(40, 8, 2, 1)"));
        CHECK(attn::explain_stage(c, "output").torch == "out = w_o(concat)  # concat @ w_o.weight.T + w_o.bias");
    }

    TEST_CASE("the shapes named are the tensors' own, and every einsum fits them") {
        for (const auto& variant : variants()) {  // no structured binding: CAPTURE's lambda (clang)
            const auto& [name, c] = variant;
            const std::string variant_name = name;
            CAPTURE(variant_name);
            const attn::trace t = traced(c);
            check_shapes_named(c, t);
            check_einsums(c, t);
        }
    }

    TEST_CASE("every stage of a run has each text; the symbols are the stage's formula") {
        for (const auto& variant : variants()) {
            const auto& [name, c] = variant;
            const std::string variant_name = name;
            CAPTURE(variant_name);
            for (const attn::stage& s : traced(c).stages) {
                CAPTURE(s.name());
                const attn::stage_explanation e = attn::explain_stage(c, s.name());
                CHECK(e.symbols == attn::stage_formula(c, s.name()));
                for (const std::string* text : {&e.words, &e.shapes, &e.torch, &e.memory, &e.why}) CHECK(!text->empty());
            }
        }
        const attn::stage_explanation none = attn::explain_stage(notebook_config(), "weights");
        CHECK(none.words.empty());
        CHECK(none.symbols.empty());
    }

    TEST_CASE("the memory texts say what PyTorch 1.13 does, shape by shape") {
        const nlohmann::json reference = read_json(reference_path("explain_layouts.json"));
        REQUIRE(reference["cases"].size() == 10);
        for (const auto& lc : reference["cases"]) {
            const attn::config c = layout_config(lc);
            CAPTURE(json_text(lc).substr(0, 60));
            const auto stride = [](const nlohmann::json& layout) {
                return listed(layout["stride"].get<sizes>(), "(", ", ", ")");
            };
            const std::string view = attn::explain_stage(c, "view").memory;
            CHECK(has(view, stride(lc["projections"]["q"]) + " -> " + stride(lc["view"]["q"])));

            const std::string transpose = attn::explain_stage(c, "transpose").memory;
            CHECK(has(transpose, stride(lc["view"]["q"]) + " -> " + stride(lc["transpose"]["q"])));
            const bool q_contiguous = lc["transpose"]["q"]["contiguous"], k_contiguous = lc["transpose"]["k"]["contiguous"];
            CHECK(has(transpose, "q is no longer contiguous") + has(transpose, "q, k and v are no longer contiguous") ==
                  !q_contiguous);
            CHECK(has(transpose, "k and v are not") + has(transpose, "q, k and v are no longer") == !k_contiguous);

            const auto matmul_words = [](int copies) {
                return copies == 2 ? "copies both" : copies == 1 ? "copies it into" : "in place, without a copy";
            };
            CHECK(has(attn::explain_stage(c, "scores").memory, matmul_words(lc["scores"]["matmul_copies"])));
            CHECK(has(attn::explain_stage(c, "scores").memory, stride(lc["k_t"])));
            CHECK(has(attn::explain_stage(c, "context").memory, matmul_words(lc["context"]["matmul_copies"])));

            const std::string merge = attn::explain_stage(c, "merge").memory;
            CHECK(has(merge, stride(lc["context"]["context"]) + " -> " + stride(lc["merge"]["context"])));
            CHECK(has(merge, "merged is not contiguous") == !lc["merge"]["context"]["contiguous"].get<bool>());
            CHECK(has(merge, "raises") == !lc["merge"]["view_raises"].is_null());

            const std::string concat = attn::explain_stage(c, "concat").memory;
            const bool copies = lc["concat"]["contiguous_copies"].get<int>() == 1;
            CHECK(has(concat, "the copy:") == copies);
            CHECK(has(concat, "no copy:") == !copies);
            CHECK(has(concat, stride(lc["concat"]["concat"])));
            CHECK(has(concat, "would work without the copy") == (copies && lc["merge"]["view_raises"].is_null()));
        }
    }

    TEST_CASE("variants change the texts") {
        SUBCASE("cross-attention: x_kv, Sk and Dkv") {
            attn::config c = notebook_config();
            c.kv_seq = 6;
            c.d_kv_in = 12;
            CHECK(has(attn::explain_stage(c, "input").shapes, "x_kv [B,Sk,Dkv] = [2,6,12]"));
            CHECK(has(attn::explain_stage(c, "input").torch,
                      "w_o = nn.Linear(8, 8); x = torch.randn(2, 5, 8); x_kv = torch.randn(2, 6, 12)  # x drawn after the weights"));
            CHECK(attn::explain_stage(c, "projections").torch ==
                  "q = w_q(x); k = w_k(x_kv); v = w_v(x_kv)  # each x @ w.weight.T + w.bias");
            CHECK(has(attn::explain_stage(c, "projections").shapes, "x_kv [2,6,12] · w_kᵀ [12,8] + b_k [8] -> k [2,6,8]"));
            CHECK(has(attn::explain_stage(c, "input").torch, "w_k = nn.Linear(12, 8); w_v = nn.Linear(12, 8)"));
            CHECK(has(attn::explain_stage(c, "scores").shapes, "[2,4,5,2] · [2,4,2,6] -> [2,4,5,6]"));
            CHECK(attn::explain_stage(c, "mask").torch == "mask = torch.tril(torch.ones(5, 6, dtype=torch.bool))");
            CHECK(has(attn::explain_stage(c, "mask").words, "aligned upper-left"));
        }
        SUBCASE("--no-qkv-bias: no bias in the torch lines or shapes") {
            attn::config c = notebook_config();
            c.qkv_bias = false;
            CHECK(attn::explain_stage(c, "projections").torch ==
                  "q = w_q(x); k = w_k(x); v = w_v(x)  # each x @ w.weight.T (bias=False)");
            CHECK(!has(attn::explain_stage(c, "projections").shapes, "b_q"));
            CHECK(has(attn::explain_stage(c, "input").torch,
                      "torch.manual_seed(0); w_q = nn.Linear(8, 8, bias=False); w_k = nn.Linear(8, 8, bias=False); "
                      "w_v = nn.Linear(8, 8, bias=False); w_o = nn.Linear(8, 8); x = torch.randn(2, 5, 8)"));
            CHECK(has(attn::explain_stage(c, "params").words, "In all 264 numbers"));  // 3·64 + 64 + 8
        }
        SUBCASE("--no-out-proj: concat is the result") {
            attn::config c = notebook_config();
            c.out_proj = false;
            CHECK(has(attn::explain_stage(c, "concat").why, "this is the result"));
            CHECK(!has(attn::explain_stage(c, "params").torch, "w_o"));
            CHECK(!has(attn::explain_stage(c, "input").torch, "w_o"));
            CHECK(has(attn::explain_stage(c, "params").words, "In all 216 numbers"));  // 3·(64 + 8)
        }
        SUBCASE("--q --k --v: the projections are given") {
            attn::config c = notebook_config();
            c.sources.from_projections = true;
            CHECK(has(attn::explain_stage(c, "projections").torch, "given by --q, --k, --v"));
            CHECK(attn::explain_stage(c, "projections").einsum.empty());
            CHECK(has(attn::explain_stage(c, "projections").memory, "q.stride() is (40, 8, 1): one step"));
        }
        SUBCASE("a finite fill, far below the scores or not") {
            attn::config c = notebook_config();
            c.fill = -1e9f;
            c.fill_text = "-1e9";
            CHECK(attn::explain_stage(c, "masked").torch == "masked = scaled.masked_fill(~mask, -1e9)");
            CHECK(has(attn::explain_stage(c, "masked").why, "uniform weights"));
            c.fill = -2.0f;
            c.fill_text = "-2";
            CHECK(has(attn::explain_stage(c, "masked").why, "0 only when the fill is far below the scores"));
        }
        SUBCASE("dropout in training mode") {
            attn::config c = notebook_config();
            c.dropout.p = 0.1;
            c.dropout.train = true;
            c.dropout.seed = 3;
            const attn::stage_explanation e = attn::explain_stage(c, "dropout");
            CHECK(e.torch ==
                  "torch.manual_seed(3); keep = torch.rand(B, H, Sq, Sk) < 1 - 0.1; weights = weights * (keep / (1 - 0.1))");
            CHECK(has(e.words, "1 / (1 - p) = 1.1111"));
            CHECK(has(e.words, "torch.manual_seed(3); keep = torch.rand(2, 4, 5, 5) < 0.9"));
            CHECK(!has(attn::explain_stage(c, "context").words, "an average"));  // rows no longer sum to 1
        }
        SUBCASE("padding, window and random masks in PyTorch") {
            attn::config c = notebook_config();
            c.mask = {};
            c.mask.padding = true;
            c.mask.lengths = {5, 3};
            c.mask.window = true;
            c.mask.window_size = 1;
            CHECK(attn::explain_stage(c, "mask").torch ==
                  "mask = (torch.arange(5) < torch.tensor([5, 3]).view(2, 1, 1, 1)) & "
                  "((torch.arange(5)[:, None] - torch.arange(5)).abs() <= 1)");
            c.mask = {};
            c.mask.random = true;
            c.mask.random_seed = 4;
            c.mask.random_keep = 0.75;
            CHECK(attn::explain_stage(c, "mask").torch == "torch.manual_seed(4); mask = (torch.rand(2, 1, 5, 5) < 0.75)");
        }
    }

    TEST_CASE("explanation_lines: labelled, in reading order, the empty ones left out") {
        const std::vector<attn::explanation_line> lines =
            attn::explanation_lines(attn::explain_stage(notebook_config(), "scaled"));  // no einsum
        std::vector<std::string> labels;
        for (const auto& line : lines) labels.push_back(line.label);
        CHECK(labels == std::vector<std::string>{"what", "shape", "torch", "memory", "why"});
    }

    TEST_CASE("the opening and the summary carry the run's letters and shapes") {
        attn::config c = notebook_config();
        std::string intro;
        for (const std::string& paragraph : attn::explain_intro(c)) intro += paragraph + "\n";
        CHECK(has(intro, "B = 2 sequences"));
        CHECK(has(intro, "Sq = 5 query tokens, Sk = 5 key and value tokens"));
        CHECK(has(intro, "H = 4 heads of dk = 2 features"));
        CHECK(has(intro, "self-attention"));
        CHECK(has(intro, "softmax(masked(Q_h·K_hᵀ / √dk))"));
        std::vector<attn::explanation_line> summary = attn::explain_summary(c);
        REQUIRE(summary.size() == 3);
        CHECK(summary[0].text.rfind("x [2,5,8] -> q [2,5,8] -> view [2,5,4,2] -> transpose [2,4,5,2]", 0) == 0);
        CHECK(has(summary[0].text, "-> concat [2,5,8] -> out [2,5,8]"));
        CHECK(has(summary[1].text, ".contiguous() in concat"));
        CHECK(has(summary[2].text, "2·4·5·5 = 200 numbers"));
        c.out_proj = false;
        c.heads = 1;
        summary = attn::explain_summary(c);
        CHECK(summary[0].text.substr(summary[0].text.size() - 17) == "-> concat [2,5,8]");
        CHECK(has(summary[1].text, "Copies: none in this run"));  // one head: every transpose stays contiguous
    }
}
