// The unit tests' shared helpers (support.hpp).
#include "support.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <utility>

#include <doctest/doctest.h>

#include "attn/compute/attention.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/stage_table.hpp"
#include "attn/io/replay.hpp"

// --- files -------------------------------------------------------------------------------

std::string reference_path(const std::string& name) { return std::string(ATTN_REFERENCE_DIR) + "/" + name; }

std::string file_bytes(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

std::size_t scratch_dir::entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
}

std::size_t scratch_dir::temporaries() const {
    std::size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(path))
        n += e.path().filename().string().rfind(".attn-", 0) == 0;
    return n;
}

// --- JSON --------------------------------------------------------------------------------

namespace {

template <typename Json>
Json read_document(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open " + path);
    return Json::parse(in);
}

}  // namespace

nlohmann::json read_json(const std::string& path) { return read_document<nlohmann::json>(path); }
nlohmann::ordered_json read_ordered_json(const std::string& path) {
    return read_document<nlohmann::ordered_json>(path);
}
nlohmann::json parse_json(const std::string& text) { return nlohmann::json::parse(text); }
nlohmann::ordered_json parse_ordered_json(const std::string& text) { return nlohmann::ordered_json::parse(text); }
std::string json_text(const nlohmann::json& j) { return j.dump(); }
std::string json_text(const nlohmann::ordered_json& j) { return j.dump(); }

// --- runs and stages -------------------------------------------------------------------------

attn::trace run(const attn::config& c, attn::given_inputs given) {
    attn::validate(c);
    return attn::compute_trace(c, attn::draw_inputs(c, std::move(given)));
}

names stage_names(const attn::trace& t) {
    names n;
    for (const auto& s : t.stages) n.emplace_back(s.name());
    return n;
}

names tensor_names(const attn::stage& s) {
    names n;
    for (const auto& t : s.tensors) n.push_back(t.name);
    return n;
}

attn::stage make_stage(std::string_view name, std::vector<attn::tensor> tensors) {
    attn::stage s;
    s.info = attn::find_stage_info(name);
    REQUIRE(s.info != nullptr);
    s.tensors = std::move(tensors);
    return s;
}

// --- tensors -----------------------------------------------------------------------------------

std::uint32_t bits(float f) {
    std::uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
}

std::vector<float> values_of(const attn::loaded_tensor& t) {
    return std::vector<float>(t.values.data(), t.values.data() + t.values.size());
}

attn::loaded_tensor answer_of(xt::xarray<float> values) {
    attn::loaded_tensor t;
    t.shape.assign(values.shape().begin(), values.shape().end());
    t.values = std::move(values);
    return t;
}

void check_same(const attn::loaded_tensor& a, const attn::loaded_tensor& b) {
    REQUIRE(a.shape == b.shape);
    CHECK(a.boolean == b.boolean);
    CHECK(a.non_finite == b.non_finite);
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t e = 0; e < a.values.size(); ++e) {
        const float x = a.values.data()[e], y = b.values.data()[e];
        REQUIRE((x == y || (std::isnan(x) && std::isnan(y))));
    }
}

// --- reference fixtures ------------------------------------------------------------------------

namespace mistake_fixtures {
namespace {

std::string dir() { return reference_path("mistakes"); }

/// The run a config of the index describes, as the CLI would make it from its args.
attn::config config_of(const nlohmann::json& j) {
    attn::config c;
    c.seed = j["seed"].get<std::uint64_t>();
    c.batch = j["batch"].get<std::int64_t>();
    c.seq = j["seq"].get<std::int64_t>();
    c.kv_seq = j["kv_seq"].get<std::int64_t>();
    c.d_model = c.d_in = c.d_kv_in = j["d_model"].get<std::int64_t>();
    c.heads = j["heads"].get<std::int64_t>();
    attn::parse_mask_kinds(j["mask"].get<std::string>(), c.mask);
    c.mask.lengths = j["lengths"].get<std::vector<std::int64_t>>();
    if (j.contains("window")) c.mask.window_size = j["window"].get<std::int64_t>();  // --window W
    if (j.contains("past")) c.past = j["past"].get<std::int64_t>();              // --past N
    if (j.contains("kv_heads")) c.kv_heads = j["kv_heads"].get<std::int64_t>();  // --kv-heads G
    if (j.contains("pos")) c.pos = *attn::parse_position_encoding(j["pos"].get<std::string>());  // --pos
    if (j.contains("rope_style")) c.rope_style = *attn::parse_rope_pairing(j["rope_style"].get<std::string>());
    if (j.contains("causal_align"))  // --causal-align
        c.mask.causal_align = *attn::parse_causal_alignment(j["causal_align"].get<std::string>());
    const std::string fill = j["fill"].get<std::string>();
    c.fill = fill == "-inf" ? -std::numeric_limits<float>::infinity() : std::stof(fill);
    c.fill_text = fill;
    if (j.contains("dropout")) {  // --dropout P --train --dropout-seed N
        c.dropout.p = j["dropout"]["p"].get<double>();
        c.dropout.train = true;
        c.dropout.seed = j["dropout"]["seed"].get<std::uint64_t>();
    }
    attn::validate(c);
    return c;
}

}  // namespace

std::vector<answer> all() {
    const nlohmann::json index = read_json(dir() + "/index.json");
    std::vector<answer> answers;
    for (const auto& a : index["answers"])
        answers.push_back({a["config"], a["mistake"], a["stage"], a["tensor"], a["made_at"], a["file"],
                           a["way"].get<int>(), config_of(index["configs"][a["config"].get<std::string>()])});
    return answers;
}

attn::loaded_tensor read(const answer& a) { return attn::read_tensor_file(dir() + "/" + a.file, a.file); }

}  // namespace mistake_fixtures

namespace strides_fixture {

const json& cases() {
    static const json all = read_ordered_json(reference_path("strides.json")).at("cases");
    return all;
}

attn::trace run(const json& one_case) {
    const nlohmann::json config_json = parse_json(json_text(one_case.at("config")));
    return ::run(attn::config_from_json(config_json, one_case.at("name").get<std::string>()));
}

}  // namespace strides_fixture
