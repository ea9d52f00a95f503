// attn against PyTorch: every stage of every case in tests/reference/fixtures/*.json.
//
// The fixtures are written by tests/reference/make_fixtures.py (torch 1.13, plain torch ops
// the way a student's notebook writes them) and committed, so this test never needs torch.
// For each fixture: build the config, draw the inputs from the seed, compute the trace, then
// require every stage and tensor of the fixture, with the same shape and the same numbers
// (|actual - expected| <= 1e-5 + 1e-5 |expected|; NaN and ±inf exactly; masks exactly), and
// no stage or tensor that the fixture lacks. Beyond that tolerance, the values must also be
// bit-equal to PyTorch's (one documented exception, in check_tensor).
//
// The bits depend on OpenBLAS's GEMM kernel, which OpenBLAS picks per CPU (OPENBLAS_CORETYPE
// forces one), so the fixtures hold one set per kernel: fixtures/, file_inputs/ and torch_text/
// hold the Haswell kernel's, and openblas/<Set>/<path>, where it exists, replaces <path> for the
// kernels that openblas/kernels.txt maps to <Set>. The test takes the set of the kernel that
// openblas_get_corename() names at run time. For a kernel with no set it checks the Haswell
// set to the tolerance only, and says once that bit equality was not checked.
//
// The fixtures of --pos (tests/reference/positions/<Set>/, make_position_fixtures.py) are
// checked the same way, every tensor to the bit: torch computes cos and sin (rope.cos, rope.sin,
// positions.pe, positions.pe_kv) with SLEEF's AVX2 functions and attn calls the same ones
// (torch_trig.hpp). On a CPU without AVX2 attn rounds the double result instead, within 1 ulp
// of torch's (the script prints the largest difference per case): there those tensors must be
// within 1 ulp and the stages computed from them within the tolerance.
//
// A failing fixture never stops the others: per fixture the checks are CHECKs followed by an
// early return (a REQUIRE inside the loop would skip every later fixture).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"
#include "attn/compute/torch_trig.hpp"
#include "support.hpp"

extern "C" char* openblas_get_corename(void);  // the kernel OpenBLAS runs in this process

namespace {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;  // keeps the stages in the fixture's (CLI.md's) order

constexpr double abs_tol = 1e-5;
constexpr double rel_tol = 1e-5;  // for values much larger than 1, e.g. a -1e9 fill
constexpr std::size_t max_listed = 5;  // mismatching elements listed per tensor

const fs::path reference_dir = ATTN_REFERENCE_DIR;
const fs::path fixture_dir = reference_dir / "fixtures";
const fs::path kernel_index = reference_dir / "openblas" / "kernels.txt";
const fs::path not_made_index = reference_dir / "openblas" / "not_made.txt";  // "<Set> <path>" per line
const fs::path position_dir = reference_dir / "positions";

// ----------------------------------------------------------------------------
// the set of the running OpenBLAS kernel

struct fixture_set {
    std::string kernel;  // openblas_get_corename()
    std::string name;    // its set in kernels.txt; empty when it has none
    std::vector<std::string> not_made;  // files of the Haswell set made without this set (not_made.txt)
    bool bits_checked() const { return !name.empty(); }
    /// Whether the set has the bits of fixture `name` (no: not_made.txt lists it for the set).
    bool has_bits_of(const std::string& fixture) const {
        return bits_checked() &&
               std::find(not_made.begin(), not_made.end(), "fixtures/" + fixture + ".json") == not_made.end();
    }
    /// The set's file for a path relative to tests/reference: its overlay, or the Haswell file.
    fs::path file(const std::string& relative) const {
        if (!name.empty()) {
            const fs::path overlay = reference_dir / "openblas" / name / relative;
            if (fs::exists(overlay)) return overlay;
        }
        return reference_dir / relative;
    }
};

/// kernels.txt: "<kernel> <set>" per line, # comments; not_made.txt (optional): "<set> <path>" per line.
fixture_set read_fixture_set(const fs::path& index, const fs::path& not_made_index = {}) {
    fixture_set s;
    s.kernel = openblas_get_corename();
    std::ifstream in(index);
    if (!in) throw std::runtime_error("cannot open " + index.string());
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string kernel, name;
        if (line.empty() || line[0] == '#' || !(words >> kernel >> name)) continue;
        if (kernel == s.kernel) s.name = name;
    }
    std::ifstream not_made(not_made_index);  // absent: every set has every file
    for (std::string line; std::getline(not_made, line);) {
        std::istringstream words(line);
        std::string name, path;
        if (line.empty() || line[0] == '#' || !(words >> name >> path)) continue;
        if (name == s.name) s.not_made.push_back(path);
    }
    return s;
}

