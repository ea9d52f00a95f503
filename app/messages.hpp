#pragma once
// attn's own words for what goes wrong on the command line. CLI11 finds the
// mistakes; these turn each into one line that names the flag, what it got and
// what it expects (CLI.md, "Errors and exit codes"), never CLI11's own text:
//   attn: error: --format given twice (json, then table); give it once
//   attn: error: --heads abc: expected a whole number
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace attn_app {

/// For `app.failure_message(...)`: "attn: error: <what went wrong>\n" for a parse error
/// (not help or version). What went wrong is read from the error's type and the state
/// CLI11 leaves (the values each option got, the arguments it could not place), and a
/// refused value is described by asking its check again; `args`, the command line
/// without the program's name, names an option left without a value at its end.
std::function<std::string(const CLI::App*, const CLI::Error&)> failure_message(std::vector<std::string> args);

/// A message for stderr, on one line whatever it quotes: printable_text's escapes, and each
/// byte that starts no UTF-8 character written "\xff" (an 8-bit terminal reads a lone 0x9b
/// as CSI).
std::string terminal_line(std::string_view text);

/// `text` as the shell reads it back: unchanged when plain, else in single quotes.
std::string shell_word(const std::string& text);

// Value checks in attn's words, for `option->transform(...)`. Each is named after
// what it expects ("a whole number"), and a value it refuses is reported as
// "--flag VALUE: expected ...". Use them rather than CLI::IsMember, CLI::Range or
// CLI::AsSizeValue, whose messages and help decorations are CLI11's. The number
// checks also hand CLI11 plain decimal text (CLI11 alone reads 010 as octal 8).

/// A whole number in int64 (decimal, optional '-').
CLI::Validator whole_number();

/// A whole number from `lo` to `hi`.
CLI::Validator whole_number(std::int64_t lo, std::int64_t hi);

/// A seed for torch.manual_seed into a std::uint64_t: -2^63 .. 2^64-1, negative ones
/// wrapping mod 2^64 as torch.manual_seed does.
CLI::Validator seed_number();

/// A finite number (double).
CLI::Validator number();

/// One of `choices`, exactly.
CLI::Validator one_of(std::vector<std::string> choices);

/// `--NAME TYPE`, one of `choices` (the first by default), for `cmd`.
CLI::Option* add_choice(CLI::App* cmd, const std::string& name, std::string& into, std::vector<std::string> choices,
                        const std::string& type, const std::string& help);

/// A path that is not empty: `what` names it in the refusal ("--out '': expected a file
/// name"). An empty value, as "$UNSET" gives, would otherwise read as the flag not given.
CLI::Validator path_name(const std::string& what = "a file name");

/// A size in bytes: a whole number with an optional unit, b, k, kb, ki, kib, m, ..., e
/// (any case; all of them powers of 1024), replaced by the number of bytes.
CLI::Validator byte_size();

/// byte_size(), or "none" (any case) or 0 for no limit: both become "0".
CLI::Validator byte_size_or_none();

}  // namespace attn_app
