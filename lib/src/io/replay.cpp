// `attn trace --from DUMP`: a dump's config and input tensors read back, and a
// run made of them and of the flags given on top.
#include "attn/io/replay.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "attn/compute/checked.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/rope_frequencies.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/io/json_document.hpp"
#include "attn/io/npz.hpp"
#include "attn/text/index_text.hpp"
#include "attn/text/join.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {

using json = nlohmann::json;

constexpr std::array<const char*, 8> param_names{"w_q", "b_q", "w_k", "b_k", "w_v", "b_v", "w_o", "b_o"};

// ----------------------------------------------------------------------------
// config_from_json: every key of config_fields(), then what the rows cannot check alone.

/// cross and head_dim are derived; they must agree with the sizes (a forced cross,
/// with Sk = Sq and Dkv = Din, is --cross or --kv-input: keys and values from x_kv).
void check_derived(config_reader& k, config& c, const std::string& what) {
    const bool cross = k.flag("cross");
    const bool by_sizes = (c.past == 0 && c.kv_seq != c.seq) || c.d_kv_in != c.d_in;  // a decoding step: Sk = N + Sq
    if (!cross && by_sizes)
        throw error(what + ": config \"cross\" is false, but kv_seq " + std::to_string(c.kv_seq) + " and d_kv_in " +
                    std::to_string(c.d_kv_in) + " differ from seq " + std::to_string(c.seq) + " and d_in " +
                    std::to_string(c.d_in));
    c.separate_kv = (cross && !by_sizes) || c.sources.x_kv_from_file;
    const std::int64_t head_dim = k.whole("head_dim");
    if (c.heads > 0 && c.d_model % c.heads == 0 && head_dim != c.head_dim())
        throw error(what + ": config \"head_dim\" is " + std::to_string(head_dim) + ", but d_model " +
                    std::to_string(c.d_model) + " / heads " + std::to_string(c.heads) + " is " +
                    std::to_string(c.head_dim()));
}

// ----------------------------------------------------------------------------
// A --format json document, read as it streams by: "format", "config" and the
// tensors replay_reads accepts are kept (as JSON); every other stage is skipped.

/// JSON parsers (nlohmann's, Python's) read "-0", how a float32 -0 is written, as
/// the integer 0; "-0.0" keeps the sign. Returns the text with that change made.
std::string keep_negative_zeros(std::string text) {
    std::vector<std::size_t> at;
    for (std::size_t i = 0; i + 1 < text.size(); ++i) {
        if (text[i] == '"') {  // skip the string
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\') ++i;
        } else if (text[i] == '-' && text[i + 1] == '0' && (i == 0 || (text[i - 1] != 'e' && text[i - 1] != 'E'))) {
            const char next = i + 2 < text.size() ? text[i + 2] : ' ';
            if (next != '.' && next != 'e' && next != 'E' && !(next >= '0' && next <= '9')) at.push_back(i + 2);
        }
    }
    if (at.empty()) return text;
    std::string out;
    out.reserve(text.size() + 2 * at.size());
    std::size_t from = 0;
    for (const std::size_t i : at) {
        out.append(text, from, i - from).append(".0");
        from = i;
    }
    return out.append(text, from, std::string::npos);
}

/// What a value kept from a JSON dump holds in memory: nlohmann's node, an object's map
/// node and key, a string's characters. Charged against the read budget as it is parsed.
constexpr std::uint64_t json_node_bytes = json_value_bytes;  // json_document.hpp: the node, and its array's growth
constexpr std::uint64_t json_member_bytes = 64;  // a std::map node beside the value, and its key's string

class dump_json_reader : public nlohmann::json_sax<json> {
public:
    /// `held`: the bytes already held while it parses (the document's text).
    dump_json_reader(std::string what, const read_budget* budget, std::uint64_t held)
        : what_(std::move(what)), budget_(budget), held_(held), text_bytes_(held) {}

    std::map<std::string, json> parts;  // "format", "config", "input.x", ...

