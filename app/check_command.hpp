#pragma once
// `attn check`: a student's answer against one stage of the run trace's flags
// describe; on a mismatch, which common mistake it makes.
#include <CLI/CLI.hpp>

namespace attn_app {

/// Adds the `check` subcommand to `app`; it runs when parsing selects it. A
/// mismatch throws exit_status{1} after the report is written.
void setup_check(CLI::App& app);

}  // namespace attn_app