/// The position fixtures' set of the running kernel (positions/kernels.txt).
const fixture_set& running_position_set() {
    static const fixture_set set = read_fixture_set(position_dir / "kernels.txt");
    return set;
}

/// How a tensor of the fixture being checked must match beyond the tolerance.
enum class bits_rule { bit_equal, within_ulp, tolerance_only };

/// For a position fixture: which rule a tensor "stage.tensor" follows (see the top of this file);
/// empty while the CLI.md fixtures are checked.
std::function<bits_rule(const std::string&)> position_rule;

const fixture_set& running_set() {
    static const fixture_set set = read_fixture_set(kernel_index, not_made_index);
    return set;
}

// ----------------------------------------------------------------------------
// reading the fixtures

/// Every fixtures/*.json, sorted by name.
std::vector<fs::path> fixture_paths() {
    std::vector<fs::path> paths;
    if (!fs::is_directory(fixture_dir)) return paths;
    for (const auto& entry : fs::directory_iterator(fixture_dir))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
            paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    return paths;
}

/// "-inf", "inf", "nan" or a number.
double number_from_json(const ordered_json& v) {
    if (v.is_string()) {
        const auto s = v.get<std::string>();
        if (s == "-inf") return -std::numeric_limits<double>::infinity();
        if (s == "inf") return std::numeric_limits<double>::infinity();
        if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
        throw std::runtime_error("unexpected string value \"" + s + "\"");
    }
    if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
    return v.get<double>();
}

/// The fixture's "config" object as an attn::config (the C++ defaults fill nothing in:
/// the fixture names every field it needs).
attn::config config_from_json(const ordered_json& j) {
    attn::config c;
    c.batch = j.at("batch").get<std::int64_t>();
    c.seq = j.at("seq").get<std::int64_t>();
    c.kv_seq = j.at("kv_seq").get<std::int64_t>();
    c.d_model = j.at("d_model").get<std::int64_t>();
    c.heads = j.at("heads").get<std::int64_t>();
    c.d_in = j.at("d_in").get<std::int64_t>();
    c.d_kv_in = j.at("d_kv_in").get<std::int64_t>();
    c.qkv_bias = j.at("qkv_bias").get<bool>();
    c.out_proj = j.at("out_proj").get<bool>();
    c.seed = j.at("seed").get<std::uint64_t>();

    const auto kinds = j.at("mask").get<std::string>();  // "none" or "causal+padding" ...
    if (kinds != "none") {
        std::stringstream ss(kinds);
        for (std::string kind; std::getline(ss, kind, '+');) {
            if (kind == "causal") c.mask.causal = true;
            else if (kind == "padding") c.mask.padding = true;
            else if (kind == "window") c.mask.window = true;
            else if (kind == "random") c.mask.random = true;
            else throw std::runtime_error("unknown mask kind \"" + kind + "\"");
        }
    }
    if (j.contains("causal_align")) {
        const auto align = attn::parse_causal_alignment(j.at("causal_align").get<std::string>());
        if (!align) throw std::runtime_error("unknown causal_align " + json_text(j.at("causal_align")));
        c.mask.causal_align = *align;
    }
    if (j.contains("lengths")) c.mask.lengths = j.at("lengths").get<std::vector<std::int64_t>>();
    if (j.contains("window")) c.mask.window_size = j.at("window").get<std::int64_t>();
    if (j.contains("mask_seed")) c.mask.random_seed = j.at("mask_seed").get<std::uint64_t>();
    if (j.contains("mask_keep")) c.mask.random_keep = j.at("mask_keep").get<double>();
    c.fill = static_cast<float>(number_from_json(j.at("fill")));
    if (j.contains("safe_softmax")) c.safe_softmax = j.at("safe_softmax").get<bool>();
    if (j.contains("past")) c.past = j.at("past").get<std::int64_t>();          // a decoding step (--past N)
    if (j.contains("kv_heads")) c.kv_heads = j.at("kv_heads").get<std::int64_t>();  // grouped-query (--kv-heads G)
    if (j.contains("pos")) {
        const auto pos = attn::parse_position_encoding(j.at("pos").get<std::string>());
        const auto style = attn::parse_rope_pairing(j.at("rope_style").get<std::string>());
        if (!pos || !style) throw std::runtime_error("unknown pos or rope_style");
        c.pos = *pos;
        c.rope_style = *style;
        c.rope_base = j.at("rope_base").get<double>();
    }
    if (j.contains("dropout")) {
        c.dropout.p = j.at("dropout").get<double>();
        c.dropout.train = j.at("train").get<bool>();
        c.dropout.seed = j.at("dropout_seed").get<std::uint64_t>();
    }
    return c;
}

