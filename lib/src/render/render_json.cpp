#include "attn/render/render_json.hpp"

#include <cmath>
#include <string>
#include <string_view>

#include "attn/compute/mask.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/text/utf8_text.hpp"
#include "attn/render/json_numbers.hpp"
#include "attn/render/render_stats.hpp"
#include "attn/teach/explain.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

/// The tensor's object up to "data": {"shape",...,"contiguous",["full_shape","index",]"data":
/// With a view, "shape" is the selected part's (selected axes kept at size 1 so jq paths
/// stay as deep), and "full_shape" and "index" ({"head": 1}) say which part it is.
void write_tensor_head(const tensor& t, const tensor_selection& selection, std::ostream& out) {
    nlohmann::ordered_json head{{"shape", selection.shape},
                                {"dims", t.dims},
                                {"dtype", t.type == element_type::boolean ? "bool" : "float32"},
                                {"strides", t.strides},          // t.stride(), in elements
                                {"contiguous", t.contiguous()}};  // t.is_contiguous()
    if (!selection.whole()) {
        head["full_shape"] = t.values.shape();
        for (const axis_pick& p : selection.picks) head["index"][p.dim] = p.index;
    }
    std::string text = head.dump();
    text.pop_back();  // reopen the object to append "data"
    out << text << ",\"data\":";
}

/// ,"stats":{...} (--stats: of the whole tensor, whatever a view shows of it).
void write_stats(const tensor_stats& stats, std::ostream& out) { out << ",\"stats\":" << stats_json(stats).dump(); }

void write_tensor(const tensor& t, const render_options& options, std::ostream& out,
                  const tensor_stats* stats = nullptr) {
    const tensor_selection selection = select_in(t, options);
    write_tensor_head(t, selection, out);
    const tensor shown = selected_part(t, selection);  // t itself when whole
    write_json_data(shown.values.data(), tensor_shape(shown.values.shape().begin(), shown.values.shape().end()),
                    shown.strides, shown.type == element_type::boolean, out);
    if (stats != nullptr) write_stats(*stats, out);
    out.put('}');
}

/// --explain: {"words":..,"shapes":..,"einsum":..,"torch":..,"memory":..,"why":..}.
nlohmann::ordered_json explanation_json(const config& c, const stage& s) {
    const stage_explanation e = explain_stage(c, s);
    nlohmann::ordered_json j{{"words", e.words}, {"shapes", e.shapes}, {"einsum", e.einsum},
                             {"torch", e.torch}, {"memory", e.memory}, {"why", e.why}};
    if (!e.row.empty()) j["row"] = e.row;  // flash: the recurrence with this run's numbers
    return j;
}

/// {"step":..,"title":..,"formula":..,[figures,]["warnings":[..],]["explain":{..},]"tensors":{...}}
/// with an optional leading "name"; the stage's figures as keys of their own ("max_abs_diff":
/// 2.9e-08), "warnings" only when the trace has some about this stage, "explain" only with --explain.
void write_stage_head(const trace& t, const stage& s, const render_options& options, bool with_name,
                      std::ostream& out) {
    nlohmann::ordered_json head;
    if (with_name) head["name"] = s.name();
    head["step"] = step_json(s.info->step);
    head["title"] = stage_title(t.cfg, s.name());
    head["formula"] = stage_formula(t.cfg, s.name());
    for (const stage_figure& f : s.figures) head[f.name] = f.value;
    for (const run_line& source : stage_sources(t.cfg, s.id())) head["sources"][source.label] = source.text;  // a model's file
    for (const warning* w : t.warnings_of(s.name())) head["warnings"].push_back(utf8_escaped(w->text));
    if (options.explain) head["explain"] = explanation_json(t.cfg, s);
    std::string text = head.dump();
    text.pop_back();
    out << text << ",\"tensors\":{";
}

/// "x":{..},"q":{..}: the stage's tensors, whole; with `stats` (--stats: begun with s) each one's.
void write_tensors(const stage& s, const render_options& options, std::ostream& out,
                   const stage_stats* stats = nullptr) {
    for (std::size_t i = 0; i < s.tensors.size(); ++i) {
        if (i != 0) out.put(',');
        out << nlohmann::json(s.tensors[i].name).dump() << ':';
        const tensor_stats st = stats != nullptr ? stats->of(i) : tensor_stats{};
        write_tensor(s.tensors[i], options, out, stats != nullptr ? &st : nullptr);
    }
}

}  // namespace

void render_tensor_json(const tensor& t, std::ostream& out) { write_tensor(t, render_options{}, out); }

nlohmann::ordered_json number_json(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    return v;
}

nlohmann::ordered_json selection_to_json(const render_options& options) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (options.batch_index) j["batch_index"] = *options.batch_index;
    if (options.head) j["head"] = *options.head;
    if (options.row) j["row"] = *options.row;
    return j;
}

