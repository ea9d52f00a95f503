// attn exercise's output (render_exercise.hpp): the list, an exercise as a student
// gets it, the grade of an answer.
#include "attn/render/render_exercise.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/io/config_fields.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/render_table.hpp"
#include "attn/render/table_parts.hpp"
#include "attn/teach/layout_answer.hpp"
#include "attn/teach/stage_text.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/join.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::size_t text_columns = 88;

/// `text` wrapped at `width` columns, each line after `indent`.
std::string wrap_paragraph(const std::string& text, std::size_t width, const std::string& indent) {
    std::istringstream words(text);
    std::string word, out, line;
    while (words >> word) {
        if (!line.empty() && table::text_width(line) + 1 + table::text_width(word) + indent.size() > width) {
            out += indent + line + '\n';
            line.clear();
        }
        line += (line.empty() ? "" : " ") + word;
    }
    if (!line.empty()) out += indent + line + '\n';
    return out;
}

/// What the exercise asks for, in a few words: "softmax.weights", "transpose.k strides",
/// "shapes".
std::string answer_key(const exercise& e) {
    if (e.kind == answer_kind::shapes) return "shapes";
    return e.answer_stage + "." + e.answer_tensor + (e.kind == answer_kind::strides ? " strides" : "");
}

const char* kind_name(answer_kind k) {
    return k == answer_kind::shapes ? "shapes" : k == answer_kind::strides ? "strides" : "tensor";
}

/// The answer's file: a .npy for a tensor, a .json for a layout.
const char* answer_file(const exercise& e) { return e.kind == answer_kind::tensor ? "answer.npy" : "answer.json"; }

const tensor& answer_tensor(const exercise_variant& v) {
    return v.run.find(v.ex->answer_stage)->at(v.ex->answer_tensor);
}

/// "projections, view, ..., output": the stages a shapes answer names.
std::string shape_stage_names(const exercise_variant& v) {
    std::string names;
    for (const auto& [name, shape] : expected_shapes(v)) names += (names.empty() ? "" : ", ") + name;
    return names;
}

/// What to write, and in what form, for a layout answer (one line, no values given away).
std::string layout_answer_text(const exercise_variant& v) {
    const exercise& e = *v.ex;
    if (e.kind == answer_kind::shapes)
        return "The shape after every stage, as a JSON object {\"projections\": [...], ...} with the stages " +
               shape_stage_names(v) + " (q's shape for projections, view and transpose)";
    return "The strides of " + e.answer_stage + "." + e.answer_tensor + ", shape " + tensor_index_text(e.answer_shape) +
           ", as t.stride() reports them: a JSON list of " + std::to_string(e.answer_shape.size()) + " whole numbers";
}

/// The JSON "answer" of an exercise: {"kind", ["stage", "tensor", "shape", ("dims")]}.
ordered_json answer_json(const exercise& e, const tensor* answer) {
    ordered_json j{{"kind", kind_name(e.kind)}};
    if (e.kind == answer_kind::shapes) return j;
    j["stage"] = e.answer_stage;
    j["tensor"] = e.answer_tensor;
    j["shape"] = e.answer_shape;
    if (answer != nullptr) j["dims"] = answer->dims;
    return j;
}

std::string shape_of(const tensor& t) {
    return tensor_index_text(std::vector<std::size_t>(t.values.shape().begin(), t.values.shape().end()));
}

/// The variant's seed, or null when it comes from a class secret.
ordered_json seed_json(const exercise_variant& v) {
    return v.secret ? ordered_json(nullptr) : ordered_json(v.cfg.seed);
}

/// {"exercise", "id", "student", "seed", "match"}: how a report on an answer opens.
ordered_json report_head_json(const exercise_variant& v, bool match) {
    return {{"exercise", v.ex->number},
            {"id", v.ex->id},
            {"student", v.student.empty() ? ordered_json(nullptr) : ordered_json(v.student)},
            {"seed", seed_json(v)},
            {"match", match}};
}

/// "student alice (seed 1234)" or "the exercise's own numbers (seed 3)"; with a class
/// secret "student alice (numbers from the class secret)".
std::string whose_numbers(const exercise_variant& v) {
    const std::string seed = v.secret ? "numbers from the class secret" : "seed " + std::to_string(v.cfg.seed);
    return v.student.empty() ? "the exercise's own numbers (" + seed + ")" : "student " + v.student + " (" + seed + ")";
}

