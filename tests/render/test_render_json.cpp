// render_json: --format json and jsonl (CLI.md, "JSON").
//
// Every document written here is parsed back with nlohmann::json and compared with the
// trace it came from: stage order, the nesting of `data` (as tensor.tolist()), the exact
// float32 bits of every number, the non-finite strings, booleans, the config block and
// the warnings.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "attn/io/config_fields.hpp"
#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/generator.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/render/render_json.hpp"
#include "attn/compute/trace.hpp"
#include "attn/teach/stage_text.hpp"
#include "support.hpp"

namespace {

using ordered_json = nlohmann::ordered_json;  // keeps the document's key order


std::string render_json_text(const attn::trace& t, const attn::render_options& options = {}) {
    std::ostringstream out;
    attn::render_json(t, options, out);
    return out.str();
}

ordered_json render_parsed(const attn::trace& t, const attn::render_options& options = {}) {
    return parse_ordered_json(render_json_text(t, options));
}

names keys(const ordered_json& object) {
    names k;
    for (const auto& item : object.items()) k.push_back(item.key());
    return k;
}

/// B=2, Sq=Sk=3, D=4, H=2, causal + padding {3, 0}: the masked stage holds -inf and the
/// weights of batch item 1 are NaN.
attn::config masked_config() {
    attn::config c;
    c.batch = 2;
    c.seq = c.kv_seq = 3;
    c.d_model = c.d_in = c.d_kv_in = 4;
    c.heads = 2;
    c.mask.causal = c.mask.padding = true;
    c.mask.lengths = {3, 0};
    return c;
}

/// Walks `data` as tensor.tolist() would nest it, checking each axis length against the
/// shape and each leaf against the next value of the tensor in row-major order:
/// booleans for a mask, "-inf"/"inf"/"nan" strings, finite numbers with the same float32 bits.
class data_checker {
public:
    explicit data_checker(const attn::tensor& t) : t_(t), row_major_(t.values.begin(), t.values.end()) {}

    void check(const ordered_json& data) {
        next_ = 0;
        walk(data, 0);
        CHECK(next_ == t_.values.size());
    }

    std::size_t mismatches = 0;

private:
    void walk(const ordered_json& node, std::size_t axis) {
        if (axis == t_.values.dimension()) {
            leaf(node, row_major_[next_++]);
            return;
        }
        REQUIRE(node.is_array());
        REQUIRE(node.size() == t_.values.shape()[axis]);
        for (const auto& child : node) walk(child, axis + 1);
    }

    void leaf(const ordered_json& node, float v) {
        bool ok;
        if (t_.type == attn::element_type::boolean)
            ok = node.is_boolean() && node.get<bool>() == (v != 0.0f);
        else if (std::isnan(v))
            ok = node == "nan";
        else if (std::isinf(v))
            ok = node == (v < 0 ? "-inf" : "inf");
        else if (!node.is_number())
            ok = false;
        else if (v == 0.0f)
            ok = node.get<double>() == 0.0;  // JSON integers carry no sign for -0
        else
            ok = bits(static_cast<float>(node.get<double>())) == bits(v);
        if (!ok) {
            ++mismatches;
            CHECK_MESSAGE(ok, t_.name << " element " << next_ - 1 << ": " << json_text(node) << " for " << v);
        }
    }

