#pragma once
// attn's --help layout: one style for every option of every command, at most
// help_width columns.
//   --heads N                   H, attention heads; dk = D / H must be whole (default: 2)
// - an option shows its name and type name only: not CLI11's "=2" after the type, nor
//   its " ..." after a list (write the list's form as the type name: "N,N,...");
// - its default ends the description as "(default: X)": the option's default_val,
//   or default_str for a default that depends on other flags (default_str("--seq"));
//   so descriptions never state defaults themselves;
// - descriptions wrap at help_width (write them as one line; "\n" forces a break);
// - one blank line between groups.
#include <cstddef>
#include <string>

#include <CLI/CLI.hpp>

namespace attn_app {

inline constexpr std::size_t help_width = 100;

class help_formatter : public CLI::Formatter {
public:
    help_formatter();
    std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override;
    std::string make_option_opts(const CLI::Option* opt) const override;
    std::string make_option_desc(const CLI::Option* opt) const override;
};

/// `text` wrapped at `width` columns (UTF-8 characters), keeping its own line breaks.
std::string wrap(const std::string& text, std::size_t width);

}  // namespace attn_app
