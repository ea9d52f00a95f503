#pragma once
// attn's commands. Each setup_NAME adds the subcommand NAME to `app`; it runs when
// parsing selects it. Wiring only: flags in, a run of the library, a renderer out.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/compute/config.hpp"
#include "attn/compute/stage_table.hpp"

namespace attn_app {

/// `attn trace`: flags -> config -> inputs -> trace -> a renderer.
void setup_trace(CLI::App& app);

/// The command line (argv), kept for what quotes it: --format py's first line.
void remember_command_line(int argc, char** argv);

/// `attn mask`: the shape and mask flags -> one mask in PyTorch's four conventions.
void setup_mask(CLI::App& app);

/// `attn check`: a student's answer against one stage of the run trace's flags describe;
/// on a mismatch, which common mistake it makes (exit_status{1} after the report).
void setup_check(CLI::App& app);

/// `attn exercise list|show|check`: classroom exercises, a variant per student.
void setup_exercise(CLI::App& app);

/// `attn tokens`: --params and --text -> the ids and pieces of the checkpoint's tokenizer.
void setup_tokens(CLI::App& app);

/// --stage's text as trace reads it (names, numbers, ranges such as 6-10, joined by
/// commas; each must be in the run `c`): the stages, in the order given. Throws usage_error naming --stage.
std::vector<attn::stage_id> stages_from_flag(const std::string& text, const attn::config& c);

/// Refuses a thread count (`how` "--threads " or "ATTN_THREADS=", 0: not given) above
/// attn::threads_that_fit(): "--threads 4096: ulimit -v 1.9 GiB holds at most 11 threads (each a
/// stack of 8.0 MiB, ulimit -s, and a 64 MiB malloc arena, in half of what attn leaves free); give
/// --threads 11 or fewer", before anything is written.
void check_threads_fit(int threads, const std::string& how);

}  // namespace attn_app
