#include "attn/render/render_json.hpp"

#include <charconv>
#include <memory>
#include <cmath>
#include <string>
#include <string_view>

#include "attn/compute/mask.hpp"
#include "attn/render/json_numbers.hpp"
#include "attn/render/selection.hpp"
#include "attn/teach/explain.hpp"

namespace attn {
namespace {

/// A tensor, or the part of it the views select (--batch-index, --head, --row): then
/// "shape" is the part's, with the selected axes kept at size 1 so jq paths stay as
/// deep, and "full_shape" and "index" ({"head": 1}) say which part it is.
void write_tensor(const tensor& t, const render_options& options, std::ostream& out) {
    const tensor_selection selection = select_in(t, options);
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
void write_stage(const trace& t, const stage& s, const render_options& options, bool with_name, std::ostream& out) {
    nlohmann::ordered_json head;
    if (with_name) head["name"] = s.name();
    head["step"] = s.info->step;
    head["title"] = s.info->title;
    head["formula"] = s.formula;
    for (const warning* w : t.warnings_of(s.name())) head["warnings"].push_back(w->text);
    if (options.explain) head["explain"] = explanation_json(t.cfg, s.name());
    std::string text = head.dump();
    text.pop_back();
    out << text << ",\"tensors\":{";
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