/// "attn exercise check 7 --student alice --answer answer.npy"
std::string check_command(const exercise_variant& v) {
    return "attn exercise check " + std::to_string(v.ex->number) + (v.student.empty() ? "" : " --student " + v.student) +
           " --answer " + answer_file(*v.ex);
}

/// The run with only the given tensors in it, for attn trace's table to print.
trace given_only(const exercise_variant& v) {
    trace t;
    t.cfg = v.cfg;
    for (const stage& s : v.run.stages) {
        stage kept = s;
        kept.tensors.clear();
        for (const given_tensor& g : v.given)
            if (g.key.rfind(std::string(s.name()) + ".", 0) == 0) kept.tensors.push_back(g.values);
        if (!kept.tensors.empty()) t.stages.push_back(std::move(kept));
    }
    return t;
}

/// An error or a tolerance to 3 significant digits: 0.000123, 1.5e-05, inf.
std::string error_text(double x) { return std::isinf(x) ? "inf" : significant_text(x, 3); }

}  // namespace

void render_exercise_list(const std::vector<exercise>& all, std::ostream& out) {
    std::size_t id_width = 2, answer_width = 8;
    for (const exercise& e : all) {
        id_width = std::max(id_width, e.id.size());
        answer_width = std::max(answer_width, answer_key(e).size());
    }
    out << " #  ";
    table::write_left(out, "id", id_width + 2, "", make_heading_style(false));
    table::write_left(out, "asks for", answer_width + 2, "", make_heading_style(false));
    out << "title\n";
    for (const exercise& e : all) {
        const std::string number = std::to_string(e.number);
        out << std::string(number.size() < 2 ? 2 - number.size() : 0, ' ') << number << "  ";
        table::write_left(out, e.id, id_width + 2, "", make_heading_style(false));
        table::write_left(out, answer_key(e), answer_width + 2, "", make_heading_style(false));
        out << e.title << '\n';
    }
}

void render_exercise_list_json(const std::vector<exercise>& all, std::ostream& out) {
    ordered_json list = ordered_json::array();
    for (const exercise& e : all)
        list.push_back({{"number", e.number},
                        {"id", e.id},
                        {"title", e.title},
                        {"answer", answer_json(e, nullptr)}});
    out << ordered_json{{"format", "attn.exercises/1"}, {"exercises", list}}.dump() << '\n';
}

void render_exercise_table(const exercise_variant& v, const render_options& options, std::ostream& out) {
    const exercise& e = *v.ex;
    const table::palette p = make_heading_style(options.color);
    out << p.bold << "Exercise " << e.number << " · " << e.id << " · " << e.title << p.reset << '\n';
    out << p.dim << "   " << whose_numbers(v) << (e.source.empty() ? "" : "; from " + e.source) << p.reset << "\n\n";
    for (const std::string& paragraph : e.task) out << wrap_paragraph(paragraph, text_columns, "   ") << '\n';
    out << p.bold << "Given" << p.reset << " (--out DIR writes each as DIR/<name>.npy and .json)\n\n";
    render_options given_options = options;
    given_options.full = true;  // a student needs every number
    given_options.stages = 0;
    given_options.seed_secret = v.secret;
    render_table(given_only(v), given_options, out);
    if (e.kind == answer_kind::tensor) {
        const tensor& answer = answer_tensor(v);
        out << '\n' << p.bold << "Your answer" << p.reset << ": " << answer_key(e) << ", shape "
            << tensor_index_text(e.answer_shape) << " [" << join(answer.dims, ", ") << "]\n";
        out << "   save it as .npy (np.save) or .json (nested lists) and check it:\n";
    } else {
        out << '\n' << p.bold << "Your answer" << p.reset << ": " << answer_key(e) << '\n'
            << wrap_paragraph(layout_answer_text(v) + ", saved as answer.json; check it:", text_columns, "   ");
    }
    out << "   " << check_command(v) << "\n\n";
    if (e.hints.empty()) return;
    out << p.bold << "Hints" << p.reset << ": " << e.hints.size()
        << ", each more explicit than the last, folded away; open one at a time:\n";
    out << "   attn exercise show " << e.number << " --hint 1\n";
}

