#include "attn/render/render_json.hpp"

#include <memory>
#include <cmath>
#include <string>
#include <string_view>

#include "attn/compute/mask.hpp"
#include "attn/render/json_numbers.hpp"
#include "attn/render/selection.hpp"
#include "attn/teach/explain.hpp"
#include "attn/teach/stage_text.hpp"

namespace attn {
namespace {

/// Buffered JSON numbers and brackets: large stages go to the output in blocks of
/// 64 KiB, without building a JSON tree.
class json_numbers {
public:
    explicit json_numbers(std::ostream& out) : out_(out) {}
    // No flush in a destructor: it runs while a write error unwinds, and a second throw
    // from the stream there is std::terminate. The owner flushes (row_data_writer::finish).

    /// One element as the document writes it (write_json_element).
    void number(float v, bool boolean) {
        if (used_ + json_element_room > block) flush();
        used_ = static_cast<std::size_t>(write_json_element(buffer_ + used_, v, boolean) - buffer_);
    }
    void put(char c) {
        if (used_ == block) flush();
        buffer_[used_++] = c;
    }
    void put(char c, std::size_t times) {
        for (std::size_t i = 0; i < times; ++i) put(c);
    }
    void flush() {
        out_.write(buffer_, static_cast<std::streamsize>(used_));
        used_ = 0;
    }

private:
    static constexpr std::size_t block = 64 * 1024;

    std::ostream& out_;
    char buffer_[block];
    std::size_t used_ = 0;
};

}  // namespace

/// Writes the nested arrays of a tensor that comes in rows (stage_sink.hpp), as
/// write_json_data would write it whole: row k of the (selected) tensor opens the axes
/// whose index it starts and closes the ones the row before ended.
class row_data_writer {
public:
    row_data_writer(std::vector<std::size_t> shape, bool boolean, std::ostream& out)
        : shape_(std::move(shape)), boolean_(boolean), numbers_(out) {}

