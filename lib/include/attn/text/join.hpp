#pragma once
// Lists as one line of text: "a, b", "a, b and c".
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace attn {

/// `parts` joined by `separator`: join({"a", "b"}, ", ") is "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view separator);

/// The same, with `last` before the last part: join({"a", "b", "c"}, ", ", " and ") is "a, b and c".
std::string join(const std::vector<std::string>& parts, std::string_view separator, std::string_view last);

/// The numbers joined by `separator`: join({3, 5}, ", ") is "3, 5".
std::string join(const std::vector<std::int64_t>& numbers, std::string_view separator);

}  // namespace attn
