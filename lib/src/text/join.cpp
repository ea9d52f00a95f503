#include "attn/text/join.hpp"

namespace attn {

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
    return join(parts, separator, separator);
}

std::string join(const std::vector<std::string>& parts, std::string_view separator, std::string_view last) {
    std::string text;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        if (i > 0) text += i + 1 == parts.size() ? last : separator;
        text += parts[i];
    }
    return text;
}

std::string join(const std::vector<std::int64_t>& numbers, std::string_view separator) {
    std::vector<std::string> parts;
    for (std::int64_t n : numbers) parts.push_back(std::to_string(n));
    return join(parts, separator);
}

}  // namespace attn
