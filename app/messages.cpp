// attn's own words for command-line mistakes (messages.hpp): the value checks, and the
// failure message. Nothing here reads CLI11's text: the error's type says what kind of
// mistake it is, the state CLI11 leaves and the command line which option and value.
#include "messages.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string_view>
#include <utility>

#include "attn/text/join.hpp"
#include "attn/text/printable_text.hpp"
#include "attn/text/utf8_text.hpp"

namespace attn_app {
namespace {

// --- value checks --------------------------------------------------------------

/// A check named by what it expects. `check` returns "" for a good value (which it
/// may rewrite for CLI11), else why not; the refusal reads "VALUE: <why>".
CLI::Validator expecting(const std::string& expected, std::function<std::string(std::string&)> check) {
    return CLI::Validator(
        [check = std::move(check)](std::string& value) {
            const std::string why = check(value);
            return why.empty() ? why : value + ": " + why;
        },
        "",  // no description: --help shows the option's type name alone
        expected);
}

/// Whether `text` is a decimal whole number as typed: '-'? digits.
bool is_whole(const std::string& text) {
    const std::size_t sign = text.rfind('-', 0) == 0 ? 1 : 0;
    return text.size() > sign && text.find_first_not_of("0123456789", sign) == std::string::npos;
}

/// `text` (is_whole) read into `n`; false when it is out of N's range.
template <class N>
bool read_whole(const std::string& text, N& n) {
    return std::from_chars(text.data(), text.data() + text.size(), n).ec == std::errc();
}

/// A whole number from `lo` to `hi`, named `expected`.
CLI::Validator whole_number_named(std::int64_t lo, std::int64_t hi, const std::string& expected) {
    return expecting(expected, [lo, hi, expected](std::string& value) -> std::string {
        if (!is_whole(value)) return "expected " + expected;
        std::int64_t n = 0;
        if (!read_whole(value, n) || n < lo || n > hi)
            return "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
        value = std::to_string(n);
        return "";
    });
}

/// `value` as a number of bytes (byte_size()): "" and `value` rewritten, else why not.
std::string read_byte_size(std::string& value) {
    const std::string refused = "expected a size such as 4GiB, 512MiB or 1000000 (bytes)";
    const std::string text = CLI::detail::trim_copy(value);
    // The digits' length: all of text when no unit follows (never npos, which as an
    // offset from text.data() below would overflow the pointer).
    const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
    const std::string unit = CLI::detail::to_lower(CLI::detail::trim_copy(text.substr(digits)));
    if (digits == 0) return refused;
    static const std::string prefixes = "kmgtpe";
    int power = 0;
    if (!unit.empty() && unit != "b") {
        const std::size_t p = prefixes.find(unit[0]);
        const std::string rest = unit.substr(1);
        if (p == std::string::npos || !(rest.empty() || rest == "b" || rest == "i" || rest == "ib")) return refused;
        power = static_cast<int>(p) + 1;
    }
    std::uint64_t bytes = 0;
    bool too_large = std::from_chars(text.data(), text.data() + digits, bytes).ec != std::errc();
    for (int i = 0; i < power && !too_large; ++i) {
        too_large = bytes > std::numeric_limits<std::uint64_t>::max() / 1024;
        bytes *= 1024;
    }
    if (too_large) return "expected a size below 16EiB";
    value = std::to_string(bytes);
    return "";
}

// --- what CLI11 left behind --------------------------------------------------------------

/// The name the user types: "--heads", or a positional's ("N"). (CLI11's get_name() is
/// empty for an option hidden from --help.)
std::string name_of(const CLI::Option& opt) {
    return opt.get_lnames().empty() ? opt.get_single_name() : "--" + opt.get_lnames().front();
}

/// The innermost command given (`attn exercise show`), or nullptr when none was.
CLI::App* command_given(const CLI::App& app) {
    const std::vector<CLI::App*> given = app.get_subcommands();
    if (given.empty()) return nullptr;
    CLI::App* inner = command_given(*given.front());
    return inner != nullptr ? inner : given.front();
}

/// "attn trace", "attn exercise show".
std::string command_name(const CLI::App& cmd) {
    return cmd.get_parent() != nullptr ? command_name(*cmd.get_parent()) + " " + cmd.get_name() : cmd.get_name();
}

/// The check attn gave `opt` (one at most), or nullptr.
CLI::Validator* check_of(CLI::Option& opt) {
    try {
        return opt.get_validator(0);
    } catch (const CLI::OptionNotFound&) {
        return nullptr;
    }
}

/// What `opt` takes, in words: the name of its check ("a whole number"), else its form
/// in --help ("--mask KINDS").
std::string expected_of(CLI::Option& opt) {
    const CLI::Validator* check = check_of(opt);
    if (check != nullptr && !check->get_name().empty()) return check->get_name();
    return opt.get_type_name().empty() ? "a value" : name_of(opt) + " " + opt.get_type_name();
}

/// Why the check of `opt` refuses one of its values ("x: expected a whole number"), asked
/// of the check again; "" when it refuses none.
std::string refusal(CLI::Option& opt) {
    const CLI::Validator* check = check_of(opt);
    for (std::string value : opt.results()) {
        const std::string why = check != nullptr ? (*check)(value) : "";
        if (!why.empty()) return why;
    }
    return "";
}

bool has_empty_value(const CLI::Option& opt) {
    const auto& values = opt.results();
    return values.empty() || std::any_of(values.begin(), values.end(), [](const std::string& v) { return v.empty(); });
}

/// A flag given a value that CLI11 cannot read as true or false (`--train=maybe`).
bool flag_with_a_value(const CLI::Option& opt) {
    bool yes = false;
    const auto unreadable = [&yes](const std::string& v) { return !CLI::detail::lexical_cast(v, yes); };
    return opt.get_expected_max() == 0 && std::any_of(opt.results().begin(), opt.results().end(), unreadable);
}

/// An option whose value is another option's name (`--heads --seq 4`: CLI11 gave
/// --heads the value "--seq"): the option and that name.
std::pair<CLI::Option*, std::string> flag_taken_as_value(CLI::App& cmd) {
    for (CLI::Option* opt : cmd.get_options())
        for (const std::string& value : opt->results())
            if (value.size() > 1 && value[0] == '-' && cmd.get_option_no_throw(value.substr(0, value.find('='))))
                return {opt, value};
    return {nullptr, ""};
}

/// The option that ends the command line `args` without its value (`--heads`, `--heads=`).
CLI::Option* value_missing_at_end(CLI::App& cmd, const std::vector<std::string>& args) {
    if (args.empty()) return nullptr;
    const std::string& last = args.back();
    const std::size_t equals = last.find('=');
    if (equals != std::string::npos && equals + 1 != last.size()) return nullptr;  // --heads=4
    CLI::Option* opt = last.rfind("-", 0) == 0 ? cmd.get_option_no_throw(last.substr(0, equals)) : nullptr;
    return opt != nullptr && opt->get_expected_max() > 0 ? opt : nullptr;
}

/// Levenshtein distance, for "did you mean".
std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

/// The candidate `word` is most likely a slip for: within two edits (and fewer than
/// half its letters), or the only one it begins; "" when none is.
std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_distance = std::min<std::size_t>(3, (word.size() + 1) / 2);
    for (const std::string& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d < best_distance) {
            best = c;
            best_distance = d;
        }
    }
    if (!best.empty() || word.size() < 3) return best;
    for (const std::string& c : candidates)
        if (c.compare(0, word.size(), word) == 0) {
            if (!best.empty()) return "";  // more than one: no guess
            best = c;
        }
    return best;
}