void render_exercise_hint(const exercise& e, int n, std::ostream& out) {
    const int count = static_cast<int>(e.hints.size());
    if (n < 1 || n > count)
        throw usage_error("--hint " + std::to_string(n) + ": exercise " + std::to_string(e.number) + " has " +
                          (count == 0 ? std::string("no hints") : std::to_string(count) + " hints (1-" +
                                                                      std::to_string(count) + ")"));
    out << "Hint " << n << " of " << count << " · exercise " << e.number << " · " << e.id << '\n';
    out << wrap_paragraph(e.hints[static_cast<std::size_t>(n - 1)], text_columns, "   ");
    if (n < count) out << "   (more explicit: attn exercise show " << e.number << " --hint " << n + 1 << ")\n";
}

void render_exercise_json(const exercise_variant& v, std::ostream& out) {
    const exercise& e = *v.ex;
    ordered_json head{{"format", "attn.exercise/1"},
                      {"number", e.number},
                      {"id", e.id},
                      {"title", e.title},
                      {"source", e.source},
                      {"student", v.student.empty() ? ordered_json(nullptr) : ordered_json(v.student)},
                      {"seed", seed_json(v)},
                      {"secret_fingerprint", v.secret ? ordered_json(v.secret_fingerprint) : ordered_json(nullptr)},
                      {"task", e.task},
                      {"config", config_to_json(v.cfg)}};
    if (v.secret) head["config"]["seed"] = nullptr;
    std::string text = head.dump();
    text.pop_back();  // reopen the object to stream the tensors in
    out << text << ",\"given\":{";
    for (std::size_t i = 0; i < v.given.size(); ++i) {
        out << (i == 0 ? "" : ",") << ordered_json(v.given[i].key).dump() << ':';
        render_tensor_json(v.given[i].values, out);
    }
    std::vector<std::string> mistakes;
    for (const mistake m : e.mistakes) mistakes.emplace_back(mistake_id(m));
    for (const own_mistake& own : e.own_mistakes) mistakes.push_back(own.id);
    ordered_json tail{{"answer", answer_json(e, e.kind == answer_kind::shapes ? nullptr : &answer_tensor(v))},
                      {"tolerance", {{"atol", e.tolerance.atol}, {"rtol", e.tolerance.rtol}}},
                      {"hints", e.hints},
                      {"mistakes", mistakes}};
    text = tail.dump();
    out << "}," << text.substr(1) << '\n';
}

void render_exercise_task_md(const exercise_variant& v, std::ostream& out) {
    const exercise& e = *v.ex;
    out << "# Exercise " << e.number << ": " << e.title << "\n\n";
    out << "For " << whose_numbers(v) << (e.source.empty() ? "" : "; from " + e.source) << ".\n\n";
    for (const std::string& paragraph : e.task) out << wrap_paragraph(paragraph, 80, "") << '\n';
    out << "## Given\n\n";
    for (const run_line& line : run_summary(v.cfg, v.secret)) out << "    " << line.label << ": " << line.text << '\n';
    out << "\n| files | tensor | shape | dims |\n|---|---|---|---|\n";
    for (const given_tensor& g : v.given)
        out << "| `" << g.name << ".npy`, `" << g.name << ".json` | " << g.key << " | " << shape_of(g.values)
            << " | " << join(g.values.dims, ", ") << " |\n";
    out << "\n```python\nimport math\n\nimport numpy as np\nimport torch\n\n";
    for (const given_tensor& g : v.given)
        out << g.name << " = torch.from_numpy(np.load(\"" << g.name << ".npy\"))  # " << shape_of(g.values) << '\n';
    out << "\n# ... your code ...\n\n";
    if (e.kind == answer_kind::tensor) {
        const tensor& answer = answer_tensor(v);
        out << "np.save(\"answer.npy\", " << e.answer_tensor << ".numpy())  # " << tensor_index_text(e.answer_shape)
            << "\n```\n\n";
        out << "## Your answer\n\n";
        out << "`" << answer_key(e) << "`, shape " << tensor_index_text(e.answer_shape) << " ["
            << join(answer.dims, ", ") << "], saved as `answer.npy` (or `answer.json`, nested lists). Check it:\n\n";
    } else {
        out << "import json\njson.dump(answer, open(\"answer.json\", \"w\"))  # "
            << (e.kind == answer_kind::shapes ? "{\"projections\": [...], ...}" : "[...]") << "\n```\n\n";
        out << "## Your answer\n\n" << wrap_paragraph(layout_answer_text(v) + ", saved as `answer.json`. Check it:", 80, "")
            << '\n';
    }
    out << "    " << check_command(v) << "\n\n";
    if (e.hints.empty()) return;  // an exercise without hints, or handed out with --no-hints
    out << "## Hints\n\nOpen one at a time.\n";
    for (std::size_t i = 0; i < e.hints.size(); ++i)
        out << "\n<details><summary>Hint " << i + 1 << "</summary>\n\n" << e.hints[i]  // unwrapped: code stays on one line
            << "\n\n</details>\n";
}