    void row(const float* values) {
        const std::size_t leading = shape_.size() - 1;
        if (written_ == 0) {
            numbers_.put('[', leading);
        } else {
            std::size_t carried = 0;  // axes, from the last leading one back, whose index wraps to 0
            for (std::size_t axis = leading, k = written_; axis-- > 0 && k % shape_[axis] == 0; k /= shape_[axis])
                ++carried;
            numbers_.put(']', carried);
            numbers_.put(',');
            numbers_.put('[', carried);
        }
        numbers_.put('[');
        for (std::size_t j = 0; j < shape_.back(); ++j) {
            if (j != 0) numbers_.put(',');
            numbers_.number(values[j], boolean_);
        }
        numbers_.put(']');
        ++written_;
    }
    /// Closes the leading axes (or writes the empty nesting of a tensor without rows).
    void finish() {
        const std::size_t leading = shape_.size() - 1;
        if (written_ == 0) {
            numbers_.put('[', leading);  // a zero-size axis: [[]] as tolist() gives
        }
        numbers_.put(']', leading);
        numbers_.flush();
    }

private:
    std::vector<std::size_t> shape_;
    bool boolean_;
    json_numbers numbers_;
    std::size_t written_ = 0;
};

namespace {

/// A tensor, or the part of it the views select (--batch-index, --head, --row): then
/// "shape" is the part's, with the selected axes kept at size 1 so jq paths stay as
/// deep, and "full_shape" and "index" ({"head": 1}) say which part it is.
/// The tensor's object up to "data": {"shape",...,"contiguous",["full_shape","index",]"data":
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

void write_tensor(const tensor& t, const render_options& options, std::ostream& out) {
    const tensor_selection selection = select_in(t, options);
    write_tensor_head(t, selection, out);
    {
        const tensor part = selection.whole() ? tensor{} : selected_part(t, selection);
        const tensor& shown = selection.whole() ? t : part;
        write_json_data(shown.values.data(), tensor_shape(shown.values.shape().begin(), shown.values.shape().end()),
                        shown.strides,
                        shown.type == element_type::boolean, out);
    }
    out.put('}');
}

/// --explain: {"words":..,"shapes":..,"einsum":..,"torch":..,"memory":..,"why":..}.
nlohmann::ordered_json explanation_json(const config& c, std::string_view stage_name) {
    const stage_explanation e = explain_stage(c, stage_name);
    return {{"words", e.words}, {"shapes", e.shapes}, {"einsum", e.einsum},
            {"torch", e.torch}, {"memory", e.memory}, {"why", e.why}};
}

/// {"step":..,"title":..,"formula":..,["warnings":[..],]["explain":{..},]"tensors":{...}} with an
/// optional leading "name"; "warnings" only when the trace has some about this stage, "explain"
/// only with --explain.
void write_stage_head(const trace& t, const stage& s, const render_options& options, bool with_name,
                      std::ostream& out) {
    nlohmann::ordered_json head;
    if (with_name) head["name"] = s.name();
    head["step"] = s.info->step;
    head["title"] = s.info->title;
    head["formula"] = stage_formula(t.cfg, s.name());
    for (const warning* w : t.warnings_of(s.name())) head["warnings"].push_back(w->text);
    if (options.explain) head["explain"] = explanation_json(t.cfg, s.name());
    std::string text = head.dump();
    text.pop_back();
    out << text << ",\"tensors\":{";
}

void write_stage(const trace& t, const stage& s, const render_options& options, bool with_name, std::ostream& out) {
    write_stage_head(t, s, options, with_name, out);
    for (std::size_t i = 0; i < s.tensors.size(); ++i) {
        if (i != 0) out.put(',');
        out << nlohmann::json(s.tensors[i].name).dump() << ':';
        write_tensor(s.tensors[i], options, out);
    }
    out << "}}";
}

}  // namespace

void render_tensor_json(const tensor& t, std::ostream& out) { write_tensor(t, render_options{}, out); }

nlohmann::ordered_json config_to_json(const config& c) {
    nlohmann::ordered_json j{{"batch", c.batch},     {"seq", c.seq},       {"kv_seq", c.kv_seq},
                             {"d_model", c.d_model}, {"heads", c.heads},   {"head_dim", c.head_dim()},
                             {"d_in", c.d_in},       {"d_kv_in", c.d_kv_in}, {"cross", c.cross()},
                             {"qkv_bias", c.qkv_bias}, {"out_proj", c.out_proj}, {"seed", c.seed},
                             {"mask", mask_kinds_to_string(c.mask)}};
    if (c.mask.causal_align == causal_alignment::lower_right) j["causal_align"] = "lower-right";  // upper-left: absent
    if (c.mask.padding) j["lengths"] = c.mask.lengths;
    if (c.mask.window) j["window"] = *c.mask.window_size;
    if (c.mask.random) {
        j["mask_seed"] = c.mask.random_seed;
        j["mask_keep"] = c.mask.random_keep;
    }
    if (c.mask.from_file) {
        j["mask_file"] = true;
        j["mask_convention"] = std::string(mask_convention_name(c.mask.file_convention));
    }
    if (c.mask.key_padding) {
        j["key_padding"] = true;
        j["key_padding_convention"] = std::string(mask_convention_name(c.mask.key_padding_convention));
    }
    if (std::isinf(c.fill))
        j["fill"] = "-inf";
    else  // the double nearest the float's shortest decimal form: -0.1, not -0.10000000149011612
        j["fill"] = std::stod(fill_to_string(c.fill));
    if (fill_text(c) != fill_to_string(c.fill)) j["fill_text"] = c.fill_text;  // as typed: "-1e9"
    if (c.safe_softmax) j["safe_softmax"] = true;
    if (c.mistake != mistake::none) j["mistake"] = std::string(mistake_id(c.mistake));  // --mistake ID, on purpose
    if (c.from_projections) j["from_projections"] = true;
    if (c.x_from_file) j["input_file"] = true;  // so a replay (--from) knows which tensors came from files
    if (c.x_kv_from_file) j["kv_input_file"] = true;
    if (c.params_from_file) j["params_file"] = true;
    if (c.dropout.p > 0.0 || c.dropout.train) {  // absent when dropout was never asked for
        j["dropout"] = c.dropout.p;
        j["train"] = c.dropout.train;
        if (c.dropout.applied()) j["dropout_seed"] = c.dropout.seed;
    }
    return j;
}

nlohmann::ordered_json selection_to_json(const render_options& options) {
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    if (options.batch_index) j["batch_index"] = *options.batch_index;
    if (options.head) j["head"] = *options.head;
    if (options.row) j["row"] = *options.row;
    return j;
}

void render_json(const trace& t, const render_options& options, std::ostream& out) {
    out << R"({"format":"attn.trace/1","config":)" << config_to_json(t.cfg).dump();
    if (has_view(options)) out << R"(,"selection":)" << selection_to_json(options).dump();
    out << R"(,"stages":{)";
    bool first = true;
    for (const stage& s : t.stages) {
        if (!options.shows(s.name())) continue;
        if (!first) out.put(',');
        first = false;
        out << '"' << s.name() << "\":";
        write_stage(t, s, options, false, out);
    }
    nlohmann::json texts = nlohmann::json::array();
    for (const warning& w : t.warnings) texts.push_back(w.text);
    out << R"(},"warnings":)" << texts.dump() << "}\n";
}

void render_json_line(const trace& t, const stage& s, std::ostream& out) {
    render_json_line(t, s, render_options{}, out);
}

void render_json_line(const trace& t, const stage& s, const render_options& options, std::ostream& out) {
    write_stage(t, s, options, true, out);
    out.put('\n');
}

}  // namespace attn

