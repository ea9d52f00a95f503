// A dump's config read key by key (config_reader.hpp).
#include "attn/io/config_reader.hpp"

#include <limits>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/text/number_text.hpp"

namespace attn {
namespace {
constexpr std::size_t longest_text = 64;
}

using json = nlohmann::json;

config_reader::config_reader(const json& j, const std::string& what) : j_(j), what_(what) {
    if (!j.is_object()) throw error(what + ": config is " + json_excerpt(j) + "; expected a JSON object");
}

bool config_reader::has(const char* key) {
    seen_.insert(key);
    return j_.contains(key);
}

const json& config_reader::at(const char* key) {
    if (!has(key)) throw error(what_ + ": config has no \"" + key + "\"");
    return j_.at(key);
}

std::int64_t config_reader::whole(const char* key) {
    const json& v = at(key);
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())))
        wrong(key, "a whole number");
    return v.get<std::int64_t>();
}

std::uint64_t config_reader::unsigned_whole(const char* key) {
    return typed<std::uint64_t>(key, &json::is_number_unsigned, "a whole number, 0 or more");
}

double config_reader::number(const char* key) { return typed<double>(key, &json::is_number, "a number"); }

double config_reader::number_from(const char* key, double lo, double hi) {
    const double value = number(key);
    if (!(value >= lo && value <= hi)) wrong(key, "a number from " + shortest_text(lo) + " to " + shortest_text(hi));
    return value;
}

bool config_reader::flag(const char* key) { return typed<bool>(key, &json::is_boolean, "true or false"); }

std::string config_reader::text(const char* key) {
    std::string value = typed<std::string>(key, &json::is_string, "a string");
    if (value.size() > longest_text)
        throw error(what_ + ": config \"" + key + "\" is a string of " + std::to_string(value.size()) +
                    " bytes; expected at most " + std::to_string(longest_text));
    return value;
}

void config_reader::wrong(const char* key, const std::string& expected) const {
    throw error(what_ + ": config \"" + key + "\" is " + json_excerpt(j_.at(key)) + "; expected " + expected);
}

void config_reader::no_others() const {
    for (const auto& item : j_.items())
        if (!seen_.count(item.key()))
            throw error(what_ + ": config \"" + item.key() + "\" is not a setting this attn knows (a dump of a newer attn?)");
}

template <class T>
T config_reader::typed(const char* key, bool (json::*is)() const noexcept, const char* expected) {
    if (!(at(key).*is)()) wrong(key, expected);
    return j_.at(key).get<T>();
}

}  // namespace attn
