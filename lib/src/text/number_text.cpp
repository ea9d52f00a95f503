#include "attn/text/number_text.hpp"

#include <charconv>
#include <cstdio>

namespace attn {
namespace {

template <class Real>
std::string shortest(Real value) {
    char text[64];
    return std::string(text, std::to_chars(text, text + sizeof text, value).ptr);
}

std::string with_point(std::string text) {
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    return text;
}

}  // namespace

std::string shortest_text(float value) { return shortest(value); }
std::string shortest_text(double value) { return shortest(value); }

std::string python_float_text(float value) { return with_point(shortest(value)); }
std::string python_float_text(double value) { return with_point(shortest(value)); }

std::string significant_text(double value, int digits) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    return text;
}

}  // namespace attn
