#include "attn/teach/handout_secret.hpp"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {
namespace {

/// A hand-out's exercise.json holds the given tensors too; a larger one is not looked into.
constexpr std::uint64_t handout_bytes = std::uint64_t{16} << 20;

}  // namespace

std::optional<std::string> handout_secret_mismatch(const exercise_variant& v, const std::string& answer_path) {
    const std::filesystem::path handout = std::filesystem::path(answer_path).parent_path() / "exercise.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(handout, ec)) return std::nullopt;
    nlohmann::json j;
    try {
        j = parse_json_document(read_bounded_text(handout.string(), handout.string(), handout_bytes, "16 MiB"),
                                handout.string());
    } catch (const error&) {
        return std::nullopt;  // not a hand-out attn can read: the grading goes on, from the teacher's truth
    }
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
