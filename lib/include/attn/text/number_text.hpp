#pragma once
// Numbers as text, in the three ways attn writes them.
#include <string>

namespace attn {

/// The fewest digits that read back as the same float (or double), as std::to_chars writes
/// them: 0.1f -> "0.1", 1e-45f -> "1e-45", 1e9 -> "1e+09", -0.0 -> "-0", "inf", "-inf",
/// "nan" ("-nan" when its sign bit is set). The float's own: 0.1f is "0.1", (double)0.1f
/// "0.10000000149011612".
std::string shortest_text(float value);
std::string shortest_text(double value);

/// shortest_text as a Python float literal: ".0" added where Python would read an int
/// (1.0f -> "1.0", -0.0 -> "-0.0"; 1e+30 and 0.5 unchanged). For finite values: the
/// callers name inf and nan their own way (float('inf'), or a name the script defines).
std::string python_float_text(float value);
std::string python_float_text(double value);

/// printf's "%.*g": `digits` significant digits, no trailing zeros: 0.3918, 1e-05, 2.98e-08,
/// "inf", "-inf", "nan" (or "-nan", as printf writes it).
std::string significant_text(double value, int digits = 6);

}  // namespace attn