    bool null() override { return value(json(nullptr)); }
    bool boolean(bool b) override { return value(json(b)); }
    bool number_integer(number_integer_t n) override { return value(json(n)); }
    bool number_unsigned(number_unsigned_t n) override { return value(json(n)); }
    bool number_float(number_float_t n, const string_t& text) override {
        if (!in_stages()) return value(json(n));
        float f = 0.0f;  // a tensor's float32, from its text: no rounding through a double
        const bool exact = std::from_chars(text.data(), text.data() + text.size(), f).ec == std::errc();
        return value(json(static_cast<double>(exact ? f : to_float32(n))));
    }
    bool string(string_t& s) override { return value(json(s)); }
    bool binary(binary_t&) override { return value(json(nullptr)); }
    bool start_object(std::size_t) override { return open(json::object(), false); }
    bool start_array(std::size_t) override { return open(json::array(), true); }
    bool end_object() override { return close(); }
    bool end_array() override { return close(); }
    bool key(string_t& k) override {
        key_ = k;
        return true;
    }
    bool parse_error(std::size_t, const std::string&, const json::exception& e) override {
        throw error(what_ + ": " + json_message(e));
    }

private:
    struct frame {
        std::string key;  // the key it stands under in its parent object ("" in an array)
        bool array;
        json* kept;       // where its contents go; nullptr = skipped
    };

    bool in_stages() const { return frames_.size() > 1 && frames_[1].key == "stages"; }
    bool in_array() const { return !frames_.empty() && frames_.back().array; }

    /// The name a value at this position is kept under ("config", "input.x"), or "".
    std::string name_here() const {
        if (in_array()) return "";
        if (frames_.size() == 1 && (key_ == "format" || key_ == "config" || key_ == "selection")) return key_;
        if (frames_.size() == 4 && in_stages() && frames_[3].key == "tensors" && !frames_[2].array &&
            replay_reads(frames_[2].key + "." + key_))
            return frames_[2].key + "." + key_;
        return "";
    }
    /// Where a value at this position goes, or nullptr when it is skipped.
    json* slot() {
        if (!frames_.empty() && frames_.back().kept != nullptr) {
            json& parent = *frames_.back().kept;
            if (parent.is_array()) {
                parent.push_back(nullptr);
                return &parent.back();
            }
            if (parent.contains(key_)) twice(key_);
            return &parent[key_];
        }
        if (frames_.empty()) return nullptr;
        const std::string name = name_here();
        if (!name.empty() && parts.count(name)) twice(name);
        return name.empty() ? nullptr : &parts[name];
    }
    [[noreturn]] void twice(const std::string& key) const {  // a parser would keep the last one silently
        throw error(what_ + ": the key \"" + quoted_field(key) + "\" appears twice in one object (which one counts?)");
    }
    /// Counts a value kept at this position against the budget: its node (and an object's
    /// member, and a string's characters), before it is stored.
    void charge(std::uint64_t extra) {
        if (budget_ == nullptr) return;
        const bool member = !frames_.empty() && frames_.back().kept != nullptr && !frames_.back().array;
        held_ += json_node_bytes + extra + (member ? json_member_bytes + key_.size() : 0);
        if (held_ > budget_->left())  // known only as it parses: said as a bound passed, not a total
            throw over_budget(what_ + ": its text (" + format_bytes(text_bytes_) + ") and the values parsed from it pass the " +
                              format_bytes(budget_->left()) +
                              " --max-memory allows (a JSON value takes up to 48 bytes as it is parsed; --max-memory none: no limit)");
    }
    bool value(json v) {
        if (json* s = slot()) {
            charge(v.is_string() ? v.get_ref<const std::string&>().size() : 0);
            *s = std::move(v);
        }
        return true;
    }
    bool open(json empty, bool array) {
        if (frames_.size() >= max_json_depth)
            throw error(what_ + ": nested more than " + std::to_string(max_json_depth) +
                        " levels deep; no dump of attn trace is");
        json* s = slot();
        if (s != nullptr) charge(0);
        if (s != nullptr) *s = std::move(empty);
        frames_.push_back({in_array() ? std::string() : key_, array, s});
        return true;
    }
    bool close() {
        frames_.pop_back();
        return true;
    }

    std::string what_;
    const read_budget* budget_;
    std::uint64_t held_;
    std::uint64_t text_bytes_;
    std::vector<frame> frames_;
    std::string key_;
};

