#pragma once
// `attn exercise list|show|check`: classroom exercises, a variant per student.
#include <CLI/App.hpp>  // not CLI.hpp: help_format.cpp compiles its Formatter and Config

namespace attn_app {

/// Adds the `exercise` subcommand (and its list, show, check) to `app`.
void setup_exercise(CLI::App& app);

}  // namespace attn_app