const attn::tensor* find_tensor(const attn::stage& st, const std::string& name) {
    for (const auto& t : st.tensors)
        if (t.name == name) return &t;
    return nullptr;
}

std::string shape_string(const std::vector<std::size_t>& shape) {
    std::ostringstream os;
    os << '[';
    for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
    return os.str() + ']';
}

// ----------------------------------------------------------------------------
// comparing

/// One value: the fixture's expectation `e` (possibly NaN or ±inf) against attn's `a`.
bool value_matches(double e, double a) {
    if (std::isnan(e)) return std::isnan(a);
    if (std::isinf(e)) return a == e;
    if (!std::isfinite(a)) return false;
    return std::fabs(a - e) <= abs_tol + rel_tol * std::fabs(e);
}

/// Compares one tensor with its reference, like llm.c's check_tensor: the shape, the element
/// type and every value; on a mismatch the message names the tensor, the first few flat
/// indices with expected and actual values, the number of mismatches and the max |diff|.
void check_tensor(const attn::tensor& actual, const ordered_json& expected, const std::string& label) {
    const auto shape = expected.at("shape").get<std::vector<std::size_t>>();
    const ordered_json& data = expected.at("data");
    const std::vector<std::size_t> actual_shape(actual.values.shape().begin(),
                                                actual.values.shape().end());

    CHECK_MESSAGE(actual_shape == shape, label << ": shape " << shape_string(actual_shape)
                                               << ", expected " << shape_string(shape));
    if (actual_shape != shape) return;
    CHECK_MESSAGE(actual.dims.size() == shape.size(),
                  label << ": " << actual.dims.size() << " dimension names for a rank-"
                        << shape.size() << " tensor");

    const bool boolean = !data.empty() && data.front().is_boolean();
    const auto want_type = boolean ? attn::element_type::boolean : attn::element_type::float32;
    CHECK_MESSAGE(actual.type == want_type,
                  label << ": element type should be " << (boolean ? "boolean" : "float32"));

    // row-major order, as tensor.flatten() in torch
    const std::vector<float> values(actual.values.begin(), actual.values.end());
    REQUIRE_MESSAGE(values.size() == data.size(),  // implied by the shape unless the fixture is broken
                    label << ": the fixture has " << data.size() << " values for its shape");

    std::size_t mismatches = 0, non_finite = 0;  // non_finite: NaN or ±inf where they differ
    std::size_t not_bit_equal = 0, beyond_one_ulp = 0;
    double max_diff = 0.0;                          // over elements where both are finite
    std::ostringstream listed;
    listed << std::setprecision(9);
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double e = number_from_json(data[i]);
        const double a = values[i];
        bool ok = boolean ? (a == e) : value_matches(e, a);
        if (!(static_cast<float>(e) == static_cast<float>(a) || (std::isnan(e) && std::isnan(a)))) ++not_bit_equal;
        if (std::nextafter(static_cast<float>(e), -INFINITY) > static_cast<float>(a) ||
            std::nextafter(static_cast<float>(e), INFINITY) < static_cast<float>(a))
            ++beyond_one_ulp;
        if (std::isfinite(e) && std::isfinite(a))
            max_diff = std::max(max_diff, std::fabs(a - e));
        else if (!ok)
            ++non_finite;
        if (ok) continue;
        if (mismatches++ < max_listed)
            listed << "\n    [" << i << "] expected " << json_text(data[i]) << ", actual " << a;
    }
    // Every value is PyTorch's to the bit (the same BLAS, aten's small-bmm loop, Sleef's expf
    // and aten's lane-wise sums in softmax) but one: with dk = 1, PyTorch's concat is a
    // strided view, so its output projection runs BLAS on another layout and sums otherwise.
    // Only for a kernel with a fixture set (see the top of this file).
    const bits_rule rule = position_rule ? position_rule(label)
                           : running_set().has_bits_of(label.substr(0, label.find(':'))) &&
                                     label.rfind("heads_eq_d_model: output.", 0) != 0
                               ? bits_rule::bit_equal
                               : bits_rule::tolerance_only;
    if (rule == bits_rule::bit_equal)
        CHECK_MESSAGE(not_bit_equal == 0, label << ": " << not_bit_equal << " values are within tolerance "
                                                << "but not bit-equal to PyTorch's");
    if (rule == bits_rule::within_ulp)  // SLEEF's cos and sin against the rounded double ones
        CHECK_MESSAGE(beyond_one_ulp == 0, label << ": " << beyond_one_ulp << " values differ from PyTorch's "
                                                 << "by more than 1 ulp");
    CHECK_MESSAGE(mismatches == 0, label << ": " << mismatches << " of " << values.size()
                                         << " values differ (" << non_finite
                                         << " of them NaN or inf), max finite |diff| "
                                         << max_diff << listed.str());
}

