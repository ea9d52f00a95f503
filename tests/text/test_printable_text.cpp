// printable_text and quoted_field: what a terminal, a message or a page may show of a
// name from a file. The expected escapes are written out by hand from the Unicode tables.
#include <doctest/doctest.h>

#include <string>

#include "attn/text/printable_text.hpp"

TEST_SUITE("printable_text") {
    TEST_CASE("bidirectional controls and line separators are escaped like control characters") {
        CHECK(attn::printable_text("a\xe2\x80\xae" "b") == "a\\u202eb");  // U+202E RIGHT-TO-LEFT OVERRIDE
        CHECK(attn::printable_text("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad") ==
              "\\u202a\\u202b\\u202c\\u202d");
        CHECK(attn::printable_text("\xe2\x81\xa6x\xe2\x81\xa9") == "\\u2066x\\u2069");  // LRI ... PDI
        CHECK(attn::printable_text("line\xe2\x80\xa8" "next\xe2\x80\xa9") == "line\\u2028next\\u2029");
        CHECK(attn::printable_text("\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa") ==  // neighbours: text
              "\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
    }

    TEST_CASE("noncharacters are escaped, so that they never reach XML") {
        CHECK(attn::printable_text("\xef\xbf\xbe\xef\xbf\xbf") == "\\ufffe\\uffff");
        CHECK(attn::printable_text("\xef\xb7\x90\xef\xb7\xaf") == "\\ufdd0\\ufdef");
        CHECK(attn::printable_text("\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd") == "\xef\xb7\x8f\xef\xb7\xb0\xef\xbf\xbd");
        CHECK(attn::printable_text("\xf0\x9f\xbf\xbe") == "\\U0001fffe");  // U+1FFFE
        CHECK(attn::printable_text("\xf4\x8f\xbf\xbf") == "\\U0010ffff");  // U+10FFFF
        CHECK(attn::printable_text("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");  // U+1F600: text
    }

    TEST_CASE("bytes that are not UTF-8 pass through; an overlong form is not the character") {
        CHECK(attn::printable_text("\xe2\x80") == "\xe2\x80");
        CHECK(attn::printable_text("\xc0\x9b") == "\xc0\x9b");
        CHECK(attn::printable_text("\xed\xa0\x80") == "\xed\xa0\x80");  // a surrogate
    }

    TEST_CASE("line breaks kept for a page") {
        CHECK(attn::printable_text("a\tb\nc\rd\x1b", true) == "a\tb\nc\rd\\x1b");
    }

    TEST_CASE("the first unsafe character, named") {
        const auto c = attn::find_unsafe_character("ab\xe2\x81\xa7" "c");
        REQUIRE(c);
        CHECK(c->code == 0x2067);
        CHECK(c->at == 2);
        CHECK(c->length == 3);
        CHECK(attn::code_point_name(c->code) == "U+2067");
        CHECK(std::string(attn::unsafe_character_kind(c->code)) == "a bidirectional control");
        CHECK(std::string(attn::unsafe_character_kind(0x2028)) == "a line or paragraph separator");
        CHECK(std::string(attn::unsafe_character_kind(0xFFFE)) == "a noncharacter");
        CHECK(std::string(attn::unsafe_character_kind(0x1B)) == "a control character");
        CHECK_FALSE(attn::find_unsafe_character("plain \xc2\xb7 text"));
    }

    TEST_CASE("a quoted field is cut on a character boundary, and says how long it was") {
        CHECK(attn::quoted_field("F32") == "F32");
        const std::string huge(50'000'000, 'x');
        const std::string quoted = attn::quoted_field(huge);
        CHECK(quoted == std::string(120, 'x') + "... (50000000 bytes)");
        // 119 bytes, then a 3-byte character that does not fit in 120: cut before it
        const std::string text = std::string(119, 'a') + "\xe2\x80\xa6" + "tail";
        CHECK(attn::quoted_field(text) == std::string(119, 'a') + "... (126 bytes)");
        CHECK(attn::quoted_field("\x1b[2J" + std::string(200, 'y'), 10) == "\\x1b[2Jyyyyyy... (204 bytes)");
        CHECK(attn::quoted_field(std::string(5, 'z'), 5) == "zzzzz");
    }
}