/// A flag rather than a word or a negative number.
bool looks_like_a_flag(const std::string& arg) {
    return arg.size() > 1 && arg[0] == '-' && !(std::isdigit(static_cast<unsigned char>(arg[1])) || arg[1] == '.');
}

// --- the messages ---------------------------------------------------------------------

/// `attn exercise` alone: "attn exercise needs a command: list, show or check (attn exercise --help)".
std::string command_needs_one(const CLI::App& cmd) {
    std::vector<std::string> names;
    for (const CLI::App* sub : cmd.get_subcommands({})) names.push_back(sub->get_name());
    const std::string name = "attn " + cmd.get_name();
    const std::vector<std::string> rest = cmd.remaining();
    const std::string choices = attn::join(names, ", ", " or ") + " (" + name + " --help)";
    if (!rest.empty()) return name + " " + shell_word(rest.front()) + ": no such command; try " + choices;
    return name + " needs a command: " + choices;
}

/// attn without a command: none at all, a flag that belongs after one, or a word
/// that is no command.
std::string no_command(const CLI::App& app) {
    const std::vector<std::string> rest = app.remaining();
    const std::string example = "try `attn trace --heads 4 --mask causal`, or `attn --help`";
    if (rest.empty()) return "no command given: " + example;
    std::vector<std::string> commands;
    for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
    const std::string& first = rest.front();
    if (looks_like_a_flag(first)) {
        const std::string flag = first.substr(0, first.find('='));
        for (const CLI::App* sub : app.get_subcommands({}))
            if (sub->get_option_no_throw(flag) != nullptr) {
                std::string line = "attn " + sub->get_name();
                for (const std::string& arg : rest) line += " " + shell_word(arg);
                return "no command given (" + flag + " is a flag of " + sub->get_name() + "): try `" + line + "`";
            }
        return flag + ": attn has no such flag; " + example;
    }
    const std::string guess = closest(first, commands);
    if (!guess.empty()) return first + ": no command is called " + first + "; did you mean " + guess + "?";
    return first + ": no command is called " + first + " (the commands: " + attn::join(commands, ", ", " or ") +
           "); see `attn --help`";
}