/// Every stage and tensor of one fixture against the trace, and nothing more in the trace.
void check_stages(const std::string& name, const ordered_json& doc, const attn::trace& tr) {
    const ordered_json& stages = doc.at("stages");

    for (const auto& item : stages.items()) {
        const std::string stage_name = item.key();  // not a structured binding: doctest's
        const ordered_json& tensors = item.value();  // messages capture it in a lambda (clang)
        const attn::stage* st = tr.find(stage_name);
        CHECK_MESSAGE(st != nullptr, name << ": stage \"" << stage_name << "\" is missing");
        if (st == nullptr) continue;
        for (const auto& [tensor_name, expected] : tensors.items()) {
            const std::string label = name + ": " + stage_name + "." + tensor_name;
            const attn::tensor* t = find_tensor(*st, tensor_name);
            CHECK_MESSAGE(t != nullptr, label << " is missing");
            if (t != nullptr) check_tensor(*t, expected, label);
        }
        for (const auto& t : st->tensors)
            CHECK_MESSAGE(tensors.contains(t.name),
                          name << ": " << stage_name << "." << t.name << " should not exist");
    }

    std::vector<std::string> want_order, got_order;
    for (const auto& item : stages.items()) want_order.push_back(item.key());
    for (const auto& st : tr.stages) {
        got_order.emplace_back(st.name());
        CHECK_MESSAGE(stages.contains(st.name()),
                      name << ": stage \"" << st.name() << "\" should not exist");
    }
    if (std::all_of(got_order.begin(), got_order.end(),
                    [&](const std::string& s) { return stages.contains(s); }) &&
        got_order.size() == want_order.size())
        CHECK_MESSAGE(got_order == want_order, name << ": stages are out of CLI.md's order");
}

void check_fixture(const std::string& name, const ordered_json& doc) {
    attn::trace tr;
    try {
        tr = run(config_from_json(doc.at("config")));
    } catch (const std::exception& e) {
        FAIL_CHECK(name << ": " << e.what());
        return;
    }
    check_stages(name, doc, tr);
}

