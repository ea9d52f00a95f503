#pragma once
// `attn mask`: the shape and mask flags -> one mask in PyTorch's four conventions.
#include <CLI/CLI.hpp>

namespace attn_app {

/// Adds the `mask` subcommand to `app`; it runs when parsing selects it.
void setup_mask(CLI::App& app);

}  // namespace attn_app
