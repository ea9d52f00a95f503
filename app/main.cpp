// attn: see, step by step, what multi-head attention computes.
//
// Wiring only: parse the command line, run the chosen subcommand, turn errors
// into `attn: error: ...` and the exit codes of CLI.md (2 usage, 1 otherwise).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/compute/error.hpp"
#include "attn/compute/threads.hpp"
#include "attn/text/printable_text.hpp"
#include "attn/io/output_file.hpp"
#include "commands.hpp"
#include "exit_status.hpp"
#include "help_format.hpp"
#include "messages.hpp"
#include "signals.hpp"
#include "standard_output.hpp"

#ifndef ATTN_VERSION
#define ATTN_VERSION "0.1.0"
#endif

namespace {

/// The command line, parsed and run; the exit status. Write errors go to main.
int run(int argc, char** argv) {
    CLI::App app{"attn: see, step by step, what multi-head attention computes.\n"
                 "Every stage (input, projections, view, transpose, scores, scaling, mask, softmax,\n"
                 "weights·V, merge, concat, output) with PyTorch's numbers for the same seed.",
                 "attn"};
    app.formatter(std::make_shared<attn_app::help_formatter>());  // before the commands: they inherit it
    app.set_help_flag("-h,--help", "print this help and exit");
    app.set_version_flag("--version", "attn " ATTN_VERSION, "print attn's version and exit");
    app.require_subcommand(1);
    app.footer("Examples:\n  attn trace --heads 4 --mask causal\n"
               "  attn trace --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --format json | jq .stages.softmax\n"
               "  attn mask --mask causal+padding --lengths 3,5 --batch 2 --seq 5\n"
               "  attn check --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --stage softmax --answer w.npy\n"
               "  attn exercise show 7 --student alice --out class/alice\n"
               "  attn tokens --params gpt2/model.safetensors --text \"The robot reads the book.\"\n\n"
               "Run `attn trace --help` for every option, `attn mask --help` for the mask conventions,\n"
               "`attn check --help` for checking an answer and the mistakes it names, `attn exercise --help`\n"
               "for the classroom exercises, `attn tokens --help` for a checkpoint's tokenizer.");
    // Only the command named first is built when there is one (building all four costs start-up
    // time, docs/speed.md); otherwise all of them, for `attn --help` and the error messages.
    attn_app::remember_command_line(argc, argv);
    const std::string first = argc > 1 ? argv[1] : "";
    const bool named = first == "trace" || first == "mask" || first == "check" || first == "exercise" || first == "tokens";
    if (!named || first == "trace") attn_app::setup_trace(app);
    if (!named || first == "mask") attn_app::setup_mask(app);
    if (!named || first == "check") attn_app::setup_check(app);
    if (!named || first == "exercise") attn_app::setup_exercise(app);
    if (!named || first == "tokens") attn_app::setup_tokens(app);
    for (CLI::App* command : app.get_subcommands({})) command->group("Commands");

    app.failure_message(attn_app::failure_message(std::vector<std::string>(argv + 1, argv + argc)));
    // Once the command line is parsed (so --help still helps), before the command runs.
    app.parse_complete_callback([] {
        if (attn::threads_in_environment() < 0)
            throw attn::usage_error("ATTN_THREADS=" + attn::printable_text(std::getenv("ATTN_THREADS")) +
                                    ": expected a whole number from 1 to " + std::to_string(attn::max_threads) +
                                    " (or leave it unset for every core)");
        attn_app::check_threads_fit(attn::threads_in_environment(), "ATTN_THREADS=");
    });

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // CLI11 prints help and version (exit 0), and every other parse error through
        // attn's failure_message (messages.hpp): a usage error, exit 2 rather than CLI11's 100+.
        return app.exit(e) == 0 ? 0 : 2;
    } catch (const attn::write_error&) {  // main says it, once stdout is settled
        throw;
    } catch (const attn_app::exit_status& e) {  // said all it has to say (attn check: a mismatch)
        return e.code;
    } catch (const attn::usage_error& e) {  // control characters from a file name or a file escaped: one line
        std::cerr << "attn: error: " << attn_app::terminal_line(e.what()) << "\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "attn: error: out of memory (try smaller sizes, or see --max-memory)\n";
        return 1;
    } catch (const std::exception& e) {  // attn::error, and anything else
        std::cerr << "attn: error: " << attn_app::terminal_line(e.what()) << "\n";
        return 1;
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    std::ios::sync_with_stdio(false);
    attn_app::install_signal_handlers();
    attn_app::use_checked_standard_output();
    int status = 0;
    try {
        status = run(argc, argv);
        attn_app::finish_standard_output();
    } catch (const attn::write_error& e) {
        status = attn_app::report_write_error(e);
    }
    attn_app::release_standard_output();
    return status;
}