/// A case of file_inputs/: the files named in "files", the size flags of "size_flags" (only
/// sizes no file implies), the other settings of "config"; the sizes must come out of the
/// files as the fixture's config says.
void check_file_case(const fs::path& dir, const ordered_json& doc) {
    const std::string name = dir.filename().string();
    const attn::config want = config_from_json(doc.at("config"));
    attn::input_paths paths;
    for (const auto& [flag, file] : doc.at("files").items()) {
        const std::string path = (dir / file.get<std::string>()).string();
        if (flag == "input") paths.input = path;
        else if (flag == "kv_input") paths.kv_input = path;
        else if (flag == "params") paths.params = path;
        else if (flag == "q") paths.q = path;
        else if (flag == "k") paths.k = path;
        else if (flag == "v") paths.v = path;
        else if (flag == "mask") paths.mask = path;
        else FAIL_CHECK(name << ": unknown flag " << flag);
    }
    attn::config base = want;
    base.batch = base.seq = base.kv_seq = base.d_model = base.d_in = base.d_kv_in = 1;  // the files decide
    attn::trace tr;
    attn::loaded_inputs loaded;
    try {
        attn::size_flags flags;
        const ordered_json& given_sizes = doc.at("size_flags");
        if (given_sizes.contains("batch")) flags.batch = given_sizes.at("batch").get<std::int64_t>();
        if (given_sizes.contains("seq")) flags.seq = given_sizes.at("seq").get<std::int64_t>();
        loaded = attn::load_inputs(base, flags, paths);
        const attn::inputs in = attn::draw_inputs(loaded.cfg, std::move(loaded.given));
        tr = attn::compute_trace(loaded.cfg, in);
    } catch (const std::exception& e) {
        FAIL_CHECK(name << ": " << e.what());
        return;
    }
    const attn::config& got = loaded.cfg;
    CHECK_MESSAGE(got.batch == want.batch, name << ": B " << got.batch);
    CHECK_MESSAGE(got.seq == want.seq, name << ": Sq " << got.seq);
    CHECK_MESSAGE(got.kv_seq == want.kv_seq, name << ": Sk " << got.kv_seq);
    CHECK_MESSAGE(got.d_model == want.d_model, name << ": D " << got.d_model);
    if (!got.sources.from_projections) {
        CHECK_MESSAGE(got.d_in == want.d_in, name << ": Din " << got.d_in);
        CHECK_MESSAGE(got.d_kv_in == want.d_kv_in, name << ": Dkv " << got.d_kv_in);
    }
    const bool has_nan_input = name.find("nan") != std::string::npos;
    const auto about_non_finite = std::count_if(loaded.warnings.begin(), loaded.warnings.end(), [](const auto& w) {
        return w.text.find("NaN or infinite") != std::string::npos;
    });
    CHECK_MESSAGE(about_non_finite == (has_nan_input ? 1 : 0), name << ": warnings about NaN in the files");
    check_stages(name, doc, tr);
}

}  // namespace

// ----------------------------------------------------------------------------

