#include "attn/teach/student_id.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "attn/compute/error.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {
namespace {

constexpr std::size_t max_id_characters = 64;

bool ascii_allowed(char32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-' || c == '@' || c == '+';
}

/// A combining mark (U+0300..U+036F and the other combining blocks): allowed in no ID,
/// because NFC would fold it into the letter before it.
bool combining(char32_t c) {
    return (c >= 0x0300 && c <= 0x036F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
           (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE20 && c <= 0xFE2F);
}

/// Beyond ASCII: not C1 controls or Latin-1's signs and spaces (U+0080..U+00BF, × and ÷),
/// the spaces, invisible and bidirectional marks of U+2000..U+206F, the ideographic
/// space, variation selectors, the byte order mark, private use and noncharacters.
bool other_script_allowed(char32_t c) {
    if (c < 0xC0 || c == 0xD7 || c == 0xF7 || combining(c)) return false;
    if ((c >= 0x2000 && c <= 0x206F) || c == 0x3000 || (c >= 0xFE00 && c <= 0xFE0F) || c == 0xFEFF) return false;
    if ((c >= 0xE000 && c <= 0xF8FF) || c >= 0xF0000 || (c & 0xFFFE) == 0xFFFE || (c >= 0xFDD0 && c <= 0xFDEF))
        return false;
    return true;
}

[[noreturn]] void refuse(std::string_view given, const std::string& why) {
    throw usage_error("--student " + (given.empty() ? std::string("''") : printable_text(std::string(given))) +
                      ": " + why);
}

}  // namespace

std::string normalise_student_id(std::string_view given) {
    const std::string expected =
        "expected 1-64 letters (any script, precomposed), digits, '.', '_', '-', '@' or '+' "
        "(not '.', '-', '@' or '+' first), e.g. --student alice or --student alice@uni.example";
    if (given.empty()) refuse(given, expected);
    std::size_t characters = 0;
    bool mail = false;
    for (std::size_t at = 0; at < given.size();) {
        const auto point = next_code_point(given, at);
        if (!point) refuse(given, "not valid UTF-8 text; " + expected);
        const char32_t c = point->first;
        if (combining(c))
            refuse(given, "a combining accent (" + code_point_name(c) +
                              "): type the letter precomposed (NFC), é as one character, so the ID is always the same bytes");
        if (c < 0x80 ? !ascii_allowed(c) : !other_script_allowed(c)) refuse(given, expected);
        if (at == 0 && (c == '.' || c == '-' || c == '@' || c == '+')) refuse(given, expected);
        mail = mail || c == '@';
        ++characters;
        at += point->second;
    }
    if (characters > max_id_characters) refuse(given, expected);
    std::string id(given);
    if (mail)
        for (char& ch : id)
            if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
    return id;
}

}  // namespace attn