/// One leaf of a tensor's "data": a number, "nan"/"inf"/"-inf", or a boolean.
float leaf_value(const json& v, const std::string& what, const std::vector<std::size_t>& index) {
    if (v.is_boolean()) return v.get<bool>() ? 1.0f : 0.0f;
    if (v.is_number_unsigned()) return static_cast<float>(v.get<std::uint64_t>());
    if (v.is_number_integer()) return static_cast<float>(v.get<std::int64_t>());
    if (v.is_number_float()) return to_float32(v.get<double>());  // exact: the reader kept the float32
    if (v.is_string()) {
        const std::string s = v.get<std::string>();
        if (s == "nan") return std::numeric_limits<float>::quiet_NaN();
        if (s == "inf") return std::numeric_limits<float>::infinity();
        if (s == "-inf") return -std::numeric_limits<float>::infinity();
    }
    throw error(what + ": data" + element_index_text(index) + " is " + json_excerpt(v) +
                "; expected a number, \"nan\", \"inf\", \"-inf\" or a boolean");
}

void flatten(const json& v, const std::vector<std::size_t>& shape, std::vector<std::size_t>& index,
             std::vector<float>& out, const std::string& what) {
    const std::size_t axis = index.size();
    if (axis == shape.size()) return out.push_back(leaf_value(v, what, index));
    if (!v.is_array() || v.size() != shape[axis])
        throw error(what + ": data" + element_index_text(index) + " is not a list of " + std::to_string(shape[axis]) +
                    " (\"shape\" is " + tensor_index_text(shape) + ")");
    for (std::size_t i = 0; i < shape[axis]; ++i) {
        index.push_back(i);
        flatten(v[i], shape, index, out, what);
        index.pop_back();
    }
}

/// {"shape": [...], "dtype": "float32"|"bool", "data": [[...]]} as render_json writes a tensor.
loaded_tensor tensor_from_json(const json& t, const std::string& what) {
    if (!t.is_object() || !t.contains("shape") || !t.contains("data"))
        throw error(what + ": expected an object with \"shape\" and \"data\", as --format json writes a tensor");
    loaded_tensor out;
    const json& shape = t.at("shape");
    if (!shape.is_array() || shape.size() > 32) throw error(what + ": \"shape\" is " + json_excerpt(shape) + "; expected a list of sizes");
    for (const json& s : shape) {
        if (!s.is_number_unsigned()) throw error(what + ": \"shape\" is " + json_excerpt(shape) + "; expected a list of sizes");
        out.shape.push_back(s.get<std::size_t>());
    }
    // every stride must fit, even when a zero size elsewhere makes the data empty: [0, 2^62, 2^62]
    if (!shape_fits(out.shape, sizeof(float)))
        throw error(what + ": \"shape\" " + tensor_index_text(out.shape) + " has more elements than any tensor holds");
    out.boolean = t.contains("dtype") && t.at("dtype") == "bool";
    std::vector<float> values;
    std::vector<std::size_t> index;
    flatten(t.at("data"), out.shape, index, values, what);
    out.values = xt::xarray<float>::from_shape(out.shape);
    std::copy(values.begin(), values.end(), out.values.data());
    count_non_finite(out);
    return out;
}

/// A dump written with --batch-index or --row holds part of the run's tensors: replaying
/// it would be another run. --head alone cuts no tensor a replay reads (none has a head axis).
void check_whole_run(const json* selection, const std::string& what) {
    if (selection == nullptr || !selection->is_object()) return;
    std::string flags;
    for (const auto& [key, flag] : {std::pair{"batch_index", "--batch-index"}, {"row", "--row"}})
        if (selection->contains(key))
            flags += (flags.empty() ? "" : " ") + std::string(flag) + " " + json_excerpt(selection->at(key));
    if (!flags.empty())
        throw error(what + ": the dump holds only part of the run (it was written with " + flags +
                    "); replay a dump written without --batch-index and --row");
}