void render_check_report_table(const exercise_variant& v, const check_report& r, std::ostream& out) {
    const std::string what = r.stage + "." + r.tensor + " of exercise " + std::to_string(v.ex->number) +
                             (v.student.empty() ? "" : " (student " + v.student + ")");
    out << "verdict    " << (r.match ? "match: " : "mismatch: ") << what << '\n';
    out << "max error  ";
    if (r.expected_shape != r.answer_shape)
        out << "none: the shape is " << tensor_index_text(r.answer_shape) << ", expected "
            << tensor_index_text(r.expected_shape) << (r.shape_note.empty() ? "" : " (" + r.shape_note + ")") << '\n';
    else
        out << error_text(r.max_error) << " at " << tensor_index_text(r.max_error_at) << " (allowed "
            << error_text(v.ex->tolerance.atol) << " + " << error_text(v.ex->tolerance.rtol) << "·|expected|)\n";
    out << "diagnosis  "
        << (r.match ? std::string("none")
                    : r.diagnosis_id + ": " + r.diagnosis_message +
                          (r.diagnosis_like.empty() ? "" : " (attn: " + r.diagnosis_like + ")"))
        << '\n';
}

void render_layout_report_table(const exercise_variant& v, const layout_report& r, std::ostream& out) {
    out << "verdict    " << (r.match ? "match: " : "mismatch: ") << answer_key(*v.ex) << " of exercise "
        << v.ex->number << (v.student.empty() ? "" : " (student " + v.student + ")") << '\n';
    if (r.match) out << "diagnosis  none\n";
    for (std::size_t i = 0; i < r.problems.size(); ++i)
        out << (i == 0 ? "diagnosis  " : "           ") << r.problems[i].id << ": " << r.problems[i].message << '\n';
}

void render_layout_report_json(const exercise_variant& v, const layout_report& r, std::ostream& out) {
    ordered_json problems = ordered_json::array();
    for (const layout_problem& p : r.problems)
        problems.push_back({{"stage", p.where.empty() ? ordered_json(nullptr) : ordered_json(p.where)},
                            {"id", p.id},
                            {"message", p.message}});
    ordered_json j = report_head_json(v, r.match);
    j["kind"] = kind_name(v.ex->kind);
    j["problems"] = problems;
    j["diagnosis"] = r.match ? ordered_json(nullptr)
                             : ordered_json{{"id", r.problems.front().id}, {"message", r.problems.front().message}};
    out << j.dump() << '\n';
}

void render_check_report_json(const exercise_variant& v, const check_report& r, std::ostream& out) {
    ordered_json j = report_head_json(v, r.match);
    j["stage"] = r.stage;
    j["tensor"] = r.tensor;
    j["expected_shape"] = r.expected_shape;
    j["answer_shape"] = r.answer_shape;
    j["shape_note"] = r.shape_note;
    const bool compared = r.expected_shape == r.answer_shape;  // else null: nothing to compare
    j["max_error"] = compared ? number_json(r.max_error) : nullptr;
    j["max_error_at"] = compared ? ordered_json(r.max_error_at) : nullptr;
    j["diagnosis"] = r.match ? ordered_json(nullptr)
                             : ordered_json{{"id", r.diagnosis_id}, {"message", r.diagnosis_message}};
    if (!r.match && !r.diagnosis_like.empty()) j["diagnosis"]["like"] = r.diagnosis_like;  // a teacher's own mistake
    out << j.dump() << '\n';
}

}  // namespace attn