/// Arguments CLI11 could not place: an unknown flag, or a word where none belongs.
std::string unexpected(CLI::App& cmd) {
    const std::vector<std::string> rest = cmd.remaining();
    const std::string name = command_name(cmd);
    if (rest.empty()) return "unexpected arguments; see `" + name + " --help`";
    const std::string& first = rest.front();
    if (looks_like_a_flag(first)) {
        const std::string flag = first.substr(0, first.find('='));
        std::vector<std::string> flags;
        for (const CLI::Option* opt : cmd.get_options())
            for (const std::string& lname : opt->get_lnames()) flags.push_back("--" + lname);
        const std::string guess = closest(flag, flags);
        if (!guess.empty()) return flag + ": " + name + " has no such flag; did you mean " + guess + "?";
        return flag + ": " + name + " has no such flag; see `" + name + " --help`";
    }
    return "unexpected argument " + shell_word(first) + ": " + name +
           " takes only flags, each with at most one value (a list is one value, joined by commas)";
}

/// The option got no value: it ended the command line, or an empty one (--heads=).
std::string without_value(CLI::Option& opt) {
    return name_of(opt) + " given without a value; expected " + expected_of(opt);
}

/// A one-value option given more than once.
std::string given_again(const CLI::Option& opt) {
    const std::vector<std::string>& values = opt.results();
    const std::string times = values.size() == 2 ? "twice" : std::to_string(values.size()) + " times";
    return name_of(opt) + " given " + times + " (" + attn::join(values, ", ", ", then ") + "); give it once";
}

std::string takes_no_value(const CLI::Option& flag) {
    return name_of(flag) + " takes no value (got " + attn::join(flag.results(), ", ", ", then ") + ")";
}

/// What went wrong, as the error's type and the state CLI11 left say.
std::string what_went_wrong(const CLI::App& app, const CLI::Error& e, const std::vector<std::string>& args) {
    CLI::App* given = command_given(app);
    if (given == nullptr) {  // attn's own flags are --help and --version, which take no value
        for (const CLI::Option* opt : app.get_options())
            if (flag_with_a_value(*opt)) return takes_no_value(*opt);
        return no_command(app);
    }
    CLI::App& cmd = *given;  // the command CLI11 stopped in
    // `--heads --seq 4`: whatever CLI11 tripped on next, the cause is the missing value.
    const auto [took_flag, flag] = flag_taken_as_value(cmd);
    // `--lengths , --mask padding`: CLI11 drops an empty list and hands the list option the
    // next flag; the list is what is missing, and the flag after it is no part of it.
    if (took_flag != nullptr && took_flag->get_delimiter() != '\0') return without_value(*took_flag);
    if (took_flag != nullptr)
        return name_of(*took_flag) + " given without a value before " + flag + "; expected " + expected_of(*took_flag);

    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) return unexpected(cmd);
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
        if (cmd.get_require_subcommand_min() > 0 && cmd.get_subcommands().empty()) return command_needs_one(cmd);
        for (const CLI::Option* opt : cmd.get_options())
            if (opt->get_required() && opt->count() == 0) return name_of(*opt) + " is required";
    }
    if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
        // CLI11 stops reading at an option left without a value at the end; it checks counts later.
        if (CLI::Option* opt = value_missing_at_end(cmd, args)) return without_value(*opt);
        for (CLI::Option* opt : cmd.get_options())
            if (opt->get_items_expected_max() > 0 && opt->count() > std::size_t(opt->get_items_expected_max()))
                return has_empty_value(*opt) ? without_value(*opt) : given_again(*opt);
    }
    if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr)
        for (CLI::Option* opt : cmd.get_options()) {  // CLI11 checks the options in this order
            const std::string why = refusal(*opt);
            if (!why.empty()) return has_empty_value(*opt) ? without_value(*opt) : name_of(*opt) + " " + why;
        }
    if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr)
        for (const CLI::Option* opt : cmd.get_options())
            if (flag_with_a_value(*opt)) return takes_no_value(*opt);
    return e.what();  // nothing attn knows better (a CLI11 newer than this code?)
}

}  // namespace

