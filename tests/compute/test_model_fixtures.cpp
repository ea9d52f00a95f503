// Real model layers from their own files (issue 24): layer 1 of tiny GPT-2, BERT and Llama
// checkpoints and an nn.MultiheadAttention state_dict, from hidden.npy, against PyTorch composed
// as each model's code computes it (tests/reference/make_model_fixtures.py), for the F32, F16
// and BF16 .safetensors and the .npz checkpoint. Every member of stages-layer1*.npz must be
// attn's tensor of the same name: bit for bit where the running OpenBLAS kernel has a set
// (models/kernels.txt; openblas/<Set>/models/ overrides), GPT-2's LayerNorm and Llama's RMSNorm
// included (norms.cpp), else within 1e-5.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "attn/compute/attention.hpp"
#include "attn/compute/tensor.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/io/npz.hpp"
#include "attn/io/token_input.hpp"

extern "C" char* openblas_get_corename(void);

namespace {

namespace fs = std::filesystem;

const fs::path model_dir = fs::path(ATTN_REFERENCE_DIR) / "models";

/// The set models/kernels.txt gives the running OpenBLAS kernel; empty when it has none.
std::string model_fixture_set() {
    std::ifstream in(model_dir / "kernels.txt");
    const std::string kernel = openblas_get_corename();
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string k, set;
        if (!line.empty() && line[0] != '#' && (words >> k >> set) && k == kernel) return set;
    }
    return "";
}

/// models/<model>/<file>, or the kernel set's own where it has one.
fs::path model_reference(const std::string& set, const std::string& model, const std::string& file) {
    const fs::path overlay = fs::path(ATTN_REFERENCE_DIR) / "openblas" / set / "models" / model / file;
    if (!set.empty() && fs::exists(overlay)) return overlay;
    return model_dir / model / file;
}

struct model_case {
    const char* model;
    const char* weights;     // the checkpoint
    const char* reference;   // its stages-layer1*.npz
};

constexpr model_case model_cases[] = {
    {"gpt2", "model.safetensors", "stages-layer1.npz"},  {"gpt2", "model.npz", "stages-layer1.npz"},
    {"gpt2", "model-f16.safetensors", "stages-layer1-f16.npz"}, {"gpt2", "model-bf16.safetensors", "stages-layer1-bf16.npz"},
    {"bert", "model.safetensors", "stages-layer1.npz"},  {"bert", "model.npz", "stages-layer1.npz"},
    {"bert", "model-f16.safetensors", "stages-layer1-f16.npz"}, {"bert", "model-bf16.safetensors", "stages-layer1-bf16.npz"},
    {"llama", "model.safetensors", "stages-layer1.npz"}, {"llama", "model.npz", "stages-layer1.npz"},
    {"llama", "model-f16.safetensors", "stages-layer1-f16.npz"}, {"llama", "model-bf16.safetensors", "stages-layer1-bf16.npz"},
    {"mha", "model.safetensors", "stages-layer1.npz"},   {"mha", "model.npz", "stages-layer1.npz"},
    {"mha", "model-f16.safetensors", "stages-layer1-f16.npz"},  {"mha", "model-bf16.safetensors", "stages-layer1-bf16.npz"},
};

/// The trace of `c` as `attn trace --params <weights> --input hidden.npy [--layer 1 | --heads 4]` makes it.
attn::trace trace_model_file(const model_case& m) {
    attn::input_paths paths;
    paths.params = (model_dir / m.model / m.weights).string();
    paths.input = (model_dir / m.model / "hidden.npy").string();
    attn::config base;
    if (std::string(m.model) == "mha") paths.model.heads = base.heads = 4;  // a bare state_dict: no config.json
    else paths.model.layer = 1;
    attn::loaded_inputs loaded = attn::load_inputs(base, {}, paths);
    return attn::compute_trace(loaded.cfg, attn::draw_inputs(loaded.cfg, std::move(loaded.given)));
}

/// The largest |a - b| of two tensors of the same size; `equal` whether every bit agrees.
double largest_difference(const xt::xarray<float>& a, const xt::xarray<float>& b, bool& equal) {
    double largest = 0.0;
    equal = true;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const float x = a.data()[i], y = b.data()[i];
        if (std::memcmp(&x, &y, sizeof x) != 0) equal = false;
        if (!(std::isinf(x) && x == y)) largest = std::max(largest, std::abs(double(x) - double(y)));
    }
    return largest;
}