    const attn::tensor& t_;
    const std::vector<float> row_major_;  // the elements read through the strides, as tensor.tolist() nests them
    std::size_t next_ = 0;
};

/// Every tensor of every shown stage of `t` is in `doc` with its shape, dims, dtype and data.
void check_document_matches(const ordered_json& doc, const attn::trace& t) {
    const ordered_json& stages = doc.at("stages");
    for (const auto& s : t.stages) {
        if (!stages.contains(s.name())) continue;
        CAPTURE(s.name());
        const ordered_json& js = stages.at(std::string(s.name()));
        if (t.warnings_of(s.name()).empty())
            CHECK(keys(js) == names{"step", "title", "formula", "tensors"});
        else
            CHECK(keys(js) == names{"step", "title", "formula", "warnings", "tensors"});
        CHECK(js.at("step") == attn::step_json(s.info->step));
        CHECK(js.at("title") == std::string(s.info->title));
        CHECK(js.at("formula") == attn::stage_formula(t.cfg, s.name()));
        names tensor_names;
        for (const auto& tensor : s.tensors) tensor_names.push_back(tensor.name);
        CHECK(keys(js.at("tensors")) == tensor_names);
        for (const auto& tensor : s.tensors) {
            CAPTURE(tensor.name);
            const ordered_json& jt = js.at("tensors").at(tensor.name);
            CHECK(keys(jt) == names{"shape", "dims", "dtype", "strides", "contiguous", "data"});
            CHECK(jt.at("shape").get<std::vector<std::size_t>>() ==
                  std::vector<std::size_t>(tensor.values.shape().begin(), tensor.values.shape().end()));
            CHECK(jt.at("dims").get<names>() == tensor.dims);
            CHECK(jt.at("dtype") == (tensor.type == attn::element_type::boolean ? "bool" : "float32"));
            CHECK(jt.at("strides").get<std::vector<std::ptrdiff_t>>() == tensor.strides);
            CHECK(jt.at("contiguous") == tensor.contiguous());
            data_checker checker(tensor);
            checker.check(jt.at("data"));
            CHECK(checker.mismatches == 0);
        }
    }
}

}  // namespace

TEST_SUITE("render_json") {

TEST_CASE("a small trace renders as one JSON document that parses back to the trace") {
    const attn::trace t = run(masked_config());
    const std::string text = render_json_text(t);
    REQUIRE(!text.empty());
    CHECK(text.back() == '\n');
    CHECK(text.find('\n') == text.size() - 1);  // one line
    ordered_json doc;
    REQUIRE_NOTHROW(doc = parse_ordered_json(text));
    CHECK(keys(doc) == names{"format", "config", "stages", "warnings"});
    CHECK(doc.at("format") == "attn.trace/1");
    CHECK(keys(doc.at("stages")) == stage_names(t));
    CHECK(keys(doc.at("stages")) == names{"input", "params", "projections", "view", "transpose", "scores", "scaled",
                                          "mask", "masked", "softmax", "context", "merge", "concat", "output"});
    check_document_matches(doc, t);
}

TEST_CASE("stages keep CLI.md's order and options.stages filters them") {
    const attn::trace t = run(masked_config());
    SUBCASE("a subset, asked for out of order, comes out in stage order") {
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::softmax, attn::stage_id::scores, attn::stage_id::mask);
        const ordered_json doc = render_parsed(t, options);
        CHECK(keys(doc.at("stages")) == names{"scores", "mask", "softmax"});
        CHECK(keys(doc) == names{"format", "config", "stages", "warnings"});  // the rest is still there
        check_document_matches(doc, t);
    }
    SUBCASE("a single stage") {
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::output);
        CHECK(keys(render_parsed(t, options).at("stages")) == names{"output"});
    }
    SUBCASE("a stage absent from this run gives an empty stages object") {
        attn::render_options options;
        options.stages = attn::stages(attn::stage_id::dropout);
        const ordered_json doc = render_parsed(t, options);
        CHECK(doc.at("stages").is_object());
        CHECK(doc.at("stages").empty());
    }
}

