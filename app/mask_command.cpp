// `attn mask`: trace's shape and mask flags (run_flags.hpp) and --format; the
// mask they make, shown in PyTorch's four conventions. Wiring only: the texts
// and expressions are lib/teach/mask_conventions, the layout lib/render/render_mask.
#include "commands.hpp"

#include <iostream>
#include <memory>
#include <string>

#include "attn/compute/error.hpp"
#include "attn/compute/mask_stream.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/render/render_mask.hpp"
#include "attn/teach/advice.hpp"
#include "attn/teach/mask_conventions.hpp"
#include "help_format.hpp"
#include "messages.hpp"
#include "run_flags.hpp"

namespace attn_app {
namespace {

struct mask_options {
    run_options run;
    std::string format = "table";
};

void run_mask(const mask_options& o, const flag_given& given) {
    run_options run = o.run;
    run.files.mask_only = true;  // --max-memory against the mask's need, not a trace's
    const attn::loaded_inputs loaded = load_run_inputs(run, given);
    const attn::config& c = loaded.cfg;
    if (!c.mask.any())
        throw attn::usage_error("attn mask shows a mask: give --mask KINDS (causal, padding, window, random "
                                "joined by '+'), --mask-file or --key-padding-mask, e.g. attn mask --mask causal");
    const xt::xarray<bool>* files = loaded.given.mask ? &*loaded.given.mask : nullptr;
    const attn::mask_stream mask(c, files);  // [B,1,Sq,Sk], true = may attend, a row at a time
    const attn::mask_views views = attn::describe_mask(c, files);
    attn::warning_list warnings = loaded.warnings;
    for (attn::warning& w : attn::settings_advice(c)) warnings.push_back(std::move(w));
    if (o.format == "json")
        attn::render_mask_json(c, views, mask, warnings, std::cout);
    else
        attn::render_mask_table(c, views, mask, warnings, std::cout);
    std::cout.flush();  // before the warnings (standard_output.hpp: a write error throws)
    for (const attn::warning& w : warnings) std::cerr << "attn: warning: " << attn_app::terminal_line(w.text) << "\n";
}

}  // namespace

void setup_mask(CLI::App& app) {
    auto o = std::make_shared<mask_options>();
    CLI::App* cmd = app.add_subcommand(
        "mask", "Show one mask in PyTorch's four conventions, and the PyTorch for each.");
    cmd->footer(
        wrap("PyTorch writes the same mask four ways, and a mask written one way and read another "
             "attends exactly the wrong keys. keep: true = may attend (attn's mask stage; seed notebook "
             "000's torch.tril, filled where mask == 0). mha: true = may NOT attend (nn.MultiheadAttention's "
             "boolean attn_mask and key_padding_mask; notebook 003's torch.triu(..., diagonal=1).bool()). "
             "sdpa: true = may attend (F.scaled_dot_product_attention's boolean attn_mask). additive: 0 = may "
             "attend, -inf = may not, added to the scores. For each, attn mask prints the Python that builds "
             "it, applies it and hands it to PyTorch, what a row with no allowed key becomes, and the mask "
             "itself, per batch item when it differs. Both formats are written a query row at a time (a random "
             "mask drawn as it goes; only mask files are held, as read), so --max-memory bounds a row, not the "
             "mask: attn mask --mask causal --seq 20000 --format json writes 8.8 GB in a few MiB.",
             help_width) +
        "\n\n"
        "Examples:\n"
        "  attn mask --mask causal --seq 4\n"
        "  attn mask --mask causal+padding --lengths 3,5 --batch 2 --seq 5\n"
        "  attn mask --mask causal --seq 2 --kv-seq 5 --causal-align lower-right\n"
        "  attn mask --mask padding --lengths 2,0 --batch 2 --seq 3 --safe-softmax\n"
        "  attn mask --mask-file triu.npy --mask-convention mha\n"
        "  attn mask --mask causal --seq 3 --kv-seq 5 --format json | jq -r '.conventions[1].torch'\n\n"
        "Exit status: 0 ok, 2 bad flags, 1 anything else (a message on stderr says which).");

    add_shape_flags(cmd, o->run);
    add_mask_flags(cmd, o->run);

    cmd->option_defaults()->group("Output");
    add_choice(cmd, "--format", o->format, {"table", "json"}, "FORMAT",
               "table (the four side by side, for reading) or json (one object per convention: name, "
               "meaning, the PyTorch expression, data)");
    add_max_memory_flag(cmd, o->run.max_memory);

    cmd->callback([o, cmd] { run_mask(*o, flags_given_to(cmd)); });
}

}  // namespace attn_app
