// Classroom exercises (exercise.hpp): reading the files, finding them, a variant per student.
#include "attn/teach/exercise.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <set>

#include <nlohmann/json.hpp>

#include "attn/compute/attention.hpp"
#include "attn/compute/checked.hpp"
#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/io/replay.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/text/index_text.hpp"

namespace attn {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

/// The keys of an exercise file, each read with a message naming the file and the key.
class exercise_keys {
public:
    exercise_keys(const json& j, const std::string& path) : j_(j), path_(path) {
        if (!j.is_object()) fail("expected a JSON object");
    }
    const json& at(const char* key) const {
        if (!j_.contains(key)) fail(std::string("no \"") + key + "\"");
        return j_.at(key);
    }
    std::string text(const char* key) const {
        if (!at(key).is_string()) wrong(key, "a string");
        return plain(key, j_.at(key).get<std::string>());
    }
    std::vector<std::string> texts(const char* key) const {
        const json& v = at(key);
        if (!v.is_array()) wrong(key, "a list of strings");
        std::vector<std::string> out;
        for (const json& s : v) {
            if (!s.is_string()) wrong(key, "a list of strings");
            out.push_back(plain(key, s.get<std::string>()));
        }
        return out;
    }
    /// `text`, which attn prints and writes into task.md and HTML, unless it holds a character
    /// printable_text would escape (ESC, BEL, a C1 control such as U+009B, a bidirectional
    /// control, U+2028): one could retitle or recolour the terminal of whoever reads the
    /// exercise, or show its words in another order than they are.
    std::string plain(const char* key, std::string text) const {
        if (const auto c = find_unsafe_character(text))
            fail(std::string("\"") + key + "\" holds " + unsafe_character_kind(c->code) + " (" +
                 code_point_name(c->code) + " at byte " + std::to_string(c->at) + "); exercise texts are plain text");
        return text;
    }
    [[noreturn]] void wrong(const char* key, const std::string& expected) const {
        fail(std::string("\"") + key + "\" is " + json_excerpt(j_.at(key)) + "; expected " + expected);
    }
    [[noreturn]] void fail(const std::string& what) const { throw error(path_ + ": " + what); }

private:
    const json& j_;
    const std::string& path_;
};

/// The config keys an exercise gives, completed with attn trace's defaults (CLI.md):
/// B 1, Sq 4, Sk = Sq, D 8, H 2, Din = D, Dkv = Din, biases and output projection on,
/// seed 0, no mask, fill -inf; head_dim and cross derived. A fill may be written as
/// text ("-1e9"), kept as typed. Then read as a dump's config is (replay.hpp).
config exercise_config(json j, const std::string& path) {
    if (!j.is_object()) throw error(path + ": \"config\" is " + json_excerpt(j) + "; expected a JSON object");
    const auto fill_in = [&j](const char* key, const json& value) {
        if (!j.contains(key)) j[key] = value;
    };
    fill_in("batch", 1);
    fill_in("seq", 4);
    fill_in("past", 0);  // a decoding step (--past N): Sk = N + Sq, causal aligned lower-right
    const bool step = j["past"].is_number_integer() && j["past"].get<std::int64_t>() > 0;
    if (step && j["seq"].is_number_integer()) {
        const auto keys = checked_add(j["seq"].get<std::int64_t>(), j["past"].get<std::int64_t>());
        if (!keys)
            throw error(path + ": config \"past\" is " + j["past"].dump() + " and \"seq\" " + j["seq"].dump() +
                        ": Sk = past + seq does not fit a 64-bit size");
        fill_in("kv_seq", *keys);
    }
    if (step) fill_in("causal_align", "lower-right");
    fill_in("kv_seq", j["seq"]);
    fill_in("d_model", 8);
    fill_in("heads", 2);
    fill_in("d_in", j["d_model"]);
    fill_in("d_kv_in", j["d_in"]);
    fill_in("qkv_bias", true);
    fill_in("out_proj", true);
    fill_in("seed", 0u);  // unsigned, as a dump writes it
    fill_in("mask", "none");
    fill_in("fill", "-inf");
    if (j["fill"].is_string() && j["fill"] != "-inf") {  // "-1e9": the number, and the text as typed
        const std::string typed = j["fill"].get<std::string>();
        try {
            j["fill"] = std::stod(typed);
        } catch (const std::exception&) {
            throw error(path + ": config \"fill\" is \"" + typed + "\"; expected \"-inf\" or a number");
        }
        fill_in("fill_text", typed);
    }
    if (j["d_model"].is_number_integer() && j["heads"].is_number_integer() && j["heads"].get<std::int64_t>() > 0)
        fill_in("head_dim", j["d_model"].get<std::int64_t>() / j["heads"].get<std::int64_t>());
    fill_in("cross", (!step && j["kv_seq"] != j["seq"]) || j["d_kv_in"] != j["d_in"]);
    config c = config_from_json(j, path);  // validated as the flags are
    try {
        check_addressable(c);  // sizes whose tensors would wrap size_t
    } catch (const usage_error& e) {
        throw error(path + ": config is not a run attn can make: " + e.what());
    }
    return c;
}

/// Whether the stage called `stage` can hold a tensor called `tensor` (stage_table.hpp).
bool stage_has_tensor(std::string_view stage, std::string_view tensor) {
    const stage_info* info = find_stage_info(stage);
    return info != nullptr && std::find(info->tensors.begin(), info->tensors.end(), tensor) != info->tensors.end();
}

/// "scaled.scaled" -> {"scaled", "scaled"}; throws naming the file for anything else.
std::pair<std::string, std::string> split_key(const std::string& key, const exercise& e) {
    const std::size_t dot = key.find('.');
    if (dot == std::string::npos)
        throw error(e.path + ": given \"" + key + "\": expected stage.tensor, e.g. \"transpose.q\"");
    std::string stage = key.substr(0, dot), tensor = key.substr(dot + 1);
    if (!stage_has_tensor(stage, tensor) || !stage_in_run(e.cfg, stage))
        throw error(e.path + ": given \"" + key + "\": this exercise's run has no such tensor");
    return {stage, tensor};
}

std::vector<std::size_t> read_shape(const json& v, const exercise_keys& k) {
    if (!v.is_array()) k.fail("\"answer\" \"shape\" is " + json_excerpt(v) + "; expected a list of sizes");
    std::vector<std::size_t> shape;
    for (const json& n : v) {
        if (!n.is_number_unsigned()) k.fail("\"answer\" \"shape\" is " + json_excerpt(v) + "; expected a list of sizes");
        shape.push_back(n.get<std::size_t>());
    }
    return shape;
}

void read_answer(const json& a, const exercise_keys& k, exercise& e) {
    if (a.is_object() && a.contains("kind")) {
        const json& kind = a["kind"];
        if (kind == "shapes") e.kind = answer_kind::shapes;
        else if (kind == "strides") e.kind = answer_kind::strides;
        else if (kind != "tensor") k.fail("answer \"kind\" is " + json_excerpt(kind) + "; expected \"tensor\", \"shapes\" or \"strides\"");
        if (e.kind == answer_kind::shapes) {
            if (a.size() != 1) k.wrong("answer", "{\"kind\": \"shapes\"} and no other key (every stage is asked for)");
            return;
        }
    }
    if (!a.is_object() || !a.contains("stage") || !a.contains("tensor") || !a.contains("shape") ||
        !a["stage"].is_string() || !a["tensor"].is_string())
        k.wrong("answer", "{\"stage\": ..., \"tensor\": ..., \"shape\": [...]}");
    e.answer_stage = a["stage"].get<std::string>();
    e.answer_tensor = a["tensor"].get<std::string>();
    e.answer_shape = read_shape(a["shape"], k);
    if (!stage_has_tensor(e.answer_stage, e.answer_tensor) || !stage_in_run(e.cfg, e.answer_stage))
        k.fail("answer " + e.answer_stage + "." + e.answer_tensor + ": this exercise's run has no such tensor");
}

/// One object of "mistakes": {"id": ..., "like": ..., "way": N, "message": ...}.
own_mistake read_own_mistake(const json& m, const exercise_keys& k) {
    const std::string shape = "{\"id\": \"your_id\", \"like\": \"a diagnosis id\", \"message\": \"...\"} (\"way\": N optional)";
    if (!m.is_object() || !m.contains("id") || !m.contains("like") || !m.contains("message") || !m["id"].is_string() ||
        !m["like"].is_string() || !m["message"].is_string())
        k.fail("mistakes: " + json_excerpt(m) + ": expected a diagnosis id or " + shape);
    for (const auto& item : m.items())
        if (item.key() != "id" && item.key() != "like" && item.key() != "message" && item.key() != "way")
            k.fail("mistakes: " + json_excerpt(m) + ": unknown key \"" + item.key() + "\" (expected " + shape + ")");
    own_mistake own{k.plain("mistakes", m["id"].get<std::string>()), k.plain("mistakes", m["like"].get<std::string>()),
                    std::nullopt, k.plain("mistakes", m["message"].get<std::string>())};
    const auto& likes = own_mistake_likes();
    const bool snake = !own.id.empty() && own.id.size() <= 64 && own.id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") ==
                       std::string::npos && own.id[0] >= 'a' && own.id[0] <= 'z';
    if (!snake) k.fail("mistakes: id \"" + own.id + "\": expected snake_case, a-z, 0-9 and _, starting with a letter");
    if (std::find(likes.begin(), likes.end(), own.id) != likes.end() || own.id == "unknown")
        k.fail("mistakes: id \"" + own.id + "\" is attn's own diagnosis id: give yours another name");
    if (std::find(likes.begin(), likes.end(), own.like) == likes.end())
        k.fail("mistakes: " + own.id + ": \"like\": \"" + own.like + "\" is not a diagnosis id it can be like "
               "(share/attn/exercises/README.md lists them)");
    if (own.message.empty()) k.fail("mistakes: " + own.id + ": \"message\" is empty");
    if (m.contains("way")) {
        const std::optional<mistake> named = parse_mistake(own.like);
        if (!named) k.fail("mistakes: " + own.id + ": \"way\" needs \"like\" to be a mistake id");
        if (!m["way"].is_number_integer() || m["way"].get<int>() < 0 || m["way"].get<int>() >= mistake_variants(*named))
            k.fail("mistakes: " + own.id + ": \"way\": " + own.like + " has ways 0 to " +
                   std::to_string(mistake_variants(*named) - 1));
        own.way = m["way"].get<int>();
    }
    return own;
}

/// "mistakes": diagnosis ids and own mistakes; at least one.
void read_mistakes(const exercise_keys& k, exercise& e) {
    const json& list = k.at("mistakes");
    if (!list.is_array()) k.wrong("mistakes", "a list of diagnosis ids and own mistakes");
    for (const json& item : list) {
        if (item.is_string()) {
            const std::string id = item.get<std::string>();
            const std::optional<mistake> m = parse_mistake(id);
            if (!m || *m == mistake::none) k.fail("mistakes: \"" + id + "\" is not a diagnosis id");
            e.mistakes.push_back(*m);
            continue;
        }
        own_mistake own = read_own_mistake(item, k);
        for (const own_mistake& before : e.own_mistakes)
            if (before.id == own.id) k.fail("mistakes: id \"" + own.id + "\" is given twice");
        e.own_mistakes.push_back(std::move(own));
    }
}

void read_optional_keys(const json& j, const exercise_keys& k, exercise& e) {
    if (j.contains("source")) e.source = k.text("source");
    if (j.contains("tolerance")) {
        const json& t = j["tolerance"];
        if (!t.is_object() || !t.value("atol", json(0.0)).is_number() || !t.value("rtol", json(0.0)).is_number())
            k.wrong("tolerance", "{\"atol\": number, \"rtol\": number}");
        e.tolerance.atol = t.value("atol", e.tolerance.atol);
        e.tolerance.rtol = t.value("rtol", e.tolerance.rtol);
    }
}

/// FNV-1a, 64 bits: a small, documented, stable hash (the same on every machine).
std::uint64_t fnv1a_64(std::string_view text) {
    std::uint64_t h = 14695981039346656037ull;
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace

exercise read_exercise(const std::string& path, const read_budget* budget) {
    const json j = parse_json_document(read_text_file(path, path, budget), path, budget);
    const exercise_keys k(j, path);
    exercise e;
    e.path = path;
    if (!k.at("number").is_number_unsigned() || k.at("number").get<std::uint64_t>() == 0 ||
        k.at("number").get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
        k.wrong("number", "a whole number from 1 to " + std::to_string(std::numeric_limits<int>::max()));
    e.number = k.at("number").get<int>();
    e.id = k.text("id");
    e.title = k.text("title");
    e.task = k.texts("task");
    e.cfg = exercise_config(k.at("config"), path);
    e.given = k.texts("given");
    std::set<std::string> names;
    for (const std::string& key : e.given)
        if (!names.insert(split_key(key, e).second).second)
            k.fail("given \"" + key + "\": another given tensor has the name too (files are named after it)");
    read_answer(k.at("answer"), k, e);
    e.hints = k.texts("hints");
    read_mistakes(k, e);
    read_optional_keys(j, k, e);
    return e;
}

std::vector<exercise> read_exercises(const std::string& dir, std::vector<std::string>* skipped,
                                     const read_budget* budget) {
    std::vector<std::string> paths;
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->path().extension() != ".json") continue;
        std::error_code kind_ec;  // a FIFO would block the read for ever, a device give anything
        if (it->is_regular_file(kind_ec)) paths.push_back(it->path().string());
        else if (skipped != nullptr) skipped->push_back(it->path().string());
    }
    if (ec) throw error(dir + ": cannot read the exercises: " + ec.message());
    std::vector<exercise> all;
    for (const std::string& path : paths) all.push_back(read_exercise(path, budget));
    std::sort(all.begin(), all.end(), [](const exercise& a, const exercise& b) { return a.number < b.number; });
    for (std::size_t i = 1; i < all.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j) {
            if (all[i].number == all[j].number || all[i].id == all[j].id)
                throw error(all[i].path + ": exercise " + std::to_string(all[i].number) + " (" + all[i].id +
                            ") has the number or id of " + all[j].path);
        }
    }
    return all;
}