TEST_CASE("data nests like tensor.tolist(), with the shape") {
    const attn::trace t = run(masked_config());
    const ordered_json doc = render_parsed(t);
    const ordered_json& x = doc.at("stages").at("input").at("tensors").at("x");
    CHECK(x.at("shape") == ordered_json::array({2, 3, 4}));
    CHECK(x.at("dims") == ordered_json::array({"batch", "seq", "d_in"}));
    const ordered_json& data = x.at("data");
    REQUIRE(data.size() == 2);
    REQUIRE(data[1].size() == 3);
    REQUIRE(data[1][2].size() == 4);
    const auto& values = t.find("input")->at("x").values;
    CHECK(static_cast<float>(data[1][2][3].get<double>()) == values(1, 2, 3));
    CHECK(static_cast<float>(data[0][1][2].get<double>()) == values(0, 1, 2));

    const ordered_json& b_q = doc.at("stages").at("params").at("tensors").at("b_q");
    CHECK(b_q.at("shape") == ordered_json::array({4}));
    REQUIRE(b_q.at("data").size() == 4);
    CHECK(b_q.at("data")[0].is_number());  // a 1-D tensor is a flat list

    const ordered_json& weights = doc.at("stages").at("softmax").at("tensors").at("weights");
    CHECK(weights.at("shape") == ordered_json::array({2, 2, 3, 3}));
    CHECK(weights.at("data")[1][1][2].size() == 3);
}

TEST_CASE("-inf, inf and nan are strings; masks are true/false") {
    SUBCASE("from a computed trace") {
        const ordered_json doc = render_parsed(run(masked_config()));
        const ordered_json& masked = doc.at("stages").at("masked").at("tensors").at("masked").at("data");
        CHECK(masked[0][0][0][1] == "-inf");  // causal: query 0 may not see key 1
        CHECK(masked[0][0][0][0].is_number());
        CHECK(masked[1][1][2][0] == "-inf");  // padding 0: batch item 1 sees nothing
        const ordered_json& weights = doc.at("stages").at("softmax").at("tensors").at("weights").at("data");
        CHECK(weights[1][0][0][0] == "nan");
        CHECK(weights[0][0][0][1] == 0);
        const ordered_json& mask = doc.at("stages").at("mask").at("tensors").at("mask");
        CHECK(mask.at("dtype") == "bool");
        CHECK(mask.at("data") == parse_ordered_json("[[[[true,false,false],[true,true,false],[true,true,true]]],"
                                             "[[[false,false,false],[false,false,false],[false,false,false]]]]"));
    }
    SUBCASE("a hand-made tensor with every special value") {
        attn::trace t;
        xt::xarray<float> v{{-inf, inf}, {std::numeric_limits<float>::quiet_NaN(), 1.5f}};
        t.stages.push_back(make_stage("scores", {attn::tensor{"scores", {"query", "key"}, v}}));
        const std::string text = render_json_text(t);
        CHECK(text.find(R"("data":[["-inf","inf"],["nan",1.5]])") != std::string::npos);
        const ordered_json doc = parse_ordered_json(text);
        CHECK(doc.at("stages").at("scores").at("tensors").at("scores").at("data") ==
              parse_ordered_json(R"([["-inf","inf"],["nan",1.5]])"));
    }
}

TEST_CASE("numbers are the shortest text that reads back to the same float32") {
    SUBCASE("every number of a computed trace round-trips bit for bit") {
        attn::config c = masked_config();
        c.fill = -1e9f;
        const attn::trace t = run(c);
        check_document_matches(render_parsed(t), t);
    }
    SUBCASE("literal values") {
        attn::trace t;
        xt::xarray<float> v{0.1f, 1.0f, -2.5f, 1e-8f, 3.4028235e38f, 1e-45f, 16777217.0f, 0.0f};
        t.stages.push_back(make_stage("concat", {attn::tensor{"concat", {"d_model"}, v}}));
        const std::string text = render_json_text(t);
        // shortest round-trip forms: 0.1f is "0.1", not 0.100000001490116
        CHECK(text.find(R"("data":[0.1,1,-2.5,1e-08,3.4028235e+38,1e-45,16777216,0])") != std::string::npos);
        const ordered_json doc = parse_ordered_json(text);
        const ordered_json& data = doc.at("stages").at("concat").at("tensors").at("concat").at("data");
        REQUIRE(data.size() == v.size());
        for (std::size_t i = 0; i < v.size(); ++i) {
            CAPTURE(i);
            CHECK(bits(static_cast<float>(data[i].get<double>())) == bits(v(i)));
        }
    }
}

