#pragma once
// `attn exercise list|show|check`: classroom exercises, a variant per student.
#include <CLI/CLI.hpp>

namespace attn_app {

/// Adds the `exercise` subcommand (and its list, show, check) to `app`.
void setup_exercise(CLI::App& app);

}  // namespace attn_app