nlohmann::ordered_json step_json(stage_step step) {
    if (step.plain()) return step.number;
    return step.text();
}

void render_json(const trace& t, const render_options& options, std::ostream& out) {
    json_stream json(t.cfg, options, out, false);
    for (const stage& s : t.stages) {
        json.begin(t, s);
        json.end(t, s);
    }
    json.finish(t.warnings);
}

void render_json_line(const trace& t, const stage& s, const render_options& options, std::ostream& out) {
    write_stage_head(t, s, options, true, out);
    stage_stats stats;
    if (options.stats) stats.begin(t, s);
    write_tensors(s, options, out, options.stats ? &stats : nullptr);
    out << "}}\n";
}

json_stream::json_stream(const config& c, const render_options& options, std::ostream& out, bool lines)
    : options_(options), out_(out), lines_(lines) {
    if (lines_) return;
    out_ << R"({"format":"attn.trace/1","config":)" << config_to_json(c).dump();
    if (has_view(options_)) out_ << R"(,"selection":)" << selection_to_json(options_).dump();
    out_ << R"(,"stages":{)";
}

void json_stream::begin(const trace& so_far, const stage& s) {
    open_ = options_.shows(s.id());
    if (!open_) return;
    if (!lines_) {
        if (stages_written_++ != 0) out_.put(',');
        out_ << '"' << s.name() << "\":";
    }
    write_stage_head(so_far, s, options_, lines_, out_);
    if (options_.stats) stats_.begin(so_far, s);
    if (s.in_rows()) {  // its tensors come in rows(), and end() closes it
        warnings_in_head_ = so_far.warnings_of(s.name()).size();
        heads_ = s.tensors;
        tensor_ = -1;
        return;
    }
    write_tensors(s, options_, out_, options_.stats ? &stats_ : nullptr);
    out_ << "}}";
    end_line();
    open_ = false;
}

void json_stream::start_tensor(std::size_t index) {
    while (static_cast<std::ptrdiff_t>(index) > tensor_) {
        if (tensor_ >= 0) end_tensor();
        const tensor& head = heads_[static_cast<std::size_t>(++tensor_)];
        selection_ = select_in(head, options_);
        if (tensor_ != 0) out_.put(',');
        out_ << nlohmann::json(head.name).dump() << ':';
        write_tensor_head(head, selection_, out_);
        rows_written_ = 0;
    }
}

void json_stream::end_tensor() {
    if (rows_written_ == 0) {  // a tensor without rows: the empty nesting, [[]] as tolist() gives
        const std::size_t leading = selection_.shape.size() - 1;
        out_ << std::string(leading, '[') << std::string(leading, ']');
    }  // else the last row closed the nesting
    if (options_.stats) write_stats(stats_.of(static_cast<std::size_t>(tensor_)), out_);  // every row has come
    out_.put('}');
}

void json_stream::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) {
    if (!open_) return;
    if (options_.stats) stats_.rows(index, first_row, count, rows);
    start_tensor(index);
    const tensor& head = heads_[index];
    const bool boolean = head.type == element_type::boolean;
    if (selection_.whole()) {  // the rows as they are: formatted on every core
        write_json_rows(rows, first_row, count, selection_.shape, boolean, out_);
        rows_written_ += count;
        return;
    }
    const tensor_shape shape(head.values.shape().begin(), head.values.shape().end());
    const std::vector<float> kept = kept_rows(shape, selection_, first_row, count, rows);
    const std::size_t kept_count = kept.size() / shape.back();
    write_json_rows(kept.data(), rows_written_, kept_count, selection_.shape, boolean, out_);
    rows_written_ += kept_count;
}

void json_stream::end(const trace& so_far, const stage& s) {
    if (!open_) return;
    start_tensor(heads_.size() - 1);  // every tensor opened, even one without rows
    end_tensor();
    out_.put('}');  // the tensors
    // warnings found while the stage was computed in rows (a weak --fill) come after its
    // tensors, when its head had none (else they are only in the document's "warnings")
    const std::vector<const warning*> found = so_far.warnings_of(s.name());
    if (warnings_in_head_ == 0 && !found.empty()) {
        nlohmann::json texts = nlohmann::json::array();
        for (const warning* w : found) texts.push_back(utf8_escaped(w->text));  // a path may hold any bytes
        out_ << ",\"warnings\":" << texts.dump();
    }
    out_.put('}');
    end_line();
    open_ = false;
}

void json_stream::end_line() {
    if (!lines_) return;
    out_.put('\n');
    out_.flush();
}

void json_stream::finish(const warning_list& warnings) {
    if (lines_) return;
    nlohmann::json texts = nlohmann::json::array();
    for (const warning& w : warnings) texts.push_back(utf8_escaped(w.text));  // a path may hold any bytes
    out_ << R"(},"warnings":)" << texts.dump() << "}\n";
}

}  // namespace attn
