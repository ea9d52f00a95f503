#pragma once
// `attn trace`: flags -> config -> inputs -> trace -> a renderer.
#include <CLI/CLI.hpp>

namespace attn_app {

/// Adds the `trace` subcommand to `app`; it runs when parsing selects it.
void setup_trace(CLI::App& app);

}  // namespace attn_app