std::string find_exercise_dir(const std::vector<std::string>& candidates) {
    std::string looked;
    for (const std::string& dir : candidates) {
        if (dir.empty()) continue;
        const fs::path exercises = fs::path(dir) / "exercises";
        std::error_code ec;
        if (fs::is_directory(exercises, ec)) return exercises.string();
        looked += (looked.empty() ? "" : ", ") + exercises.string();
    }
    throw error("cannot find the exercises (looked in " + looked +
                "); set ATTN_SHARE_DIR to the folder that holds exercises/");
}

const exercise& find_exercise(const std::vector<exercise>& all, std::string_view which) {
    for (const exercise& e : all)
        if (std::to_string(e.number) == which || e.id == which) return e;
    std::string there;
    if (!all.empty())
        there = "; there are " + std::to_string(all.front().number) + " to " + std::to_string(all.back().number) +
                " (attn exercise list)";
    throw usage_error("exercise " + std::string(which) + ": no such exercise" + there);
}

std::uint64_t student_seed(const exercise& e, std::string_view student, std::string_view secret) {
    if (!secret.empty()) return fnv1a_64(std::string(secret) + "\n" + e.id + ":" + std::string(student)) % (1ull << 31);
    if (student.empty()) return e.cfg.seed;
    const std::uint64_t h = fnv1a_64(e.id + ":" + std::string(student));
    return (h ^ e.cfg.seed) % (1ull << 31);
}

