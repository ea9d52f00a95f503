#pragma once
// Text from files and the environment (names, vocabularies, titles, paths) shown on a
// terminal, in a message, or in a page. Some characters must not reach them as they are:
//
//   C0 controls, DEL            U+0000-U+001F, U+007F   ESC sequences recolour or retitle a terminal
//   C1 controls                 U+0080-U+009F           U+009B is CSI, as ESC [
//   line, paragraph separators  U+2028, U+2029         a second line inside a one-line message
//   bidirectional controls      U+202A-U+202E,          reorder what is shown after them
//                               U+2066-U+2069           ("Trojan Source")
//   noncharacters               U+FDD0-U+FDEF, U+nFFFE, U+nFFFF   not allowed in XML (SVG, HTML)
//
// printable_text writes each as an escape ("\x1b", "\u202e", "\U0001fffe"); bytes that
// are not UTF-8 pass through (a terminal shows them as a replacement character).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace attn {

/// The code point that starts at text[at] and its length in bytes; nullopt when the
/// bytes there are not well-formed UTF-8 (overlong, a surrogate, beyond U+10FFFF, cut short).
std::optional<std::pair<char32_t, std::size_t>> next_code_point(std::string_view text, std::size_t at);

/// One character of the table above: its code point and where its bytes are.
struct unsafe_character {
    char32_t code;
    std::size_t at;      // byte offset of its first byte
    std::size_t length;  // its bytes: 1 to 4
};

/// The first character of the table at or after byte `from`, if any.
std::optional<unsafe_character> find_unsafe_character(std::string_view text, std::size_t from = 0);

/// "U+202E": a code point as the messages name it.
std::string code_point_name(char32_t code);

/// What an unsafe character is, for a message: "a control character", "a line or paragraph
/// separator", "a bidirectional control" or "a noncharacter".
const char* unsafe_character_kind(char32_t code);

/// `text` with every character of the table escaped: "\x1b" below U+0080, "\u202e" up to
/// U+FFFF, "\U0001fffe" above: a name quoted from a file keeps a message on one line
/// and cannot recolour a terminal or reorder what follows it. With `keep_line_breaks`, tab,
/// line feed and carriage return stay as they are (for a page, where they are white space).
std::string printable_text(std::string_view text, bool keep_line_breaks = false);

/// The longest prefix of `text` of at most `longest` bytes that ends on a character
/// boundary (a byte that starts no UTF-8 character counts as one).
std::size_t character_boundary(std::string_view text, std::size_t longest);

/// The longest a quoted field may be before quoted_field cuts it, in bytes.
constexpr std::size_t quoted_field_bytes = 120;

/// A field of a file (a name, a dtype, a key) as a message quotes it: printable_text of
/// at most `longest` bytes, cut on a UTF-8 character boundary, then "... (N bytes)"
/// when cut. A 50 MB dtype string stays a one-line message.
std::string quoted_field(std::string_view text, std::size_t longest = quoted_field_bytes);

}  // namespace attn
