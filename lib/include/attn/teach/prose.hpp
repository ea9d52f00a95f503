#pragma once
// The teaching texts: share/attn/text/*.md (its README.md says how they are written),
// embedded in the library at build time. A file's sections open with "## NAME"; the C++
// picks a section and fills its placeholders, libfmt's named arguments ({B}, {shape_q}).
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace attn {

/// A value for the placeholder {name}: a piece of text or a whole number.
struct prose_arg {
    const char* name;
    std::string value;

    prose_arg(const char* name, std::string value) : name(name), value(std::move(value)) {}
    prose_arg(const char* name, const char* value) : name(name), value(value) {}
    template <class N, std::enable_if_t<std::is_integral_v<N>, int> = 0>
    prose_arg(const char* name, N value) : name(name), value(std::to_string(value)) {}
};

/// Section `id`, "FILE.NAME" (explain.md's "## scores.why" is "explain.scores.why"),
/// with its placeholders filled from `args` (an argument it does not use is ignored).
/// Throws std::logic_error for an unknown id or a placeholder without an argument.
std::string prose(std::string_view id, const std::vector<prose_arg>& args = {});

/// Every section's id, sorted (for the test that each is used).
std::vector<std::string> prose_ids();

/// Whether section `id` has been asked for since the program started.
bool prose_used(std::string_view id);

}  // namespace attn
