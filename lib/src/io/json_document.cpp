#include "attn/io/json_document.hpp"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "attn/compute/error.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {

void check_no_nul(const std::string& text, const std::string& what) {
    const std::size_t at = text.find('\0');
    if (at != std::string::npos)
        throw error(what + ": a NUL byte at offset " + std::to_string(at) + "; JSON text holds none (is the file cut or not JSON?)");
}

nlohmann::json parse_json_document(const std::string& text, const std::string& what, const read_budget* budget) {
    using json = nlohmann::json;
    check_no_nul(text, what);
    if (budget) budget->check(text.size(), what, "its text");
    std::uint64_t held = text.size();           // the text, then each value and key as it is built
    std::vector<std::set<std::string>> keys;    // the keys of each object open, innermost last
    // the callback sees each value's depth before the value is kept: nothing deep is ever built
    const json::parser_callback_t within_limits = [&](int depth, json::parse_event_t event, json& parsed) {
        if (depth > static_cast<int>(max_json_depth))
            throw error(what + ": nested more than " + std::to_string(max_json_depth) +
                        " levels deep; no document attn reads is");
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
        if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second)
            throw error(what + ": the key " + json_excerpt(parsed) + " appears twice in one object (which one counts?)");
        if (event == json::parse_event_t::key) held += json_key_bytes + 2 * parsed.get_ref<const std::string&>().size();
        if (event == json::parse_event_t::value || event == json::parse_event_t::object_start ||
            event == json::parse_event_t::array_start)
            held += json_value_bytes + (parsed.is_string() ? parsed.get_ref<const std::string&>().size() : 0);
        if (budget) budget->check(held, what, "its text with the values parsed from it");
        return true;
    };
    try {
        return json::parse(text, within_limits);
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