TEST_CASE("tensors larger than the writer's 64 KiB block come out whole and exact") {
    // 40000 numbers of up to 15 characters (~500 KB of text) and a 40000-element mask:
    // the block boundaries fall inside numbers, strings and booleans alike.
    attn::trace t;
    xt::xarray<float> v = xt::xarray<float>::from_shape({4, 100, 100});
    attn::torch_generator(3).randn(v.data(), v.size());
    for (std::size_t i = 0; i < v.size(); i += 7) v.data()[i] = -inf;
    for (std::size_t i = 3; i < v.size(); i += 11) v.data()[i] = std::numeric_limits<float>::quiet_NaN();
    xt::xarray<float> m = xt::xarray<float>::from_shape({4, 1, 100, 100});
    for (std::size_t i = 0; i < m.size(); ++i) m.data()[i] = (i * 7919) % 3 == 0 ? 1.0f : 0.0f;
    t.stages.push_back(make_stage("masked", {attn::tensor{"masked", {"batch", "query", "key"}, v}}));
    t.stages.push_back(
        make_stage("mask", {attn::tensor{"mask", {"batch", "head", "query", "key"}, m, attn::element_type::boolean}}));
    const std::string text = render_json_text(t);
    CHECK(text.size() > 4 * 64 * 1024);
    ordered_json doc;
    REQUIRE_NOTHROW(doc = parse_ordered_json(text));
    check_document_matches(doc, t);

    std::ostringstream line;
    attn::render_json_line(t, t.stages[0], attn::render_options{}, line);
    REQUIRE_NOTHROW(doc = parse_ordered_json(line.str()));
    data_checker checker(t.stages[0].tensors[0]);
    checker.check(doc.at("tensors").at("masked").at("data"));
    CHECK(checker.mismatches == 0);
}

