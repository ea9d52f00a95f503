#pragma once
// The teaching texts' prose (--explain, the stage formulas and the run summary, the
// mistakes, the advice, attn mask's conventions): it lives in share/attn/text/*.md,
// embedded in the library at build time, so that a teacher or a translator edits a
// paragraph as a paragraph. The C++ picks a section and fills its values.
//
// A file is split into sections, each opened by a line "## NAME"; what comes before
// the first one describes the file. A section's lines are joined by one space, so a
// long paragraph may be wrapped. Its placeholders are libfmt's named arguments, {B} or
// {shape_q}, filled with fmt::format's rules: a brace of the text itself is written {{ or }}.
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
