#pragma once
// `attn trace`: flags -> config -> inputs -> trace -> a renderer.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/compute/config.hpp"

namespace attn_app {

/// Adds the `trace` subcommand to `app`; it runs when parsing selects it.
void setup_trace(CLI::App& app);

/// --stage's text as trace reads it (names, numbers, ranges such as 6-10, joined by
/// commas; each must be in the run `c`): the stage names. Throws usage_error naming --stage.
std::vector<std::string> stage_names_from_flag(const std::string& text, const attn::config& c);

}  // namespace attn_app