/// Checks every tensor of `t` against the member of `expected` named after it ("softmax.weights"),
/// which it erases: the same shape, and the same bits where `bits` says so for its stage, else within
/// 1e-5. `reference` names the file in messages; with `input_optional` it may lack input.x.
/// Returns how many tensors were compared.
template <class Bits>
std::size_t compare_stages(const attn::trace& t, std::map<std::string, attn::loaded_tensor>& expected,
                           const std::string& reference, const Bits& bits, bool input_optional) {
    std::size_t compared = 0;
    for (const attn::stage& s : t.stages)
        for (const attn::tensor& x : s.tensors) {
            const std::string name = std::string(s.name()) + "." + x.name;
            CAPTURE(name);
            const auto it = expected.find(name);
            if (input_optional && name == "input.x" && it == expected.end()) continue;
            REQUIRE_MESSAGE(it != expected.end(), name << " is not in " << reference);
            const xt::xarray<float> ours = attn::row_major_copy(x);
            REQUIRE(std::vector<std::size_t>(ours.shape().begin(), ours.shape().end()) == it->second.shape);
            bool equal = false;
            const double diff = largest_difference(ours, it->second.values, equal);
            if (bits(s.id())) CHECK_MESSAGE(equal, name << " differs by up to " << diff);
            else CHECK_MESSAGE(diff <= 1e-5, name << " differs by up to " << diff);
            ++compared;
            expected.erase(it);
        }
    return compared;
}

}  // namespace

TEST_SUITE("model fixtures") {

TEST_CASE("every stage of layer 1 of GPT-2, BERT, Llama and nn.MultiheadAttention from their own files is PyTorch's") {
    const std::string set = model_fixture_set();
    if (set.empty()) MESSAGE("OpenBLAS kernel " << openblas_get_corename() << " has no model fixture set: tolerance only");
    for (const model_case& m : model_cases) {
        const std::string model = m.model, weights = m.weights;
        CAPTURE(model);
        CAPTURE(weights);
        const attn::trace t = trace_model_file(m);
        const std::string reference = model_reference(set, m.model, m.reference).string();
        std::map<std::string, attn::loaded_tensor> expected = attn::read_npz(reference, reference);
        REQUIRE(expected.size() > 20);
        const std::size_t compared =
            compare_stages(t, expected, m.reference, [&](attn::stage_id) { return !set.empty(); }, true);
        for (const auto& left : expected)  // every reference member is a stage attn computed
            CHECK_MESSAGE(left.first.rfind("mha.", 0) == 0, left.first << " is in " << m.reference << " but not in attn's run");
        CHECK(compared >= 20);
    }
}

TEST_CASE("every stage of layer 0 of GPT-2, BERT and Llama from their token ids (--tokens) is PyTorch's, embed first") {
    const std::string set = model_fixture_set();
    for (const char* model : {"gpt2", "bert", "llama"}) {
        CAPTURE(model);
        attn::input_paths paths;
        paths.params = (model_dir / model / "model.safetensors").string();
        paths.tokens = attn::parse_token_ids("@" + (model_dir / model / "tokens.txt").string());
        REQUIRE(paths.tokens.size() == 5);
        attn::loaded_inputs loaded = attn::load_inputs(attn::config{}, {}, paths);
        const attn::trace t = attn::compute_trace(loaded.cfg, attn::draw_inputs(loaded.cfg, std::move(loaded.given)));
        REQUIRE(!t.stages.empty());
        CHECK(t.stages.front().id() == attn::stage_id::embed);
        const std::string reference = model_reference(set, model, "stages-layer0-tokens.npz").string();
        std::map<std::string, attn::loaded_tensor> expected = attn::read_npz(reference, reference);
        // the tables' rows and their sums are plain copies and float32 additions: bit-equal on every kernel
        const auto bits = [&](attn::stage_id id) {
            return !set.empty() || id == attn::stage_id::embed || id == attn::stage_id::input || id == attn::stage_id::norm;
        };
        const std::size_t compared = compare_stages(t, expected, "stages-layer0-tokens.npz", bits, false);
        for (const auto& left : expected) CHECK_MESSAGE(false, left.first << " is in the reference but not in attn's run");
        CHECK(compared >= 25);
    }
}

}  // TEST_SUITE("model fixtures")