namespace attn {

json_stream::json_stream(const config& c, const render_options& options, std::ostream& out, bool lines)
    : options_(options), out_(out), lines_(lines) {
    if (lines_) return;
    out_ << R"({"format":"attn.trace/1","config":)" << config_to_json(c).dump();
    if (has_view(options_)) out_ << R"(,"selection":)" << selection_to_json(options_).dump();
    out_ << R"(,"stages":{)";
}

json_stream::~json_stream() = default;

void json_stream::open_stage(const trace& so_far, const stage& s) {
    if (!lines_) {
        if (stages_written_ != 0) out_.put(',');
        out_ << '"' << s.name() << "\":";
    }
    ++stages_written_;
    write_stage_head(so_far, s, options_, lines_, out_);
    warnings_in_head_ = so_far.warnings_of(s.name()).size();
}

void json_stream::begin(const trace& so_far, const stage& s) {
    if (s.in_rows()) {
        begin_rows(so_far, s);
        return;
    }
    open_ = false;
    if (!options_.shows(s.name())) return;
    if (lines_) {
        render_json_line(so_far, s, options_, out_);
        out_.flush();
        return;
    }
    if (stages_written_ != 0) out_.put(',');
    ++stages_written_;
    out_ << '"' << s.name() << "\":";
    write_stage(so_far, s, options_, false, out_);
}

void json_stream::begin_rows(const trace& so_far, const stage& s) {
    open_ = options_.shows(s.name());
    if (!open_) return;
    open_stage(so_far, s);
    heads_ = s.tensors;
    tensor_ = -1;
}

void json_stream::start_tensor(std::size_t index) {
    while (static_cast<std::ptrdiff_t>(index) > tensor_) {
        if (writer_) end_tensor();
        ++tensor_;
        const tensor& head = heads_[static_cast<std::size_t>(tensor_)];
        selection_ = select_in(head, options_);
        if (tensor_ != 0) out_.put(',');
        out_ << nlohmann::json(head.name).dump() << ':';
        write_tensor_head(head, selection_, out_);
        writer_ = std::make_unique<row_data_writer>(selection_.shape, head.type == element_type::boolean, out_);
    }
}

void json_stream::end_tensor() {
    if (whole_rows_ == 0) writer_->finish();  // else the last row closed the nesting
    writer_.reset();
    whole_rows_ = 0;
    out_.put('}');
}

void json_stream::rows(std::size_t index, std::size_t first_row, std::size_t count, const float* rows) {
    if (!open_) return;
    if (static_cast<std::ptrdiff_t>(index) != tensor_) start_tensor(index);
    const tensor& head = heads_[index];
    const std::vector<std::size_t> shape(head.values.shape().begin(), head.values.shape().end());
    const std::size_t width = shape.back();
    if (selection_.whole()) {  // the rows as they are: formatted on every core
        write_json_rows(rows, first_row, count, selection_.shape, head.type == element_type::boolean, out_);
        whole_rows_ += count;
        return;
    }
    for (std::size_t r = 0; r < count; ++r)
        if (keeps_row(shape, selection_, first_row + r)) writer_->row(rows + r * width);
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
        for (const warning* w : found) texts.push_back(w->text);
        out_ << ",\"warnings\":" << texts.dump();
    }
    out_.put('}');
    if (lines_) {
        out_.put('\n');
        out_.flush();
    }
    open_ = false;
}

void json_stream::finish(const warning_list& warnings) {
    if (lines_) return;
    nlohmann::json texts = nlohmann::json::array();
    for (const warning& w : warnings) texts.push_back(w.text);
    out_ << R"(},"warnings":)" << texts.dump() << "}\n";
}

}  // namespace attn
