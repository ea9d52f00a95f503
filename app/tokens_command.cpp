// `attn tokens`: --params and --text; the text's tokens as the checkpoint's own tokenizer makes
// them. Wiring only: the tokenizer is lib/io/byte_level_bpe, the layout lib/render/render_tokens.
#include "commands.hpp"

#include <iostream>
#include <memory>
#include <string>

#include "attn/io/byte_level_bpe.hpp"
#include "attn/render/render_tokens.hpp"
#include "attn/text/printable_text.hpp"
#include "attn/text/utf8_text.hpp"
#include "help_format.hpp"
#include "messages.hpp"
#include "run_flags.hpp"

namespace attn_app {
namespace {

struct tokens_options {
    std::string params, text, format = "table", max_memory;
};

}  // namespace

void setup_tokens(CLI::App& app) {
    auto o = std::make_shared<tokens_options>();
    CLI::App* cmd = app.add_subcommand("tokens", "Show the ids and pieces a checkpoint's tokenizer makes of a text.");
    cmd->footer(
        wrap("The tokenizer beside --params: GPT-2's byte-level BPE (vocab.json and merges.txt, as Hugging Face "
             "saves them), computed as openai/gpt-2's encoder: the text is cut by GPT-2's pattern (words with "
             "their leading space, numbers, punctuation, runs of spaces), each piece's UTF-8 bytes become "
             "characters (a space is Ġ, a newline Ċ), and the merges of merges.txt join them, best first. The ids "
             "line is what --tokens takes; `attn trace --text` runs layer 0 from the same ids.",
             help_width) +
        "\n\n"
        "Examples:\n"
        "  attn tokens --params gpt2/model.safetensors --text \"The robot reads the book.\"\n"
        "  attn tokens --params gpt2/model.safetensors --text @story.txt --format json | jq -c .ids\n\n"
        "Exit status: 0 ok, 2 bad flags, 1 anything else (a message on stderr says which).");
    cmd->option_defaults()->group("Input");
    cmd->add_option("--params", o->params, "the checkpoint whose folder holds vocab.json and merges.txt")
        ->required()
        ->transform(path_name())
        ->type_name("FILE");
    cmd->add_option("--text", o->text, "the text (UTF-8), or @FILE holding it")->required()->type_name("TEXT");
    cmd->option_defaults()->group("Output");
    add_choice(cmd, "--format", o->format, {"table", "json"}, "FORMAT",
               "table (the ids, then a row per token) or json ({\"ids\": [...], \"tokens\": [...]})");
    add_max_memory_flag(cmd, o->max_memory);
    cmd->callback([o] {
        const attn::read_budget budget = read_budget_of(memory_limit(o->max_memory));
        const attn::text_tokens t = attn::tokenize_beside(o->params, o->text, &budget);
        if (o->format == "json") attn::render_tokens_json(t, std::cout);
        else attn::render_tokens_table(t, std::cout);
        std::cout.flush();
        if (o->format == "json" && !attn::is_utf8(t.vocab_path))  // said once, as trace says it of a model's name
            std::cerr << "attn: warning: the file name " << attn::utf8_escaped(attn::printable_text(t.vocab_path))
                      << " is not UTF-8: the JSON's \"vocab\" writes each such byte escaped as \\xNN\n";
    });
}

}  // namespace attn_app
