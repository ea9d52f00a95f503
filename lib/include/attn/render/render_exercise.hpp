#pragma once
// attn exercise's output: the list, one exercise as a student gets it (table, JSON,
// the task.md of a handed-out folder), and the grade of an answer (table, JSON).
#include <ostream>
#include <vector>

#include "attn/render/render_options.hpp"
#include "attn/teach/check.hpp"
#include "attn/teach/exercise.hpp"
#include "attn/teach/layout_answer.hpp"

namespace attn {

/// One line per exercise: number, id, what it asks for (stage.tensor, "transpose.k strides",
/// "shapes"), title.
void render_exercise_list(const std::vector<exercise>& all, std::ostream& out);
/// {"format": "attn.exercises/1", "exercises": [{"number", "id", "title", "answer": {"kind",
/// "stage", "tensor", "shape"}}, ...]} ("kind": "tensor", "shapes" (no stage, tensor, shape) or "strides")
void render_exercise_list_json(const std::vector<exercise>& all, std::ostream& out);

/// The task, the run in a few lines, the given tensors as attn trace's table prints
/// them (options: precision, colour; every element is printed), the answer asked
/// for, and how many hints there are with the command that opens the first: the
/// hints stay folded, as in task.md, because the last one is nearly the solution.
void render_exercise_table(const exercise_variant& v, const render_options& options, std::ostream& out);

/// Hint `n` (from 1) of `e` alone, wrapped, with the command for the next one.
/// Throws usage_error naming --hint when `e` has no hint `n`.
void render_exercise_hint(const exercise& e, int n, std::ostream& out);

/// {"format": "attn.exercise/1", "number", "id", "title", "source", "student", "seed",
///  "secret_fingerprint" (8 hex digits, or null without a class secret),
///  "task": [...], "config": {...}, "given": {"scaled.scaled": {shape, dims, dtype, data}, ...},
///  "answer": {"stage", "tensor", "shape", "dims"}, "tolerance": {...}, "hints": [...], "mistakes": [...]}
void render_exercise_json(const exercise_variant& v, std::ostream& out);

/// The task as Markdown, for a handed-out folder (DIR/task.md): the files next to it,
/// Python that loads them and saves the answer, the command that checks it, the hints
/// folded away one by one.
void render_exercise_task_md(const exercise_variant& v, std::ostream& out);

/// The grade in three lines (verdict, max error, diagnosis), as attn check prints a report.
void render_check_report_table(const exercise_variant& v, const check_report& r, std::ostream& out);
/// {"exercise": 7, "id", "student", "match", "stage", "tensor", "expected_shape", "answer_shape",
///  "shape_note", "max_error", "max_error_at", "diagnosis": {"id", "message"} or null}
void render_check_report_json(const exercise_variant& v, const check_report& r, std::ostream& out);

/// The grade of a layout answer (shapes, strides): the verdict, then a diagnosis line per
/// problem ("shape_without_transpose: transpose: [2,6,4,3] is what ...").
void render_layout_report_table(const exercise_variant& v, const layout_report& r, std::ostream& out);
/// {"exercise", "id", "student", "seed", "match", "kind", "problems": [{"stage", "id", "message"}],
///  "diagnosis": the first problem's {"id", "message"} or null}
void render_layout_report_json(const exercise_variant& v, const layout_report& r, std::ostream& out);

}  // namespace attn