TEST_CASE("the config block") {
    attn::config c;
    SUBCASE("no mask: the fixed keys, in order") {
        const ordered_json doc = render_parsed(run(c));
        const ordered_json& cfg = doc.at("config");
        CHECK(keys(cfg) == names{"batch", "seq", "kv_seq", "d_model", "heads", "head_dim", "d_in", "d_kv_in", "cross",
                                 "qkv_bias", "out_proj", "seed", "mask", "fill", "past", "kv_heads", "flash_block",
                                 "pos", "rope_base", "rope_style"});
        CHECK(cfg == parse_ordered_json(R"({"batch":1,"seq":4,"kv_seq":4,"d_model":8,"heads":2,"head_dim":4,"d_in":8,
                                    "d_kv_in":8,"cross":false,"qkv_bias":true,"out_proj":true,"seed":0,
                                    "mask":"none","fill":"-inf","past":0,"kv_heads":2,"flash_block":0,"pos":"none","rope_base":10000.0,"rope_style":"half"})"));
    }
    SUBCASE("cross-attention, flags and a finite fill") {
        c.batch = 2;
        c.kv_seq = 6;
        c.d_kv_in = 3;
        c.qkv_bias = false;
        c.out_proj = false;
        c.seed = 7;
        c.mask.causal = true;
        c.fill = -1e9f;
        const ordered_json cfg = render_parsed(run(c)).at("config");
        CHECK(keys(cfg) == names{"batch", "seq", "kv_seq", "d_model", "heads", "head_dim", "d_in", "d_kv_in", "cross",
                                 "qkv_bias", "out_proj", "seed", "mask", "fill", "past", "kv_heads", "flash_block",
                                 "pos", "rope_base", "rope_style"});
        CHECK(cfg == parse_ordered_json(R"({"batch":2,"seq":4,"kv_seq":6,"d_model":8,"heads":2,"head_dim":4,"d_in":8,
                                    "d_kv_in":3,"cross":true,"qkv_bias":false,"out_proj":false,"seed":7,
                                    "mask":"causal","fill":-1e9,"past":0,"kv_heads":2,"flash_block":0,"pos":"none","rope_base":10000.0,"rope_style":"half"})"));
    }
    SUBCASE("--pos, --rope-base and --rope-style: always written, last, so that a dump replays") {
        c.pos = attn::position_encoding::rope;
        c.rope_base = 500000.0;
        c.rope_style = attn::rope_pairing::interleaved;
        const ordered_json cfg = attn::config_to_json(c);
        CHECK(cfg.at("pos") == "rope");
        CHECK(cfg.at("rope_base") == 500000.0);
        CHECK(cfg.at("rope_style") == "interleaved");
    }
    SUBCASE("a finite fill reads back as the same float32") {
        c.mask.causal = true;
        c.fill = -0.1f;
        const ordered_json cfg = render_parsed(run(c)).at("config");
        REQUIRE(cfg.at("fill").is_number());
        CHECK(bits(static_cast<float>(cfg.at("fill").get<double>())) == bits(-0.1f));
        CHECK(json_text(cfg.at("fill")) == "-0.1");  // its shortest form, not -0.10000000149011612
    }
    SUBCASE("lengths, window, mask_seed and mask_keep only when those masks are on") {
        c.batch = 2;
        c.mask.padding = c.mask.window = c.mask.random = true;
        c.mask.lengths = {4, 2};
        c.mask.window_size = 1;
        c.mask.random_seed = 5;
        c.mask.random_keep = 0.75;
        const ordered_json cfg = render_parsed(run(c)).at("config");
        CHECK(keys(cfg) == names{"batch", "seq", "kv_seq", "d_model", "heads", "head_dim", "d_in", "d_kv_in", "cross",
                                 "qkv_bias", "out_proj", "seed", "mask", "lengths", "window", "mask_seed", "mask_keep",
                                 "fill", "past", "kv_heads", "flash_block",
                                 "pos", "rope_base", "rope_style"});
        CHECK(cfg.at("mask") == "padding+window+random");
        CHECK(cfg.at("lengths") == ordered_json::array({4, 2}));
        CHECK(cfg.at("window") == 1);
        CHECK(cfg.at("mask_seed") == 5);
        CHECK(cfg.at("mask_keep") == 0.75);
    }
    SUBCASE("only padding: lengths but no window or random keys") {
        c.mask.padding = true;
        c.mask.lengths = {3};
        const ordered_json cfg = render_parsed(run(c)).at("config");
        CHECK(cfg.contains("lengths"));
        CHECK_FALSE(cfg.contains("window"));
        CHECK_FALSE(cfg.contains("mask_seed"));
        CHECK_FALSE(cfg.contains("mask_keep"));
    }
    SUBCASE("what a replay (--from) needs: file inputs, the mask file's convention, key padding, the typed fill") {
        c.mask.causal = true;
        c.mask.from_file = true;
        c.mask.file_convention = attn::mask_convention::mha;
        c.mask.key_padding = true;
        c.fill = -1e9f;
        c.fill_text = "-1e9";
        c.sources.x_from_file = c.sources.x_kv_from_file = c.sources.params_from_file = true;
        const ordered_json cfg = attn::config_to_json(c);
        CHECK(keys(cfg) == names{"batch", "seq", "kv_seq", "d_model", "heads", "head_dim", "d_in", "d_kv_in", "cross",
                                 "qkv_bias", "out_proj", "seed", "mask", "mask_file", "mask_convention", "key_padding",
                                 "key_padding_convention",
                                 "fill", "fill_text", "input_file", "kv_input_file", "params_file", "past", "kv_heads",
                                 "flash_block", "pos", "rope_base", "rope_style"});
        CHECK(cfg.at("mask_convention") == "mha");
        CHECK(cfg.at("fill") == -1e9);
        CHECK(cfg.at("fill_text") == "-1e9");
        SUBCASE("a mask file read as keep-masks says so") {
            c.mask.file_convention = attn::mask_convention::keep;
            CHECK(attn::config_to_json(c).at("mask_convention") == "keep");
        }
        SUBCASE("none of these keys when nothing came from a file") {
            attn::config plain;
            for (const char* key : {"mask_file", "mask_convention", "key_padding", "fill_text", "input_file",
                                    "kv_input_file", "params_file", "from_projections"})
                CHECK_FALSE(attn::config_to_json(plain).contains(key));
        }
    }
    SUBCASE("config_to_json is the same block") {
        c.mask.window = true;
        c.mask.window_size = 2;
        CHECK(render_parsed(run(c)).at("config") == parse_ordered_json(json_text(attn::config_to_json(c))));
    }
}

