#pragma once
// What the unit tests share: scratch folders and files, the reference answers under
// tests/reference, runs of a config, stages made by hand, and tensor comparisons.
// JSON is parsed and written in support.cpp only, so nlohmann's parser and serializer
// are compiled once rather than in every suite that reads a reference file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/trace.hpp"
#include "attn/io/tensor_file.hpp"

// --- files ---------------------------------------------------------------------------

/// tests/reference/<name>: what the scripts there made with PyTorch and NumPy.
std::string reference_path(const std::string& name);

/// tests/reference/io/: the reader fixtures (make_io_fixtures.py).
inline const std::string io_dir = reference_path("io/");

/// The bytes of the file at `path`, which must exist.
std::string file_bytes(const std::string& path);

/// $TMPDIR/attn-test-<suite>-<pid>, made empty, and removed when this goes out of scope.
struct scratch_dir {
    std::filesystem::path path;

    explicit scratch_dir(const std::string& suite)
        : path(std::filesystem::temp_directory_path() / ("attn-test-" + suite + "-" + std::to_string(getpid()))) {
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~scratch_dir() { std::filesystem::remove_all(path); }
    scratch_dir(const scratch_dir&) = delete;
    scratch_dir& operator=(const scratch_dir&) = delete;

    std::string operator/(const std::string& name) const { return (path / name).string(); }
    std::size_t entries() const;
    /// The `.attn-XXXXXX` temporaries (output_file.hpp) in the folder.
    std::size_t temporaries() const;
};

// --- JSON ------------------------------------------------------------------------------

/// The document in the file at `path`; throws when it cannot be read or parsed.
nlohmann::json read_json(const std::string& path);
nlohmann::ordered_json read_ordered_json(const std::string& path);  // keeping the key order

/// The document `text`; throws when it is not JSON.
nlohmann::json parse_json(const std::string& text);
nlohmann::ordered_json parse_ordered_json(const std::string& text);  // keeping the key order

/// `j` as compact text (json.dumps(j, separators=(",", ":"))).
std::string json_text(const nlohmann::json& j);
std::string json_text(const nlohmann::ordered_json& j);

// --- runs and stages -----------------------------------------------------------------------

using names = std::vector<std::string>;

/// The trace of `c` (validated), its inputs drawn as `attn trace` draws them, except `given`.
attn::trace run(const attn::config& c, attn::given_inputs given = {});

/// The names of the trace's stages, in order; of a stage's tensors, in order.
names stage_names(const attn::trace& t);
names tensor_names(const attn::stage& s);

/// A stage built by hand: the stage_table entry `name` (which must exist) with `tensors`.
attn::stage make_stage(std::string_view name, std::vector<attn::tensor> tensors);

// --- tensors ---------------------------------------------------------------------------------

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float not_a_number = std::numeric_limits<float>::quiet_NaN();

/// The dimensions of a [batch, head, query, key] tensor (scores, weights, the mask).
inline const std::vector<std::string> bhqk = {"batch", "head", "query", "key"};

/// The float's bits, to compare values exactly (NaN payloads, -0).
std::uint32_t bits(float f);

/// The values of `t` in row-major order.
std::vector<float> values_of(const attn::loaded_tensor& t);

/// `values` as a tensor read from a file, as an answer to check.
attn::loaded_tensor answer_of(xt::xarray<float> values);

/// Same shape, same flags, same values (NaN where NaN).
void check_same(const attn::loaded_tensor& a, const attn::loaded_tensor& b);

// --- reference fixtures shared by two suites ----------------------------------------------

/// tests/reference/mistakes (make_mistake_fixtures.py): for two configs, the right tensor
/// and, per mistake, the wrong one at the stage where it is made and at later stages.
namespace mistake_fixtures {

struct answer {
    std::string config_name, mistake, stage, tensor, made_at, file;  // mistake "none": the right answer
    int way;                                                          // config::mistake_variant
    attn::config cfg;  // as the CLI would make it from the index's args
};

std::vector<answer> all();
attn::loaded_tensor read(const answer& a);

}  // namespace mistake_fixtures

/// tests/reference/strides.json (make_strides_fixtures.py): PyTorch's strides, contiguity and
/// shared storage of every stage tensor for a few runs.
namespace strides_fixture {

using json = nlohmann::ordered_json;  // the stages in CLI.md's order

/// The cases: [{"name", "config", "stages": {stage: {tensor: {"shape", "strides",
/// "contiguous", "storage"}}}}].
const json& cases();

/// The trace of a case, its inputs drawn from the seed as `attn trace` draws them.
attn::trace run(const json& one_case);

}  // namespace strides_fixture