json read_json_dump(const std::string& path, dump& d, read_budget* budget) {
    const std::string text = keep_negative_zeros(read_text_file(path, d.what, budget));  // its size first
    check_no_nul(text, d.what);
    dump_json_reader reader(d.what, budget, text.size());  // the values kept, within what the text leaves
    json::sax_parse(text, &reader);
    const auto format = reader.parts.find("format");
    if (format == reader.parts.end())
        throw error(d.what + ": not a dump of attn trace --format json (it has no \"format\": \"attn.trace/1\")");
    if (format->second != "attn.trace/1")
        throw error(d.what + ": \"format\" is " + json_excerpt(format->second) + "; this attn replays \"attn.trace/1\"");
    const auto config = reader.parts.find("config");
    if (config == reader.parts.end()) throw error(d.what + ": no \"config\" (attn trace --format json writes one)");
    const auto selection = reader.parts.find("selection");
    check_whole_run(selection == reader.parts.end() ? nullptr : &selection->second, d.what);
    for (auto& [name, part] : reader.parts)
        if (name.find('.') != std::string::npos) {
            d.tensors[name] = tensor_from_json(part, d.what + " " + name);
            if (budget) {  // the float32s kept for the run (the parsed values go when the dump is read)
                const std::vector<std::size_t>& shape = d.tensors[name].shape;
                budget->take(4 * std::uint64_t(d.tensors[name].values.size()), d.what + " " + name,
                             "shape " + tensor_index_text(shape) + " of float32");
            }
        }
    return std::move(config->second);
}

json read_npz_dump(const std::string& path, dump& d, read_budget* budget) {
    std::map<std::string, std::string> texts;
    const auto wanted = [](const std::string& name) {
        return name == "config" || name == "selection" || replay_reads(name);
    };
    d.tensors = read_npz(path, d.what, &texts, wanted, budget);  // each member by its header, before inflating
    const auto config = texts.find("config");
    if (config == texts.end())
        throw error(d.what + ": not a dump of attn trace --format npz (it has no config text member)");
    const auto selection = texts.find("selection");
    if (selection != texts.end()) {
        const json parsed = json::parse(selection->second, nullptr, false);  // unreadable: not ours, ignored
        check_whole_run(&parsed, d.what);
    }
    return parse_json_document(config->second, d.what + ": config", budget);  // what it builds, within the budget
}

// ----------------------------------------------------------------------------
// load_replay's checks: flags against the dump, and what the dump lacks.

/// A replay starts where the recorded run started: at the input, or at Q, K, V.
void check_start(const std::string& what, const config& recorded, const input_paths& p) {
    for (const auto& [flag, path] : {std::pair{"--q", &p.q}, {"--k", &p.k}, {"--v", &p.v}})
        if (!path->empty() && !recorded.sources.from_projections)
            throw usage_error(std::string(flag) + " " + *path + " cannot be used with " + what +
                              ": its run starts at the input, not at the projections");
    for (const auto& [flag, path] : {std::pair{"--input", &p.input}, {"--kv-input", &p.kv_input}})
        if (!path->empty() && recorded.sources.from_projections)
            throw usage_error(std::string(flag) + " " + *path + " cannot be used with " + what +
                              ": its run starts at the projections (--q --k --v)");
}

/// The dump's mask.mask already holds every kind the recorded run ANDed into it;
/// a flag can add kinds, but not drop or change one.
/// (With Sq == Sk both causal alignments are the same mask.)
void check_mask_kinds(const std::string& what, const mask_spec& was, const mask_spec& now, bool square) {
    const std::string holds = ", but " + what + " mask.mask holds it already (ANDed with the run's " +
                              (was.from_file ? "mask file" : "key padding mask") +
                              "); give --mask-file to replace that mask";
    const auto kind = [&](bool on_was, bool on_now, const char* name, bool same, const std::string& changed_by) {
        if (!on_was) return;
        if (!on_now) throw usage_error("--mask " + mask_kinds_to_string(now) + " drops " + name + holds);
        if (!same) throw usage_error(changed_by + " changes the " + name + " mask" + holds);
    };
    std::string lengths;
    for (const std::int64_t n : now.lengths) lengths += (lengths.empty() ? "" : ",") + std::to_string(n);
    kind(was.causal, now.causal, "causal", square || was.causal_align == now.causal_align,
         "--causal-align " + std::string(causal_alignment_name(now.causal_align)));
    kind(was.padding, now.padding, "padding", was.lengths == now.lengths, "--lengths " + lengths);
    kind(was.window, now.window, "window", was.window_size == now.window_size,
         "--window " + (now.window_size ? std::to_string(*now.window_size) : std::string()));
    kind(was.random, now.random, "random", was.random_seed == now.random_seed,
         "--mask-seed " + std::to_string(now.random_seed));
    kind(was.random, now.random, "random", was.random_keep == now.random_keep,
         "--mask-keep " + shortest_text(now.random_keep));
}

