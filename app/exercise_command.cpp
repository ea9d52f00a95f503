// `attn exercise`: list, show N, check N. Wiring only: the exercises are read and
// varied in lib/teach/exercise, printed by lib/render/render_exercise, handed out
// by lib/render/exercise_folder, graded by lib/teach/check.
#include "commands.hpp"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/io/answer_file.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/render/exercise_folder.hpp"
#include "attn/render/render_check.hpp"
#include "attn/render/render_exercise.hpp"
#include "attn/teach/exercise.hpp"
#include "attn/teach/handout_secret.hpp"
#include "attn/teach/student_id.hpp"
#include "attn/text/printable_text.hpp"
#include "exit_status.hpp"
#include "help_format.hpp"
#include "messages.hpp"
#include "run_flags.hpp"
#include "share_dirs.hpp"
#include "standard_output.hpp"

namespace attn_app {
namespace {

struct exercise_options {
    std::string which;    // N: a number or an id
    std::string student;  // --student ID; empty: the exercise's own numbers
    bool student_given = false;  // --student was given, even as --student '' (an error)
    std::string format = "table";
    std::string out;      // show --out DIR
    std::string answer;   // check --answer FILE
    std::string secret_file;  // --secret FILE; else $ATTN_CLASS_SECRET
    int precision = 4;
    std::string color = "auto";  // show --color WHEN, for the table
    int hint = 0;         // show --hint N: only hint N
    bool no_hints = false;  // show --no-hints: the hints left out of what is shown or handed out
    std::string max_memory;  // --max-memory, as run_flags.hpp reads it
};

/// The exercises folder: $ATTN_SHARE_DIR's, else attn's own. An $ATTN_SHARE_DIR without
/// exercises/ is passed over with a note: silently, a teacher would take attn's exercises for theirs.
std::string exercise_dir() {
    const std::string dir = attn::find_exercise_dir(share_dirs());
    const char* env = std::getenv("ATTN_SHARE_DIR");
    if (env != nullptr && *env != '\0') {
        std::error_code ec;
        if (!std::filesystem::is_directory(std::filesystem::path(env) / "exercises", ec))
            std::cerr << "attn: note: ATTN_SHARE_DIR=" << attn::printable_text(env)
                      << " holds no exercises/ folder; using " << attn::printable_text(dir) << "\n";
    }
    return dir;
}

/// Every exercise, each file read within --max-memory; a *.json that is not a regular file
/// (a FIFO) is skipped with a note.
std::vector<attn::exercise> all_exercises(const exercise_options& o) {
    std::vector<std::string> skipped;
    const attn::read_budget budget = read_budget_of(memory_limit(o.max_memory));
    std::vector<attn::exercise> all = attn::read_exercises(exercise_dir(), &skipped, &budget);
    for (const std::string& path : skipped)
        std::cerr << "attn: note: " << attn::printable_text(path) << ": not a regular file; skipped\n";
    return all;
}

/// The class secret: --secret FILE's text (without trailing white space), else
/// $ATTN_CLASS_SECRET; empty when there is none.
std::string class_secret(const exercise_options& o) {
    if (o.secret_file.empty()) {
        const char* env = std::getenv("ATTN_CLASS_SECRET");
        if (env != nullptr && *env == '\0')  // as from export ATTN_CLASS_SECRET=$(cat a-missing-file)
            throw attn::usage_error("ATTN_CLASS_SECRET is set but empty, which would turn the class secret off "
                                    "(the hand-out would state its seed): set it to the secret, or unset it "
                                    "for work that is not graded");
        return env != nullptr ? env : "";
    }
    const attn::read_budget budget = read_budget_of(memory_limit(o.max_memory));
    std::string text = attn::read_bounded_text(o.secret_file, "--secret " + o.secret_file, attn::max_secret_bytes,
                                               "64 KiB; a class secret is a line of text", &budget);
    text.erase(text.find_last_not_of(" \t\r\n") + 1);
    if (text.empty()) throw attn::error("--secret " + o.secret_file + ": the file is empty; expected the class secret");
    return text;
}

/// The exercise as this student gets it, with the class secret if there is one.
attn::exercise_variant student_variant(const std::vector<attn::exercise>& all, const exercise_options& o) {
    const std::string student = o.student_given ? attn::normalise_student_id(o.student) : std::string();
    const attn::exercise& ex = attn::find_exercise(all, o.which);
    const std::uint64_t limit = memory_limit(o.max_memory);
    try {
        check_whole_run_memory(ex.cfg, limit);
    } catch (const attn::error& e) {
        throw attn::error(ex.path + ": " + e.what());
    }
    return attn::make_variant(ex, student, class_secret(o));
}

void run_list(const exercise_options& o) {
    const std::vector<attn::exercise> all = all_exercises(o);
    if (o.format == "json") attn::render_exercise_list_json(all, std::cout);
    else attn::render_exercise_list(all, std::cout);
}

void run_show(const exercise_options& o, const CLI::App& cmd) {
    if (!o.out.empty() && cmd.count("--format") > 0)
        throw attn::usage_error("--out " + o.out + " writes files (the tensors, task.md, exercise.json); --format " +
                                o.format + " is for printing: give one of them");
    std::vector<attn::exercise> all = all_exercises(o);
    if (cmd.count("--hint") > 0 && !o.no_hints) {
        if (!o.out.empty() || cmd.count("--format") > 0)
            throw attn::usage_error("--hint " + std::to_string(o.hint) + " prints one hint; " +
                                    (o.out.empty() ? "--format " + o.format : "--out " + o.out) +
                                    " shows the whole exercise: give one of them");
        attn::render_exercise_hint(attn::find_exercise(all, o.which), o.hint, std::cout);
        return;
    }
    if (o.no_hints) {
        if (cmd.count("--hint") > 0)
            throw attn::usage_error("--no-hints leaves the hints out; --hint " + std::to_string(o.hint) +
                                    " prints one: give one of them");
        for (attn::exercise& e : all) e.hints.clear();
    }
    const attn::exercise_variant v = student_variant(all, o);
    if (!o.out.empty()) {
        attn::write_exercise_folder(v, o.out, "--out " + o.out);
        std::cout << attn::printable_text(o.out) << ":";
        for (const attn::given_tensor& g : v.given) std::cout << ' ' << g.name << ".npy " << g.name << ".json";
        std::cout << " task.md exercise.json\n";
    } else if (o.format == "json") {
        attn::render_exercise_json(v, std::cout);
    } else {
        attn::render_options options;
        options.precision = o.precision;
        options.color = color_on_standard_output(o.color);
        attn::render_exercise_table(v, options, std::cout);
    }
}

void run_check(const exercise_options& o) {
    const std::vector<attn::exercise> all = all_exercises(o);
    const attn::exercise_variant v = student_variant(all, o);
    const bool json = o.format == "json";
    const std::string what = "--answer " + o.answer;
    attn::read_budget budget = read_budget_of(memory_limit(o.max_memory));  // the answer's file read within it too
    if (const auto mismatch = attn::handout_secret_mismatch(v, o.answer, &budget)) {  // no verdict: not the hand-out's numbers
        if (json) attn::render_check_error_json(*mismatch, std::cout, "wrong_secret");
        throw attn::error(*mismatch);
    }
    if (v.ex->kind != attn::answer_kind::tensor) {  // shapes or strides: a JSON answer
        const attn::layout_report r =
            read_answer(json, [&] { return attn::check_layout_answer_file(v, o.answer, what, &budget); });
        if (json) attn::render_layout_report_json(v, r, std::cout);
        else attn::render_layout_report_table(v, r, std::cout);
        if (!r.match) throw exit_status{1};
        return;
    }
    std::optional<attn::check_report> by_shape;  // an .npy or .npz answer's count from its header, before its data
    const std::string& stage = v.ex->answer_stage;
    const std::string& tensor = v.ex->answer_tensor;
    if (const auto shape = read_answer(json, [&] { return attn::answer_file_shape(o.answer, what, stage, tensor); }))
        by_shape = attn::check_exercise_shape(v, *shape);
    const attn::check_report r = by_shape ? *by_shape : attn::check_exercise(v, read_answer(json, [&] {
        return attn::read_answer_file(o.answer, what, stage, tensor, &budget);
    }));
    if (json) attn::render_check_report_json(v, r, std::cout);
    else attn::render_check_report_table(v, r, std::cout);
    if (!r.match) throw exit_status{1};
}

void add_exercise_argument(CLI::App* cmd, exercise_options& o) {
    cmd->add_option("N", o.which, "the exercise: its number or its id (attn exercise list shows both)")
        ->required()
        ->type_name("");
}

void add_student_flag(CLI::App* cmd, exercise_options& o) {
    cmd->add_option("--student", o.student,
                    "the student's own variant: the same task with their own numbers, from a seed made of "
                    "the exercise and ID: letters of any script, digits, '.', '_', '-', '@', '+' (an e-mail address is "
                    "lowercased); without it, the exercise's own numbers")
        ->type_name("ID");
    cmd->add_option("--secret", o.secret_file,
                    "a file holding the class secret (else $ATTN_CLASS_SECRET): every student's numbers then "
                    "come from the secret, the exercise and the ID, and no seed is shown, so only the secret's "
                    "holder can make the answer again; grade with the same secret")
        ->transform(path_name())->type_name("FILE");
}

void add_format_flag(CLI::App* cmd, exercise_options& o, const std::string& what) {
    add_choice(cmd, "--format", o.format, {"table", "json"}, "FORMAT", what);
}

}  // namespace

void setup_exercise(CLI::App& app) {
    auto o = std::make_shared<exercise_options>();
    CLI::App* cmd = app.add_subcommand(
        "exercise", "Classroom exercises with a variant per student, and a grader.");
    cmd->require_subcommand(1);
    cmd->footer(
        wrap("Each exercise asks for one tensor of multi-head attention (a stage of attn trace: the scores, "
             "a masked row, the weights, the merged heads, ...) and hands out the tensors to start from. "
             "They follow the seed notebooks: Q·Kᵀ by hand, scaling, causal, padding and window masks, one "
             "softmax row, splitting and merging heads, cross-attention, a fully masked row (-inf or -1e9), "
             "a whole multi-head attention. Two ask for a layout instead, answered as .json: the shape after "
             "every stage ({\"projections\": [2,6,12], ...}) and the strides after the transpose ([a, b, c, d]).",
             help_width) +
        "\n\n" +
        wrap("A teacher hands out one variant per student: `show N --student ID --out DIR` writes the given "
             "tensors (.npy and .json), task.md and exercise.json into DIR. The student's numbers come from "
             "the seed FNV-1a-64(\"<exercise id>:<student ID>\") XOR the exercise's seed, mod 2^31, so the "
             "same ID always gets the same numbers and each student is graded against their own: "
             "`check N --student ID --answer FILE` (.npy or .json).",
             help_width) +
        "\n\n" +
        wrap("The handout states that seed, so a student can make their own answer with attn trace. For "
             "graded work, set a class secret (ATTN_CLASS_SECRET, or --secret FILE): the numbers then come "
             "from FNV-1a-64(\"<secret>\\n<exercise id>:<student ID>\") mod 2^31, no seed is shown, and "
             "check needs the same secret. An empty ATTN_CLASS_SECRET is refused (it would turn the secret off). "
             "Each hand-out's exercise.json carries the secret's fingerprint (\"secret_fingerprint\": 8 hex "
             "digits, the first 32 bits of FNV-1a-64(\"attn class secret fingerprint\\n<secret>\"); null "
             "without one): checking an answer saved beside its hand-out with another secret, or none, is one "
             "error and no verdict (--format json: {\"match\": null, \"error\": {\"id\": \"wrong_secret\", ...}}).",
             help_width) +
        "\n\n"
        "Examples:\n"
        "  attn exercise list\n"
        "  attn exercise show 3\n"
        "  attn exercise show causal-weights --student alice --out class/alice\n"
        "  attn exercise check 7 --student alice --answer class/alice/answer.npy\n"
        "  attn exercise check 7 --student alice --answer answer.npy --format json | jq .diagnosis\n\n" +
        wrap("The exercises are share/attn/exercises/*.json, found in $ATTN_SHARE_DIR (one without "
             "exercises/ is passed over with a note), next to the installed program, or in the source tree.",
             help_width) +
        "\n"
        "Exit status of check: 0 the answer matches, 1 it does not (or there is no verdict: a file\n"
        "cannot be read, or the hand-out beside the answer was made with another class secret; then\n"
        "stdout holds no report, and --format json prints {\"match\": null, \"error\": {\"id\":\n"
        "\"unreadable_answer\" or \"wrong_secret\", \"message\": ...}} where a mismatch has\n"
        "\"match\": false), 2 bad flags (an empty ATTN_CLASS_SECRET too).");

    CLI::App* list = cmd->add_subcommand("list", "List the exercises: number, id, what it asks for, title.");
    add_format_flag(list, *o, "table (one line each) or json");
    list->footer("Example:\n  attn exercise list --format json | jq -r '.exercises[].id'");
    list->callback([o] { run_list(*o); });

    CLI::App* show = cmd->add_subcommand(
        "show", "Show exercise N (task, tensors, folded hints), or hand it out.");
    add_exercise_argument(show, *o);
    add_student_flag(show, *o);
    add_format_flag(show, *o, "table (to read) or json (the task, the config and the given tensors' data)");
    show->add_option("--out", o->out,
                     "hand out instead of printing: write the given tensors as DIR/<name>.npy and "
                     "DIR/<name>.json, and DIR/task.md and DIR/exercise.json (each file whole or not at all)")
        ->transform(path_name("a folder name"))->type_name("DIR");
    show->add_option("--precision", o->precision, "digits after the decimal point in the table")
        ->default_val(4)
        ->transform(whole_number(0, 12))
        ->type_name("N");
    show->add_option("--hint", o->hint,
                     "print only hint N (1 is the gentlest; the last is nearly the solution), the same for "
                     "every student; the whole exercise prints the hints folded away")
        ->transform(whole_number(1, 99))
        ->type_name("N");
    add_choice(show, "--color", o->color, {"auto", "always", "never"}, "WHEN",
               "the table's headings in bold: auto (only on a terminal, never with NO_COLOR), always, never");
    show->add_flag("--no-hints", o->no_hints,
                   "leave the hints out: task.md, exercise.json (\"hints\": []) and the table have none, for a "
                   "test where they would give the answer away");
    add_max_memory_flag(show, o->max_memory);
    show->footer(
        "Examples:\n  attn exercise show 7 --student alice --out class/alice\n  attn exercise show 7 --hint 1\n"
        "  attn exercise show 7 --student alice --no-hints --out test/alice\n\n" +
        wrap("--out DIR is made one folder at a time without following a symbolic link anywhere in its path (a "
             "link planted in a student's folder is refused, named); a file planted in DIR under a hand-out "
             "file's name is replaced, never followed, but a read-only one is refused, as for every --out.",
             help_width));
    show->callback([o, show] {
        o->student_given = show->count("--student") > 0;
        run_show(*o, *show);
    });

    CLI::App* check = cmd->add_subcommand(
        "check", "Grade an answer against the student's own numbers, as attn check does.");
    add_exercise_argument(check, *o);
    check->add_option("--answer", o->answer,
                      "the answer: .npy (np.save), .npz (np.savez: its one array) or .json (nested lists, tensor.tolist()); for the layout exercises "
                      "(shapes, strides-after-transpose) a .json of shapes or strides, as `show` says")
        ->required()
        ->transform(path_name())->type_name("FILE");
    add_student_flag(check, *o);
    add_format_flag(check, *o,
                    "table (verdict, max error, diagnosis) or json (match, diagnosis {id, message}, shapes, "
                    "max_error)");
    add_max_memory_flag(check, o->max_memory);
    check->footer(
        "Example:\n  attn exercise check 7 --student alice --answer class/alice/answer.npy\n\n"
        "Exit status: 0 the answer matches, 1 it does not, or there is no verdict (the file cannot be\n"
        "read: \"error\" id unreadable_answer; another class secret than the hand-out's beside it:\n"
        "wrong_secret; --format json then has \"match\": null), 2 bad flags.");
    check->callback([o, check] {
        o->student_given = check->count("--student") > 0;
        run_check(*o);
    });
    for (CLI::App* sub : cmd->get_subcommands({})) sub->group("Commands");
}

}  // namespace attn_app
