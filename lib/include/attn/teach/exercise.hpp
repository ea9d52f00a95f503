#pragma once
// attn exercise: classroom exercises, one JSON file each in share/attn/exercises/,
// with a variant per student (their own numbers, from a seed derived from their ID).
//
// An exercise file (every key but "tolerance" and "source" required):
//   { "number": 3, "id": "causal-mask", "title": "A causal mask",
//     "source": "seed notebook 000",
//     "task": ["paragraph", "paragraph", ...],
//     "config": { "seq": 5, "heads": 2, "mask": "causal", "seed": 3 },  // attn's config keys as in
//                  // the trace JSON's "config"; those left out take attn trace's defaults
//     "given": ["scaled.scaled"],                  // stage.tensor, handed to the student
//     "answer": { "stage": "masked", "tensor": "masked", "shape": [1,2,5,5] },
//               // or a layout (layout_answer.hpp): { "kind": "shapes" }, every stage's shape;
//               // { "kind": "strides", "stage": "transpose", "tensor": "k", "shape": [...] }
//     "hints": ["a nudge", "more", "almost the code"],
//     "mistakes": ["mask_inverted", "fill_value",   // the diagnoses that apply (mistake ids),
//                  {"id": "forgot_padding", "like": "causal_only", "message": "..."}],  // and the teacher's own
//     "tolerance": { "atol": 1e-3, "rtol": 1e-3 } }  // optional: for answers worked by hand
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attn/compute/config.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/mistake.hpp"
#include "attn/compute/trace.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/teach/check.hpp"

namespace attn {

/// What an exercise asks for: a tensor's values (checked as attn check does), the shapes
/// after every stage, or one tensor's strides (the last two answered as JSON, layout_answer.hpp).
enum class answer_kind { tensor, shapes, strides };

/// A mistake a teacher defines in an exercise file: an id of their own, the diagnosis it is
/// like (own_mistake_likes), optionally one way of it, and what exercise check then says.
struct own_mistake {
    std::string id;       // "forgot_padding": snake_case, not a built-in diagnosis id
    std::string like;     // "causal_only"
    std::optional<int> way;  // only that way of `like` (mistake_variants); any when empty
    std::string message;  // printed instead of attn's
};

/// The diagnosis ids an own mistake may be like: every mistake id, planes_transposed, weight_where_masked,
/// zero_where_allowed, rows_not_normalized and right_values_other_shape.
const std::vector<std::string>& own_mistake_likes();

struct exercise {
    int number = 0;                  // 1, 2, ...: what `attn exercise show N` takes
    std::string id;                  // "causal-mask": stable, also accepted for N
    std::string title;
    std::string source;              // which seed notebook it comes from; may be empty
    std::vector<std::string> task;   // paragraphs
    config cfg;                      // the run, with the exercise's own seed
    std::vector<std::string> given;  // "scaled.scaled": the tensors handed out, as stage.tensor
    answer_kind kind = answer_kind::tensor;
    std::string answer_stage, answer_tensor;  // tensor and strides: which tensor; empty for shapes
    std::vector<std::size_t> answer_shape;
    std::vector<std::string> hints;  // progressively more explicit
    std::vector<mistake> mistakes;
    std::vector<own_mistake> own_mistakes;  // the objects of "mistakes"
    check_tolerance tolerance;
    std::string path;                // the file it was read from
};

/// Reads one exercise file. Throws attn::error "<path>: ..." naming the key that is
/// missing or wrong, a config attn cannot run, a given tensor or answer the run lacks.
/// With `budget` (--max-memory), the file's size is checked against it before it is read,
/// and its parsed values as they are built (parse_json_document).
exercise read_exercise(const std::string& path, const read_budget* budget = nullptr);

/// Every exercise (*.json) in `dir`, by number. A *.json that is not a regular file (or a
/// link to one) is not read (a FIFO would block for ever): its path goes into `skipped`.
/// Throws attn::error when `dir` cannot be read or two exercises share a number or an id.
/// Each file is read within `budget`, as read_exercise.
std::vector<exercise> read_exercises(const std::string& dir, std::vector<std::string>* skipped = nullptr,
                                     const read_budget* budget = nullptr);

/// The first of `candidates` (share directories, e.g. $ATTN_SHARE_DIR, the source
/// tree's share/attn, the install prefix's) that holds an exercises/ folder, as
/// "<candidate>/exercises"; empty candidates are skipped. Throws attn::error listing
/// where it looked when none does.
std::string find_exercise_dir(const std::vector<std::string>& candidates);

/// The exercise numbered `which` ("3") or with the id `which` ("causal-mask"); throws
/// usage_error "exercise 99: no such exercise; ..." naming the ones there are.
const exercise& find_exercise(const std::vector<exercise>& all, std::string_view which);

/// The seed of `student`'s variant: FNV-1a (64-bit) of "<exercise id>:<student id>",
/// XOR the exercise's seed, modulo 2^31 (a torch.manual_seed value every tool takes).
/// The same ID always gets the same seed; an empty ID gets the exercise's own seed.
/// With a class `secret`: FNV-1a (64-bit) of "<secret>\n<exercise id>:<student id>",
/// modulo 2^31, for every ID (the empty one too), so only the secret's holder can
/// make the numbers again.
std::uint64_t student_seed(const exercise& e, std::string_view student, std::string_view secret = {});

/// The class secret's fingerprint, written into each hand-out's exercise.json so that
/// grading with another secret (or none) is one clear error: the first 32 bits of
/// FNV-1a-64("attn class secret fingerprint\n<secret>"), as 8 hex digits ("" without a
/// secret). The label comes first, so the fingerprint cannot be unwound into the hash
/// state the seeds start from, and 32 bits tell secrets apart without saying more.
std::string secret_fingerprint(std::string_view secret);

/// One tensor handed out: its stage.tensor key, its file name, the tensor itself.
struct given_tensor {
    std::string key;   // "scaled.scaled"
    std::string name;  // "scaled": the file name (DIR/scaled.npy) and the name in the task
    tensor values;
};

/// An exercise as one student gets it: their config (seed), the inputs drawn from it,
/// the run, and the given tensors taken from the run.
struct exercise_variant {
    const exercise* ex = nullptr;
    std::string student;  // empty: the exercise's own numbers
    bool secret = false;  // the seed comes from a class secret: renderers never print it
    std::string secret_fingerprint;  // secret_fingerprint(the secret); "" without one
    config cfg;
    inputs in;
    trace run;
    std::vector<given_tensor> given;
};

/// Draws `student`'s inputs and computes their run. Throws attn::error when the
/// exercise's answer shape is not the run's (a broken exercise file).
exercise_variant make_variant(const exercise& e, std::string_view student, std::string_view secret = {});

/// `answer` against the variant's answer tensor, within the exercise's tolerance
/// (attn::check_answer: the same report as attn check); a diagnosis an own mistake is
/// like becomes that mistake: its id and message, with diagnosis_like the built-in id.
check_report check_exercise(const exercise_variant& v, const loaded_tensor& answer);

/// The report check_exercise gives an answer of `answer_shape` whose element count is not the
/// answer tensor's, known from the shape alone (check_answer_shape: decide it from an .npy
/// header before reading data that may be gigabytes); nullopt when the data must be compared.
std::optional<check_report> check_exercise_shape(const exercise_variant& v, const std::vector<std::size_t>& answer_shape);

}  // namespace attn
