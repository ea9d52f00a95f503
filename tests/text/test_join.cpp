// join: lists as one line of text, as the messages write them.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "attn/text/join.hpp"

TEST_SUITE("join") {
    TEST_CASE("parts joined by a separator; none gives nothing") {
        CHECK(attn::join(std::vector<std::string>{"a", "b"}, ", ") == "a, b");
        CHECK(attn::join(std::vector<std::string>{"a"}, ", ") == "a");
        CHECK(attn::join(std::vector<std::string>{}, ", ") == "");
        CHECK(attn::join(std::vector<std::int64_t>{3, 5, -1}, ",") == "3,5,-1");
    }

    TEST_CASE("a last separator before the last part: a, b and c") {
        const auto three = std::vector<std::string>{"a", "b", "c"};
        CHECK(attn::join(three, ", ", " and ") == "a, b and c");
        CHECK(attn::join(three, ", ", ", then ") == "a, b, then c");
        CHECK(attn::join(std::vector<std::string>{"a", "b"}, ", ", " or ") == "a or b");
        CHECK(attn::join(std::vector<std::string>{"a"}, ", ", " or ") == "a");
        CHECK(attn::join(std::vector<std::string>{}, ", ", " or ") == "");
    }
}