TEST_SUITE("fixtures") {

TEST_CASE("the fixtures hold a set for the running OpenBLAS kernel, or bits are not checked") {
    REQUIRE_MESSAGE(fs::is_regular_file(kernel_index), "no " << kernel_index.string()
                    << "; run /usr/bin/python3 tests/reference/make_fixtures.py");
    const fixture_set& set = running_set();
    if (set.bits_checked())
        MESSAGE("OpenBLAS kernel " << set.kernel << ": fixture set " << set.name
                                   << ", values must be bit-equal to PyTorch's");
    else
        MESSAGE("OpenBLAS kernel " << set.kernel << " has no fixture set in " << kernel_index.string()
                << ": values are checked to 1e-5 abs + 1e-5 rel against the Haswell set, and bit "
                   "equality with PyTorch is NOT checked, because OpenBLAS's GEMM kernels round "
                   "differently; add the kernel to KERNELS in make_fixtures.py to check it");
    // an overlay only replaces files of the Haswell set
    for (const auto& entry : fs::recursive_directory_iterator(reference_dir / "openblas")) {
        if (!entry.is_regular_file() || entry.path() == kernel_index || entry.path() == not_made_index) continue;
        const fs::path relative = fs::relative(entry.path(), reference_dir / "openblas");
        fs::path replaced;  // the path without its <Set>/
        for (auto part = std::next(relative.begin()); part != relative.end(); ++part) replaced /= *part;
        CHECK_MESSAGE(fs::is_regular_file(reference_dir / replaced),
                      entry.path().string() << " replaces no file of the Haswell set");
    }
}

TEST_CASE("every stage of every PyTorch fixture matches, and no stage is extra") {
    const auto paths = fixture_paths();
    REQUIRE_MESSAGE(!paths.empty(), "no fixtures in " << fixture_dir.string()
                                    << "; run /usr/bin/python3 tests/reference/make_fixtures.py");
    for (const auto& path : paths) {
        const std::string name = path.stem().string();
        const fs::path file = running_set().file("fixtures/" + name + ".json");
        ordered_json doc;
        try {
            doc = read_ordered_json(file.string());
        } catch (const std::exception& e) {
            FAIL_CHECK(name << ": cannot read the fixture: " << e.what());
            continue;
        }
        CHECK_MESSAGE(doc.at("name").get<std::string>() == name,
                      file.string() << " is named \"" << doc.at("name").get<std::string>() << '"');
        check_fixture(name, doc);
    }
}

TEST_CASE("every stage of every --pos fixture matches PyTorch: to the bit before cos and sin, within 1 ulp at them") {
    const fixture_set& set = running_position_set();
    if (!set.bits_checked())
        MESSAGE("OpenBLAS kernel " << set.kernel << " has no position fixture set: checked to the tolerance only");
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(position_dir / "Haswell"))
        if (entry.path().extension() == ".json") paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    REQUIRE(paths.size() >= 7);
    for (const auto& path : paths) {
        const std::string name = path.stem().string();
        const fs::path file = position_dir / (set.bits_checked() ? set.name : "Haswell") / path.filename();
        const ordered_json doc = read_ordered_json(file.string());
        // stages from positions (sinusoidal) or rope on read cos and sin: 1 ulp there, the tolerance after
        bool after_trig = false;
        position_rule = [&](const std::string& label) {
            const std::string tensor = label.substr(name.size() + 2);  // "rope.cos"
            if (tensor == "rope.cos" || tensor == "rope.sin" || tensor == "positions.pe" || tensor == "positions.pe_kv") {
                after_trig = true;
                if (!set.bits_checked()) return bits_rule::tolerance_only;
                return attn::torch_trig_is_sleef() ? bits_rule::bit_equal : bits_rule::within_ulp;
            }
            if (!set.bits_checked()) return bits_rule::tolerance_only;
            return after_trig && !attn::torch_trig_is_sleef() ? bits_rule::tolerance_only : bits_rule::bit_equal;
        };
        check_fixture(name, doc);
        if (name.find("alibi") != std::string::npos) CHECK_MESSAGE(!after_trig, name << ": ALiBi has no cos or sin");
        else CHECK_MESSAGE(after_trig, name << ": the fixture should hold cos and sin");
    }
    position_rule = nullptr;
}

TEST_CASE("tensors from .npy, .npz and .json files give every stage PyTorch gives") {
    const fs::path dir = reference_dir / "file_inputs";
    std::vector<fs::path> cases;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.is_directory()) cases.push_back(entry.path());
    std::sort(cases.begin(), cases.end());
    REQUIRE(cases.size() >= 7);
    for (const auto& case_dir : cases) {
        const fs::path expected = running_set().file("file_inputs/" + case_dir.filename().string() + "/expected.json");
        check_file_case(case_dir, read_ordered_json(expected.string()));
    }
}