/// Each tensor of the dump has the shape its config says ([B,Sq,Din] for input.x, with the
/// config's B, Sq and Din): a dump that contradicts itself is refused naming both, never
/// replayed with the tensor's sizes and the config's words.
void check_tensors_match_config(const dump& d) {
    const config& c = d.cfg;
    struct size_key {
        const char* key;
        std::int64_t value;
    };
    const size_key B{"batch", c.batch}, Sq{"seq", c.seq}, Sk{"kv_seq", c.kv_seq}, D{"d_model", c.d_model},
        Din{"d_in", c.d_in}, Dkv{"d_kv_in", c.d_kv_in}, one{"", 1};
    // a decoding step (--past N): x holds all N + Sq = Sk tokens, k and v only the Sq new ones;
    // grouped heads (--kv-heads G): k and v are G·dk wide
    const bool step = c.past > 0, grouped = c.grouped();
    const size_key Dg = grouped ? size_key{"kv_heads", c.kv_width()} : D, S_new = step ? Sq : Sk;
    const char* k_shape = step ? (grouped ? "[B,Sq,G·dk]" : "[B,Sq,D]") : (grouped ? "[B,Sk,G·dk]" : "[B,Sk,D]");
    const char* w_shape = grouped ? "[G·dk,Dkv]" : "[D,Dkv]";
    const std::map<std::string, std::pair<const char*, std::vector<size_key>>> layouts{
        {"input.x", step ? std::pair<const char*, std::vector<size_key>>{"[B,N+Sq,Din]", {B, Sk, Din}}
                         : std::pair<const char*, std::vector<size_key>>{"[B,Sq,Din]", {B, Sq, Din}}},
        {"input.x_kv", {"[B,Sk,Dkv]", {B, Sk, Dkv}}},
        {"projections.q", {"[B,Sq,D]", {B, Sq, D}}},      {"projections.k", {k_shape, {B, S_new, Dg}}},
        {"projections.v", {k_shape, {B, S_new, Dg}}},     {"params.w_q", {"[D,Din]", {D, Din}}},
        {"params.w_k", {w_shape, {Dg, Dkv}}},             {"params.w_v", {w_shape, {Dg, Dkv}}},
        {"params.w_o", {"[D,D]", {D, D}}},                {"params.b_q", {"[D]", {D}}},
        {"params.b_k", {grouped ? "[G·dk]" : "[D]", {Dg}}}, {"params.b_v", {grouped ? "[G·dk]" : "[D]", {Dg}}},
        {"params.b_o", {"[D]", {D}}},                     {"mask.mask", {"[B,1,Sq,Sk]", {B, one, Sq, Sk}}}};
    for (const auto& named : d.tensors) {
        const auto layout = layouts.find(named.first);
        if (layout == layouts.end()) continue;
        const std::vector<std::size_t>& shape = named.second.shape;
        const std::vector<size_key>& sizes = layout->second.second;
        std::string config_shape;
        bool same = shape.size() == sizes.size();
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            config_shape += (i == 0 ? "" : ",") + std::to_string(sizes[i].value);
            same = same && static_cast<std::int64_t>(shape[i]) == sizes[i].value;
        }
        if (same) continue;
        std::string keys;  // the config keys the tensor's shape contradicts: "seq 6"
        for (std::size_t i = 0; i < sizes.size() && shape.size() == sizes.size(); ++i)
            if (*sizes[i].key != '\0' && static_cast<std::int64_t>(shape[i]) != sizes[i].value)
                keys += (keys.empty() ? "" : ", ") + std::string("\"") + sizes[i].key + "\" " + std::to_string(sizes[i].value);
        throw error(d.what + ": " + named.first + " has shape " + tensor_index_text(shape) + ", but its config " +
                    (keys.empty() ? std::string("makes it ") : "says " + keys + ", which makes it ") +
                    layout->second.first + " = [" + config_shape + "]; the dump contradicts itself");
    }
}

