#include "attn/text/printable_text.hpp"

#include <cstdio>

namespace attn {
namespace {

/// The character at `at`, or the byte there when it starts no well-formed UTF-8 (a
/// terminal shows it as a replacement character; it is passed through as it is).
struct decoded {
    char32_t code;
    std::size_t length;
    bool utf8;
};

decoded decode_at(std::string_view text, std::size_t at) {
    if (const auto point = next_code_point(text, at)) return {point->first, point->second, true};
    return {static_cast<unsigned char>(text[at]), 1, false};
}

bool unsafe(char32_t code) {
    return code < 0x20 || (code >= 0x7F && code <= 0x9F) || (code >= 0x2028 && code <= 0x202E) ||
           (code >= 0x2066 && code <= 0x2069) || (code >= 0xFDD0 && code <= 0xFDEF) || (code & 0xFFFE) == 0xFFFE;
}

std::string escape(char32_t code) {
    char text[16];
    if (code < 0x80) std::snprintf(text, sizeof text, "\\x%02x", static_cast<unsigned>(code));
    else if (code <= 0xFFFF) std::snprintf(text, sizeof text, "\\u%04x", static_cast<unsigned>(code));
    else std::snprintf(text, sizeof text, "\\U%08x", static_cast<unsigned>(code));
    return text;
}

}  // namespace

std::optional<std::pair<char32_t, std::size_t>> next_code_point(std::string_view text, std::size_t at) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
    const unsigned char lead = byte(at);
    if (lead < 0x80) return std::pair<char32_t, std::size_t>{lead, 1};
    const std::size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (length == 0 || lead > 0xF4 || at + length > text.size()) return std::nullopt;
    char32_t cp = lead & (0x7F >> length);
    for (std::size_t i = 1; i < length; ++i) {
        if ((byte(at + i) & 0xC0) != 0x80) return std::nullopt;
        cp = (cp << 6) | (byte(at + i) & 0x3F);
    }
    const char32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[length] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
    return std::pair<char32_t, std::size_t>{cp, length};
}

std::optional<unsafe_character> find_unsafe_character(std::string_view text, std::size_t from) {
    for (std::size_t i = from; i < text.size();) {
        const decoded d = decode_at(text, i);
        if (d.utf8 && unsafe(d.code)) return unsafe_character{d.code, i, d.length};
        i += d.length;
    }
    return std::nullopt;
}

std::string code_point_name(char32_t code) {
    char text[16];
    std::snprintf(text, sizeof text, "U+%04X", static_cast<unsigned>(code));
    return text;
}

const char* unsafe_character_kind(char32_t code) {
    if (code == 0x2028 || code == 0x2029) return "a line or paragraph separator";
    if (code >= 0x202A && code <= 0x2069) return "a bidirectional control";
    if (code >= 0xFDD0) return "a noncharacter";
    return "a control character";
}

std::string printable_text(std::string_view text, bool keep_line_breaks) {
    std::string out;
    out.reserve(text.size());
    std::size_t done = 0;
    for (auto c = find_unsafe_character(text); c; c = find_unsafe_character(text, done)) {
        const bool kept = keep_line_breaks && (c->code == '\t' || c->code == '\n' || c->code == '\r');
        out.append(text, done, c->at - done);
        if (kept) out += static_cast<char>(c->code);
        else out += escape(c->code);
        done = c->at + c->length;
    }
    out.append(text, done, std::string_view::npos);
    return out;
}

std::size_t character_boundary(std::string_view text, std::size_t longest) {
    if (text.size() <= longest) return text.size();
    std::size_t cut = 0;
    while (cut < text.size()) {
        const std::size_t next = cut + decode_at(text, cut).length;
        if (next > longest) break;
        cut = next;
    }
    return cut;
}

std::string quoted_field(std::string_view text, std::size_t longest) {
    if (text.size() <= longest) return printable_text(text);
    return printable_text(text.substr(0, character_boundary(text, longest))) + "... (" + std::to_string(text.size()) +
           " bytes)";
}

}  // namespace attn
