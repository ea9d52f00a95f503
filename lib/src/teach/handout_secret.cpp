#include "attn/teach/handout_secret.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

std::optional<std::string> handout_secret_mismatch(const exercise_variant& v, const std::string& answer_path,
                                                   const read_budget* budget) {
    const std::filesystem::path handout = std::filesystem::path(answer_path).parent_path() / "exercise.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(handout, ec)) return std::nullopt;
    // within the run's read budget, as every file attn reads (over_budget: one clear error, not a
    // hand-out silently not looked into); only "id" and "secret_fingerprint" are kept of the tree,
    // not the given tensors beside them
    std::string text;
    try {
        text = read_text_file(handout.string(), printable_text(handout.string()), budget);
    } catch (const over_budget&) {
        throw;
    } catch (const error&) {
        return std::nullopt;  // unreadable: the grading goes on, as for a file that is not a hand-out
    }
    const nlohmann::json j = nlohmann::json::parse(
        text,
        [](int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
            if (event == nlohmann::json::parse_event_t::key && depth == 1)
                return parsed == "id" || parsed == "secret_fingerprint";
            return true;
        },
        false);  // not JSON attn can read (is_discarded): the grading goes on, from the teacher's truth
    if (!j.is_object() || !j.contains("secret_fingerprint") || j.value("id", nlohmann::json()) != v.ex->id)
        return std::nullopt;
    const nlohmann::json& said = j["secret_fingerprint"];
    if (!said.is_null() && !said.is_string()) return std::nullopt;
    const std::string made_with = said.is_string() ? said.get<std::string>() : "";
    if (made_with == v.secret_fingerprint) return std::nullopt;
    const std::string where = printable_text(handout.string());
    if (made_with.empty())
        return where + " says the hand-out was made without a class secret, but one is set (fingerprint " +
               v.secret_fingerprint + "): its numbers come from the seed it states; grade it without " +
               "ATTN_CLASS_SECRET and --secret";
    const std::string made = "the hand-out was made with a class secret of fingerprint " + quoted_field(made_with, 16);
    if (v.secret_fingerprint.empty())
        return where + " says " + made + ", and none is set: grade with that secret (ATTN_CLASS_SECRET or --secret FILE)";
    return where + " says " + made + ", and the secret set has fingerprint " + v.secret_fingerprint +
           ": grade with the secret the hand-out was made with";
}

}  // namespace attn