TEST_CASE("warnings is an array of the trace's warnings") {
    SUBCASE("none") {
        const ordered_json doc = render_parsed(run(attn::config{}));
        CHECK(doc.at("warnings").is_array());
        CHECK(doc.at("warnings").empty());
    }
    SUBCASE("rows with no allowed key") {
        const attn::trace t = run(masked_config());
        REQUIRE(t.warnings.size() == 3);  // one per row of batch 1
        const ordered_json doc = render_parsed(t);
        CHECK(doc.at("warnings") == ordered_json::array({t.warnings[0].text, t.warnings[1].text, t.warnings[2].text}));
        CHECK(doc.at("warnings")[0] == "batch 1, query 0: no key may be attended, so its weights are NaN (fill -inf)");
        SUBCASE("and next to the stage it concerns") {
            CHECK(t.warnings[0].stage == "softmax");
            CHECK(doc.at("stages").at("softmax").at("warnings") == doc.at("warnings"));
            CHECK(!doc.at("stages").at("masked").contains("warnings"));
        }
    }
}

TEST_CASE("render_json_line writes one line per stage, \"name\" first, ending with '\\n'") {
    const attn::trace t = run(masked_config());
    for (const auto& s : t.stages) {
        CAPTURE(s.name());
        std::ostringstream out;
        attn::render_json_line(t, s, attn::render_options{}, out);
        const std::string line = out.str();
        REQUIRE(!line.empty());
        CHECK(line.back() == '\n');
        CHECK(line.find('\n') == line.size() - 1);
        CHECK(line.rfind("{\"name\":\"" + std::string(s.name()) + "\",", 0) == 0);
        const ordered_json j = parse_ordered_json(line);
        if (s.name() == "softmax")
            CHECK(keys(j) == names{"name", "step", "title", "formula", "warnings", "tensors"});
        else
            CHECK(keys(j) == names{"name", "step", "title", "formula", "tensors"});
        CHECK(j.at("name") == std::string(s.name()));
        CHECK(j.at("step") == attn::step_json(s.info->step));
        // the same stage object as in the whole document, plus its name
        ordered_json without_name = j;
        without_name.erase("name");
        attn::render_options only;
        only.stages = attn::stage_bit(s.id());
        CHECK(render_parsed(t, only).at("stages").at(std::string(s.name())) == without_name);
    }
}

TEST_CASE("\"step\": an integer for CLI.md's numbers and embed's 0, a string for a lettered one") {
    CHECK(attn::step_json(attn::info_of(attn::stage_id::softmax).step) == 10);
    CHECK(attn::step_json(attn::info_of(attn::stage_id::embed).step) == 0);
    CHECK(attn::step_json(attn::info_of(attn::stage_id::rope).step) == "5a");
    CHECK(attn::step_json(attn::info_of(attn::stage_id::flash).step) == "12a");
}

}  // TEST_SUITE("render_json")