std::string secret_fingerprint(std::string_view secret) {
    if (secret.empty()) return "";
    char hex[16];
    std::snprintf(hex, sizeof hex, "%08llx",
                  static_cast<unsigned long long>(fnv1a_64("attn class secret fingerprint\n" + std::string(secret)) >> 32));
    return hex;
}

exercise_variant make_variant(const exercise& e, std::string_view student, std::string_view secret) {
    exercise_variant v;
    v.ex = &e;
    v.student = std::string(student);
    v.secret = !secret.empty();
    v.secret_fingerprint = secret_fingerprint(secret);
    v.cfg = e.cfg;
    v.cfg.seed = student_seed(e, student, secret);
    v.in = draw_inputs(v.cfg);
    v.run = compute_trace(v.cfg, v.in);
    for (const std::string& key : e.given) {
        const std::size_t dot = key.find('.');
        const stage* s = v.run.find(key.substr(0, dot));
        const std::string name = key.substr(dot + 1);
        const tensor* found = nullptr;
        for (std::size_t i = 0; s != nullptr && i < s->tensors.size(); ++i)
            if (s->tensors[i].name == name) found = &s->tensors[i];
        if (found == nullptr)
            throw error(e.path + ": given \"" + key + "\": this exercise's run has no such tensor");
        v.given.push_back({key, name, *found});
    }
    if (e.kind == answer_kind::shapes) return v;  // every stage: nothing more to check
    const stage* s = v.run.find(e.answer_stage);
    if (s == nullptr) throw error(e.path + ": answer " + e.answer_stage + ": this exercise's run has no such stage");
    const tensor& answer = s->at(e.answer_tensor);
    const std::vector<std::size_t> shape(answer.values.shape().begin(), answer.values.shape().end());
    if (shape != e.answer_shape)
        throw error(e.path + ": answer shape " + tensor_index_text(e.answer_shape) + " is not the run's " +
                    tensor_index_text(shape));
    return v;
}