/// A tensor the recorded run drew from its seed ("input_file": false) must be the seed's
/// draw: an edited x would be called torch.randn(...) in every output, and a --format py
/// script would draw other numbers. (Relabelling it as read from a file would move the
/// draws after it, x_kv's, away from the recorded ones: the user says it, in the config.)
void check_drawn_tensors(const dump& d, const given_tensors& given, const std::vector<std::string>& drawn) {
    const config& rec = d.cfg;
    const auto has = [&drawn](const char* name) { return std::find(drawn.begin(), drawn.end(), name) != drawn.end(); };
    // Only what is compared is drawn, and only at the sizes of the dump's own tensors (checked
    // against its config): x_kv only after an x that is compared too, or was read from a file.
    const bool x = has("input.x") && given.x.has_value();
    const bool x_kv = has("input.x_kv") && given.x_kv.has_value() && (x || rec.sources.x_from_file);
    const bool params = has("params");
    if (!x && !x_kv && !params) return;
    given_inputs files;  // what the recorded run read from files draws nothing; nor what is not compared
    if (rec.sources.params_from_file) files.params = parameters{};
    if (rec.sources.x_from_file || !(x || x_kv)) files.x = xt::xarray<float>();
    if (rec.sources.x_kv_from_file || !x_kv) files.x_kv = xt::xarray<float>();
    const inputs seed = draw_inputs(rec, std::move(files));
    const auto same = [](const xt::xarray<float>& a, const xt::xarray<float>& b) {
        return a.shape() == b.shape() && std::equal(a.begin(), a.end(), b.begin(), [](float in_dump, float drawn_value) {
                   return std::memcmp(&in_dump, &drawn_value, sizeof in_dump) == 0;  // the bits: -0, NaN
               });
    };
    const auto refuse = [&](const std::string& name, const char* key) {
        throw error(d.what + ": " + name + " is not what --seed " + std::to_string(rec.seed) + " draws, but config \"" +
                    key + "\" is false (every output would call it torch.randn or nn.Linear's draw); set \"" + key +
                    "\": true to replay it as read from a file");
    };
    if (x && !same(given.x->tensor.values, seed.x)) refuse("input.x", "input_file");
    if (x_kv && seed.x_kv && !same(given.x_kv->tensor.values, *seed.x_kv)) refuse("input.x_kv", "kv_input_file");
    if (!params) return;
    const parameters& p = seed.params;
    const std::pair<const char*, const xt::xarray<float>*> drawn_params[] = {
        {"w_q", &p.w_q}, {"w_k", &p.w_k}, {"w_v", &p.w_v}, {"b_q", p.b_q ? &*p.b_q : nullptr},
        {"b_k", p.b_k ? &*p.b_k : nullptr}, {"b_v", p.b_v ? &*p.b_v : nullptr},
        {"w_o", p.w_o ? &*p.w_o : nullptr}, {"b_o", p.b_o ? &*p.b_o : nullptr}};
    for (const auto& param : drawn_params) {
        const auto it = given.params.find(param.first);
        if (it == given.params.end() || param.second == nullptr || param.second->size() == 0) continue;
        if (!same(it->second.values, *param.second)) refuse(std::string("params.") + param.first, "params_file");
    }
}

/// Moves the tensors a replay starts from out of the dump into `given` (a file flag's
/// tensor stays); returns the names of those the recorded run drew from its seed.
std::vector<std::string> take_from_dump(dump& d, const config& c, given_tensors& given) {
    const config& rec = d.cfg;
    std::vector<std::string> drawn;
    const auto take = [&](std::optional<named_tensor>& slot, const std::string& name, bool from_file) {
        const auto it = d.tensors.find(name);
        if (slot || it == d.tensors.end()) return;
        slot = named_tensor{d.what + " " + name, std::move(it->second)};
        if (!from_file) drawn.push_back(name);
    };
    if (!c.sources.from_projections) {
        take(given.x, "input.x", rec.sources.x_from_file);
        take(given.x_kv, "input.x_kv", rec.sources.x_kv_from_file);
    } else {
        take(given.q, "projections.q", true);
        take(given.k, "projections.k", true);
        take(given.v, "projections.v", true);
    }
    if (given.params_what.empty()) {
        for (const char* name : param_names)
            if (const auto it = d.tensors.find(std::string("params.") + name); it != d.tensors.end())
                given.params[name] = std::move(it->second);
        if (!given.params.empty()) {
            given.params_what = d.what;
            if (!rec.sources.params_from_file) drawn.emplace_back("params");
        }
    }
    if (rec.mask.from_file || rec.mask.key_padding) {
        take(given.mask, "mask.mask", true);
        given.mask_is_keep = given.mask.has_value();  // the dump holds attn's own keep-mask
    }
    return drawn;
}

