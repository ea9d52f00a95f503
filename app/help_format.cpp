// attn's --help layout (help_format.hpp).
#include "help_format.hpp"

#include <algorithm>
#include <sstream>

namespace attn_app {
namespace {

/// Columns `text` takes: its UTF-8 characters ("·" is one).
std::size_t columns(const std::string& text) {
    std::size_t n = 0;
    for (char ch : text)
        if ((static_cast<unsigned char>(ch) & 0xC0) != 0x80) ++n;
    return n;
}

}  // namespace

std::string wrap(const std::string& text, std::size_t width) {
    std::string out;
    std::istringstream lines(text);
    std::string line;
    bool first_line = true;
    while (std::getline(lines, line)) {
        if (!first_line) out += '\n';
        first_line = false;
        std::istringstream words(line);
        std::string word, current;
        while (words >> word) {
            if (!current.empty() && columns(current) + 1 + columns(word) > width) {
                out += current + '\n';
                current.clear();
            }
            current += (current.empty() ? "" : " ") + word;
        }
        out += current;
    }
    return out;
}

help_formatter::help_formatter() {
    column_width(30);
    label("SUBCOMMAND", "COMMAND");
}

std::string help_formatter::make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const {
    std::string text = CLI::Formatter::make_help(app, std::move(name), mode);
    // CLI11 puts two blank lines between groups; one is enough.
    for (std::size_t at = text.find("\n\n\n"); at != std::string::npos; at = text.find("\n\n\n", at))
        text.erase(at, 1);
    return text;
}

std::string help_formatter::make_option_opts(const CLI::Option* opt) const {
    if (!opt->get_option_text().empty()) return " " + opt->get_option_text();
    if (opt->get_expected_max() == 0 || opt->get_type_name().empty()) return "";  // a flag
    return " " + opt->get_type_name();
}

std::string help_formatter::make_option_desc(const CLI::Option* opt) const {
    std::string text = opt->get_description();
    // "(default: X)" stays on one line: wrapped with \x01 for its spaces, which wrap keeps.
    std::string default_text = opt->get_default_str().empty() ? "" : " (default: " + opt->get_default_str() + ")";
    std::replace(default_text.begin() + (default_text.empty() ? 0 : 1), default_text.end(), ' ', '\x01');
    text = wrap(text + default_text, help_width - get_column_width());
    std::replace(text.begin(), text.end(), '\x01', ' ');
    return text;
}

}  // namespace attn_app