std::string terminal_line(std::string_view text) { return attn::utf8_escaped(attn::printable_text(text)); }

std::string shell_word(const std::string& text) {
    const bool plain = !text.empty() && std::all_of(text.begin(), text.end(), [](char ch) {
        return std::isalnum(static_cast<unsigned char>(ch)) != 0 || std::string_view("-_.,/+=:@%").find(ch) !=
                                                                        std::string_view::npos;
    });
    if (plain) return text;
    std::string out = "'";
    for (char ch : text) out += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    return out + "'";
}

std::function<std::string(const CLI::App*, const CLI::Error&)> failure_message(std::vector<std::string> args) {
    return [args = std::move(args)](const CLI::App* app, const CLI::Error& e) {
        return "attn: error: " + terminal_line(what_went_wrong(*app, e, args)) + "\n";  // one line, whatever was typed
    };
}

// --- value checks ----------------------------------------------------------------------

CLI::Validator whole_number() {
    return whole_number_named(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                              "a whole number");
}

CLI::Validator whole_number(std::int64_t lo, std::int64_t hi) {
    return whole_number_named(lo, hi, "a whole number from " + std::to_string(lo) + " to " + std::to_string(hi));
}

CLI::Validator seed_number() {
    const std::string expected = "a whole number (negative ones wrap as in torch.manual_seed)";
    return expecting(expected, [expected](std::string& value) -> std::string {
        if (!is_whole(value)) return "expected " + expected;
        std::int64_t negative = 0;
        std::uint64_t seed = 0;
        const bool ok = value[0] == '-' ? read_whole(value, negative) : read_whole(value, seed);
        if (!ok) return "expected a whole number from -9223372036854775808 to 18446744073709551615";
        value = std::to_string(value[0] == '-' ? static_cast<std::uint64_t>(negative) : seed);  // mod 2^64
        return "";
    });
}

CLI::Validator number() {
    return expecting("a number", [](std::string& value) -> std::string {
        char* end = nullptr;
        errno = 0;
        const double x = value.empty() || std::isspace(static_cast<unsigned char>(value[0])) != 0
                             ? std::nan("")
                             : std::strtod(value.c_str(), &end);
        if (end != value.c_str() + value.size() || !std::isfinite(x)) return "expected a number";
        if (x == 0.0 && errno == ERANGE)  // 1e-400: below the smallest double
            return "expected a number a double holds; this one is too small and would read as 0";
        return "";
    });
}

CLI::Validator path_name(const std::string& what) {
    return expecting(what, [what](std::string& value) -> std::string {
        return value.empty() ? "expected " + what + ", not an empty one" : "";
    });
}

CLI::Validator one_of(std::vector<std::string> choices) {
    const std::string expected = "one of " + attn::join(choices, ", ", " or ");
    return expecting(expected, [choices = std::move(choices), expected](std::string& value) -> std::string {
        return std::find(choices.begin(), choices.end(), value) != choices.end() ? "" : "expected " + expected;
    });
}

CLI::Option* add_choice(CLI::App* cmd, const std::string& name, std::string& into, std::vector<std::string> choices,
                        const std::string& type, const std::string& help) {
    const std::string first = choices.front();
    return cmd->add_option(name, into, help)
        ->transform(one_of(std::move(choices)))
        ->type_name(type)
        ->default_val(first);
}

CLI::Validator byte_size() {
    return expecting("a size such as 4GiB, 512MiB or 1000000 (bytes)", read_byte_size);
}

CLI::Validator byte_size_or_none() {
    // The same name as byte_size()'s: --help tells of 0 and none.
    return expecting("a size such as 4GiB, 512MiB or 1000000 (bytes)", [](std::string& value) {
        if (CLI::detail::to_lower(CLI::detail::trim_copy(value)) != "none") return read_byte_size(value);
        value = "0";
        return std::string();
    });
}

}  // namespace attn_app
