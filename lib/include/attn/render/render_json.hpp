#pragma once
// --format json and --format jsonl (CLI.md, "JSON").
//
//   { "format": "attn.trace/1", "config": {...},
//     "stages": { "input": { "step": 1, "title": ..., "formula": ..., ["warnings": [...],]
//                            ["explain": {"words", "shapes", "einsum", "torch", "memory", "why"},]
//                            "tensors": { "x": { "shape": [...], "dims": [...],
//                                                "dtype": "float32", "data": [[...]],
//                                                ["stats": {...} with --stats: render_stats.hpp] } } }, ... },
//     "warnings": [...] }
//
// `data` nests like tensor.tolist(); numbers are float32 written with the
// fewest digits that read back to the same float; "-inf", "inf" and "nan" are
// strings; masks are true/false.
#include <cstddef>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/compute/stage_sink.hpp"
#include "attn/compute/tensor_stats.hpp"
#include "attn/compute/trace.hpp"
#include "attn/render/render_options.hpp"
#include "attn/render/selection.hpp"

namespace attn {

/// The whole trace as one JSON document (stages filtered by options.stages). With a
/// view (options.batch_index, head, row; selection.hpp) the document says so in
/// "selection": {"batch_index": 1, "head": 2}, after "config", and each tensor holds only
/// the selected part: "shape" is the part's (selected axes kept at size 1), with
/// "full_shape" and "index": {"batch": 1, "head": 2} added where a tensor was cut.
void render_json(const trace& t, const render_options& options, std::ostream& out);

/// A stage's "step" in every JSON attn writes: an integer for CLI.md's numbers (10) and
/// embed's 0, a string for a lettered one ("5a"), so scripts reading the classic steps as
/// numbers keep working.
nlohmann::ordered_json step_json(stage_step step);

/// One line of JSON lines: the stage object with its "name" added, then '\n'; `t` is the
/// trace so far (for the warnings about `s`). The tensors are cut to the view of `options`
/// as render_json cuts them, and "explain" comes with options.explain.
void render_json_line(const trace& t, const stage& s, const render_options& options, std::ostream& out);

/// The "selection" block: the views options asks for ({"head": 2}), empty when none.
nlohmann::ordered_json selection_to_json(const render_options& options);

/// One tensor as the document writes it: {"shape", "dims", "dtype", "strides", "contiguous", "data"}.
void render_tensor_json(const tensor& t, std::ostream& out);

/// --format json (or jsonl with `lines`) written as the stages come: the document's head
/// at construction, each stage as soon as it is complete (the [B,H,Sq,Sk] stages row by
/// row when they come in rows), and the closing "warnings" at finish(). A stage in rows
/// gives the bytes it gives whole, except that warnings found while it was computed
/// follow its "tensors" instead of preceding them.
class json_stream : public stage_sink {
public:
    json_stream(const config& c, const render_options& options, std::ostream& out, bool lines);

    void begin(const trace& so_far, const stage& s) override;
    void rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) override;
    void end(const trace& so_far, const stage& s) override;

    /// Ends the document with the run's warnings (nothing for JSON lines).
    void finish(const warning_list& warnings);

private:
    void start_tensor(std::size_t index);
    void end_tensor();
    void end_line();

    const render_options& options_;
    std::ostream& out_;
    bool lines_;
    std::size_t stages_written_ = 0;
    // the stage coming in rows
    bool open_ = false;
    std::vector<tensor> heads_;
    std::ptrdiff_t tensor_ = -1;  // the tensor whose rows are being written
    tensor_selection selection_;
    std::size_t rows_written_ = 0;  // of the open tensor's selected part
    std::size_t warnings_in_head_ = 0;
    stage_stats stats_;  // --stats: the stage's, as it comes
};

/// `v` as a JSON number, or the string "nan", "inf" or "-inf" where JSON has none (CLI.md).
nlohmann::ordered_json number_json(double v);

}  // namespace attn
