#include "attn/io/json_document.hpp"

#include <algorithm>

#include "attn/compute/error.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {

nlohmann::json parse_json_document(const std::string& text, const std::string& what) {
    using json = nlohmann::json;
    // the callback sees each value's depth before the value is kept: nothing deep is ever built
    const json::parser_callback_t within_depth = [&what](int depth, json::parse_event_t, json&) {
        if (depth > static_cast<int>(max_json_depth))
            throw error(what + ": nested more than " + std::to_string(max_json_depth) +
                        " levels deep; no document attn reads is");
        return true;
    };
    try {
        return json::parse(text, within_depth);
    } catch (const json::exception& e) {  // a syntax error; a number past double's range (1e400)
        throw error(what + ": not valid JSON: " + json_message(e));
    }
}

std::string json_excerpt(const nlohmann::json& v) {
    constexpr std::size_t longest = 60;
    const auto text = [](const nlohmann::json& flat) {
        return flat.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    };
    const auto cut = [&](const std::string& written) {  // on a character boundary, with how long it was
        return written.size() <= longest ? written : quoted_field(written, longest);
    };
    if (v.is_string() && v.get_ref<const std::string&>().size() > longest) {  // not dumped whole: it may be 50 MB
        const std::string& whole = v.get_ref<const std::string&>();
        return text(whole.substr(0, character_boundary(whole, longest))) + "... (" + std::to_string(whole.size()) +
               " bytes)";
    }
    const bool flat = std::all_of(v.begin(), v.end(), [](const nlohmann::json& item) { return item.is_primitive(); });
    if (v.is_array() && flat) return cut(text(v));  // [2,"x"]: one level, dumped without recursion
    if (v.is_array()) return "a list of " + std::to_string(v.size()) + (v.size() == 1 ? " item" : " items");
    if (v.is_object()) return "an object of " + std::to_string(v.size()) + (v.size() == 1 ? " key" : " keys");
    return cut(text(v));
}

std::string json_message(const std::exception& e) {
    const std::string message = e.what();
    const std::size_t end = message.rfind("] ", 40);
    return message.rfind("[json.exception.", 0) == 0 && end != std::string::npos ? message.substr(end + 2) : message;
}

}  // namespace attn