/// The recorded run read these from files; a dump that lacks them cannot replay it.
void check_file_tensors(const dump& d, const config& c, const given_tensors& given) {
    const config& rec = d.cfg;
    const auto lacks = [&](const std::string& array, const std::string& flag, const std::string& stage) {
        throw error(d.what + ": no array " + array + ": the run read it from " + flag +
                    ", and the dump does not hold it (give " + flag + " FILE, or dump the " + stage + " stage)");
    };
    if (!c.sources.from_projections && rec.sources.x_from_file && !given.x) lacks("input.x", "--input", "input");
    if (!c.sources.from_projections && rec.sources.x_kv_from_file && !given.x_kv) lacks("input.x_kv", "--kv-input", "input");
    if (c.sources.from_projections && !given.q) lacks("projections.q", "--q", "projections");
    if (c.sources.from_projections && !given.k) lacks("projections.k", "--k", "projections");
    if (c.sources.from_projections && !given.v) lacks("projections.v", "--v", "projections");
    if (rec.sources.params_from_file && given.params_what.empty() && !c.sources.from_projections) lacks("params.w_q", "--params", "params");
    if (rec.sources.params_from_file && given.params_what.empty() && c.sources.from_projections && c.out_proj)
        throw error(d.what + ": no array params.w_o: the run read w_o and b_o from --params, and a run that starts "
                             "at the projections has no params stage to dump (give --params FILE)");
    if ((rec.mask.from_file || rec.mask.key_padding) && !given.mask)
        lacks("mask.mask", rec.mask.from_file ? "--mask-file" : "--key-padding-mask", "mask");
}

/// draw_inputs skips a given tensor without drawing it, as a file flag does; a tensor
/// the recorded run drew must not shift the draws after it. When the dump holds some
/// drawn tensors and lacks others, the recorded run's draws are made again and the
/// lacking ones taken from them.
void draw_as_recorded(loaded_inputs& in, bool drawn_taken) {
    given_inputs& g = in.given;
    const config& c = in.cfg;
    const bool params_lack = !g.params && (!c.sources.from_projections || c.out_proj);
    const bool x_lacks = !c.sources.from_projections && !g.x;
    const bool x_kv_lacks = !c.sources.from_projections && c.cross() && !g.x_kv;
    if (!drawn_taken || !(params_lack || x_lacks || x_kv_lacks)) return;
    given_inputs files;  // what the run read from files, which draws nothing
    if (c.sources.params_from_file) files.params = g.params;
    if (c.sources.x_from_file) files.x = g.x;
    if (c.sources.x_kv_from_file) files.x_kv = g.x_kv;
    inputs drawn = draw_inputs(c, std::move(files));
    if (params_lack) g.params = std::move(drawn.params);
    if (x_lacks) g.x = std::move(drawn.x);
    if (x_kv_lacks) g.x_kv = std::move(drawn.x_kv);
}

}  // namespace

bool replay_reads(const std::string& name) {
    static const std::set<std::string> names = [] {
        std::set<std::string> n{"input.x", "input.x_kv", "projections.q", "projections.k", "projections.v", "mask.mask"};
        for (const char* p : param_names) n.insert(std::string("params.") + p);
        return n;
    }();
    return names.count(name) > 0;
}

