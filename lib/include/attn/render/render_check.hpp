#pragma once
// attn check's report (teach/check.hpp), for reading or for a grader.
//
// --format table:
//   stage      softmax (10), tensor weights
//   shape      [2,4,5,5] [B,H,Sq,Sk], as expected
//   result     mismatch: 34 of 200 elements differ by more than atol 1e-05 + rtol 0.0001·|expected|
//   largest    error 0.3918 at [0][0][0][0]: yours 0.6082, expected 1
//   diagnosis  softmax_axis: your weights sum to 1 over the queries (dim=-2), not over the keys: use ...
//
// --format json (one line):
//   {"match": false, "stage": "softmax", "step": 10, "tensor": "weights",
//    "expected_shape": [...], "expected_dims": [...], "answer_shape": [...], ["shape_note": "...",]
//    "max_error": 0.39, "max_error_at": [0,0,0,0], "answer_value": ..., "expected_value": ...,
//    "mismatched": 34, "elements": 200, "atol": 1e-05, "rtol": 0.0001,
//    ["diagnosis": {"id": "softmax_axis", "message": "...", "made_at": "softmax"}]}
// max_error and its place are null when the shapes differ; numbers JSON cannot
// hold are the strings "inf", "-inf", "nan"; the diagnosis only on a mismatch.
#include <ostream>
#include <string>

#include "attn/teach/check.hpp"

namespace attn {

void render_check_table(const check_report& r, std::ostream& out);
void render_check_json(const check_report& r, std::ostream& out);

/// --format json when the answer file cannot be read (missing, unreadable, malformed): no
/// verdict, and a document that says so, where a mismatch says "match": false:
///   {"match": null, "error": {"id": "unreadable_answer", "message": "--answer a.npy: cannot open: ..."}}
/// (the exit status is 1 for both, as CLI.md has it; the JSON and stdout tell them apart).
/// `id` "wrong_secret": attn exercise check of an answer beside a hand-out made with
/// another class secret (handout_secret.hpp), where there is no verdict either.
void render_check_error_json(const std::string& message, std::ostream& out, const std::string& id = "unreadable_answer");

}  // namespace attn