const std::vector<std::string>& own_mistake_likes() {
    static const std::vector<std::string> likes = [] {
        std::vector<std::string> ids;
        for (mistake m : all_mistakes()) ids.emplace_back(mistake_id(m));
        for (const char* id : {"planes_transposed", "weight_where_masked", "zero_where_allowed", "rows_not_normalized",
                               "right_values_other_shape"})
            ids.emplace_back(id);
        return ids;
    }();
    return likes;
}

namespace {

/// A diagnosis one of the exercise's own mistakes is like becomes that mistake.
check_report with_own_mistakes(const exercise_variant& v, check_report r) {
    if (r.match) return r;
    for (const own_mistake& own : v.ex->own_mistakes) {
        if (own.like != r.diagnosis_id || (own.way && *own.way != r.diagnosis_way)) continue;
        r.diagnosis_like = r.diagnosis_id;
        r.diagnosis_id = own.id;
        r.diagnosis_message = own.message;
        break;
    }
    return r;
}

}  // namespace

check_report check_exercise(const exercise_variant& v, const loaded_tensor& answer) {
    return with_own_mistakes(v, check_answer(v.cfg, v.in, v.ex->answer_stage, v.ex->answer_tensor, answer, v.ex->tolerance));
}

std::optional<check_report> check_exercise_shape(const exercise_variant& v, const std::vector<std::size_t>& answer_shape) {
    std::optional<check_report> r =
        check_answer_shape(v.cfg, v.ex->answer_stage, v.ex->answer_tensor, answer_shape, v.ex->tolerance);
    if (r) r = with_own_mistakes(v, std::move(*r));
    return r;
}

}  // namespace attn