config config_from_json(const json& j, const std::string& what) {
    config_reader k(j, what);
    config c;
    for (const config_field& field : config_fields())
        if (field.read != nullptr && (field.required || k.has(field.key))) field.read(k, c);
    if (c.pos == position_encoding::rope && c.seq >= 1 && c.heads > 0 && c.d_model % c.heads == 0 && c.head_dim() % 2 == 0) {
        const std::string problem = rope_base_problem(c.rope_base, static_cast<std::size_t>(c.head_dim()), c.past + c.seq - 1);
        if (!problem.empty()) k.wrong("rope_base", "a base rope can use: " + problem);
    }
    // a model's own layer: BERT's and nn.MultiheadAttention's replay from their params; a layer
    // with a norm before attention does not (the dump holds the norm's weights, the replay does not read them)
    if (k.has("tokens"))  // layer 0 from a model's token ids: the dump lacks the embedding tables' other rows
        throw error(what + ": a run from a model's --tokens" +
                    (c.sources.model.empty() ? std::string() : " (" + c.sources.model + ")") +
                    " does not replay with --from; run it again with --params and --tokens");
    if (k.has("norm")) {
        k.text("norm");
        if (k.has("norm_eps")) k.number("norm_eps");
        throw error(what + ": a model layer with a norm before attention (" +
                    (c.sources.model.empty() ? "norm" : c.sources.model) +
                    ") does not replay with --from; run it again with --params and --input");
    }
    // a model layer's block after attention: its MLP's weights are not in the dump, so a replay
    // is the attention's stages (read_dump says so: dump::block_left_out)
    if (k.has("block") && !k.at("block").is_object()) k.wrong("block", "an object");
    check_derived(k, c, what);
    k.no_others();
    try {
        validate(c);
    } catch (const usage_error& e) {
        throw error(what + ": config is not a run attn can make: " + e.what());
    }
    return c;
}

dump read_dump(const std::string& path, read_budget* budget) {
    dump d;
    d.what = "--from " + path;
    const std::string extension = file_extension(path);
    json config;
    if (extension == ".npz") config = read_npz_dump(path, d, budget);
    else if (extension == ".json") config = read_json_dump(path, d, budget);
    else if (extension == ".jsonl")
        throw error(d.what + ": --format jsonl has no config to replay; dump with --format json or --format npz");
    else
        throw error(d.what + ": expected a dump of attn trace: .npz (--format npz) or .json (--format json)");
    d.cfg = config_from_json(config, d.what);
    d.block_left_out = config.is_object() && config.contains("block");
    check_tensors_match_config(d);
    return d;
}

loaded_inputs load_replay(dump d, config c, const size_flags& sizes, const input_paths& paths) {
    const config& rec = d.cfg;
    check_start(d.what, rec, paths);
    if (!paths.mask.empty() && rec.mask.key_padding)
        throw usage_error("--mask-file " + paths.mask + " cannot replace the mask of " + d.what +
                          ": its mask.mask holds the run's key padding mask too");
    c.sources.from_projections = rec.sources.from_projections;
    c.sources.x_from_file = rec.sources.x_from_file || !paths.input.empty();
    c.sources.x_kv_from_file = rec.sources.x_kv_from_file || !paths.kv_input.empty();
    c.sources.params_from_file = rec.sources.params_from_file || !paths.params.empty();
    c.mask.from_file = rec.mask.from_file || !paths.mask.empty();

    read_budget budget(c.limits.max_memory == 0 ? read_budget::unlimited : c.limits.max_memory);
    given_tensors given = read_given_files(paths, &budget);
    const std::vector<std::string> drawn = take_from_dump(d, c, given);
    check_drawn_tensors(d, given, drawn);
    check_file_tensors(d, c, given);
    if (c.seed != rec.seed && !drawn.empty())
        throw usage_error("--seed " + std::to_string(c.seed) + " contradicts " + d.what + ", whose " + join(drawn, ", ", " and ") +
                          (drawn.size() == 1 && drawn[0] != "params" ? " was" : " were") + " drawn with --seed " +
                          std::to_string(rec.seed) + " (a replay takes them as they are)");
    if (given.mask && paths.mask.empty()) check_mask_kinds(d.what, rec.mask, c.mask, rec.seq == rec.kv_seq);
    if (given.x_kv) c.separate_kv = true;  // keys and values come from it, as with --kv-input

    loaded_inputs in = check_inputs(c, sizes, std::move(given), &rec);
    draw_as_recorded(in, !drawn.empty());
    if (d.block_left_out)
        in.warnings.push_back({"", d.what + ": the stages after attention (residual, mlp_norm, mlp, block) are not "
                                            "replayed: a dump holds no MLP weights; run the layer again with --params"});
    return in;
}

}  // namespace attn