TEST_CASE("softmax: allowed rows sum to 1, masked keys get exactly 0, empty rows are NaN, uniform or 0 (--safe-softmax)") {
    // With a -inf fill exp(-inf) = 0; with -1e9 exp(-1e9 - max) underflows to exactly 0 in
    // float32 too. A row with no allowed key: NaN with -inf (as PyTorch), uniform 1/Sk with a
    // finite fill; the trace warns about it (attention.hpp).
    for (const auto& path : fixture_paths()) {
        const std::string name = path.stem().string();
        attn::config c;
        attn::trace tr;
        try {
            c = config_from_json(read_ordered_json(path.string()).at("config"));
            tr = run(c);
        } catch (const std::exception& e) {
            FAIL_CHECK(name << ": " << e.what());
            continue;
        }
        const attn::stage* softmax = tr.find("softmax");
        CHECK_MESSAGE(softmax != nullptr, name << ": no softmax stage");
        if (softmax == nullptr || find_tensor(*softmax, "weights") == nullptr) continue;
        const auto& w = find_tensor(*softmax, "weights")->values;  // [B,H,Sq,Sk]
        const attn::stage* mask_stage = tr.find("mask");
        CHECK_MESSAGE((mask_stage != nullptr) == c.mask.any(), name << ": mask stage presence");
        const attn::strided_values* mask = nullptr;  // [B,1,Sq,Sk]
        if (mask_stage != nullptr && find_tensor(*mask_stage, "mask") != nullptr)
            mask = &find_tensor(*mask_stage, "mask")->values;
        if (w.dimension() != 4 || (mask != nullptr && mask->dimension() != 4)) {
            FAIL_CHECK(name << ": weights or mask do not have 4 axes");
            continue;
        }
        const std::size_t B = w.shape(0), H = w.shape(1), Sq = w.shape(2), Sk = w.shape(3);

        std::size_t bad_sum = 0, bad_zero = 0, bad_empty = 0, empty_rows = 0;
        double worst_sum = 1.0;
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < Sq; ++i) {
                    auto allowed = [&](std::size_t j) { return !mask || (*mask)(b, 0, i, j) != 0.0f; };
                    std::size_t n_allowed = 0;
                    double sum = 0.0;
                    for (std::size_t j = 0; j < Sk; ++j) {
                        n_allowed += allowed(j);
                        sum += w(b, h, i, j);
                    }
                    if (n_allowed == 0) {
                        ++empty_rows;
                        for (std::size_t j = 0; j < Sk; ++j) {
                            const float wij = w(b, h, i, j);
                            const bool ok = c.safe_softmax      ? wij == 0.0f  // torch._safe_softmax
                                            : std::isinf(c.fill) ? std::isnan(wij)
                                                                 : std::fabs(wij - 1.0 / double(Sk)) <= 1e-6;
                            bad_empty += !ok;
                        }
                        continue;
                    }
                    if (!(std::fabs(sum - 1.0) <= 1e-5)) {
                        ++bad_sum;
                        if (!(std::fabs(sum - 1.0) <= std::fabs(worst_sum - 1.0))) worst_sum = sum;
                    }
                    for (std::size_t j = 0; j < Sk; ++j)
                        if (!allowed(j)) bad_zero += w(b, h, i, j) != 0.0f;
                }
        CHECK_MESSAGE(bad_sum == 0, name << ": " << bad_sum << " rows do not sum to 1 (worst "
                                         << std::setprecision(9) << worst_sum << ")");
        CHECK_MESSAGE(bad_zero == 0, name << ": " << bad_zero << " masked weights are not exactly 0");
        CHECK_MESSAGE(bad_empty == 0, name << ": " << bad_empty << " weights in rows with no allowed key are not "
                                           << std::string(c.safe_softmax ? "0 (safe softmax)"
                                                          : std::isinf(c.fill) ? "NaN" : "1/Sk"));
        if (empty_rows > 0)
            CHECK_MESSAGE(!tr.warnings.empty(),
                          name << ": " << empty_rows << " rows with no allowed key but no warning");
    }
}

}  // TEST_SUITE("fixtures")
