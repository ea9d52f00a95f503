#include "attn/text/utf8_text.hpp"

#include <cstdio>

#include "attn/text/printable_text.hpp"  // next_code_point

namespace attn {

bool is_utf8(std::string_view text) {
    for (std::size_t i = 0; i < text.size();) {
        const auto point = next_code_point(text, i);
        if (!point) return false;
        i += point->second;
    }
    return true;
}

std::string utf8_escaped(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        if (const auto point = next_code_point(text, i)) {
            out.append(text.substr(i, point->second));
            i += point->second;
            continue;
        }
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(static_cast<unsigned char>(text[i])));
        out += escaped;
        ++i;
    }
    return out;
}

}  // namespace attn
