// `attn check`: trace's run flags (run_flags.hpp), the stage and the answer to
// check, the tolerance and --format. Wiring only: the comparison and the
// diagnosis are lib/teach/check, the report lib/render/render_check.
#include "commands.hpp"

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "attn/compute/error.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/io/answer_file.hpp"
#include "attn/io/npy.hpp"
#include "attn/io/tensor_file.hpp"
#include "attn/render/render_check.hpp"
#include "attn/teach/check.hpp"
#include "exit_status.hpp"
#include "help_format.hpp"
#include "messages.hpp"
#include "run_flags.hpp"

namespace attn_app {
namespace {

struct check_options {
    run_options run;
    std::string stage, tensor, answer;
    attn::check_tolerance tol;
    std::string format = "table";
};

void require_tolerance(double value, const char* flag) {
    if (!(value >= 0.0) || !std::isfinite(value))
        throw attn::usage_error(std::string(flag) + " must be 0 or more");
}

/// The report on stdout; a mismatch exits 1.
void show_report(const attn::check_report& report, const std::string& format) {
    if (format == "json")
        attn::render_check_json(report, std::cout);
    else
        attn::render_check_table(report, std::cout);
    if (!report.match) throw exit_status{1};
}

void run_check(const check_options& o, const flag_given& given) {
    if (o.stage.empty())
        throw attn::usage_error("--stage is required: the stage the answer is for, by name or number "
                                "(e.g. --stage softmax or --stage 10)");
    if (o.answer.empty())
        throw attn::usage_error("--answer is required: the tensor to check, .json nested arrays (tensor.tolist()) "
                                "or .npy (np.save)");
    if (given("--mistake"))
        throw attn::usage_error("--mistake makes a mistake on purpose in attn trace; attn check compares the answer "
                                "with the right run and names the mistake itself");
    require_tolerance(o.tol.atol, "--atol");
    require_tolerance(o.tol.rtol, "--rtol");

    attn::loaded_inputs loaded = load_run_inputs(o.run, given);
    const attn::config& c = loaded.cfg;
    const std::vector<attn::stage_id> stages = stages_from_flag(o.stage, c);
    if (stages.size() != 1)
        throw attn::usage_error("--stage " + o.stage + ": attn check checks one stage; give one name or number");
    const std::string stage(attn::info_of(stages.front()).name);
    const std::string what = "--answer " + o.answer;
    // an .npy or .npz answer's shape from its header: of a count no run makes, it is reported
    // without reading or inflating its data (which may be gigabytes) or computing anything
    if (const auto shape =
            read_answer(o.format == "json", [&] { return attn::answer_file_shape(o.answer, what, stage, o.tensor); }))
        if (const auto report = attn::check_answer_shape(c, stage, o.tensor, *shape, o.tol))
            return show_report(*report, o.format);
    check_whole_run_memory(c, c.limits.max_memory);
    attn::read_budget budget = read_budget_of(c.limits.max_memory);
    const attn::loaded_tensor answer = read_answer(
        o.format == "json", [&] { return attn::read_answer_file(o.answer, what, stage, o.tensor, &budget); });
    const attn::inputs in = attn::draw_inputs(c, std::move(loaded.given));
    show_report(attn::check_answer(c, in, stage, o.tensor, answer, o.tol), o.format);
}

}  // namespace

void setup_check(CLI::App& app) {
    auto o = std::make_shared<check_options>();
    CLI::App* cmd = app.add_subcommand(
        "check", "Check an answer against one stage; name the mistake it makes.");
    cmd->footer(
        wrap("attn computes the run the flags describe (the same flags as attn trace: same seed, same numbers) "
             "and compares the answer, element by element, with the stage's tensor: |answer - expected| <= "
             "atol + rtol·|expected|, NaN equal to NaN, as numpy.allclose(equal_nan=True). On a mismatch it "
             "says what the answer's shape suggests, where the largest error is, and which common mistake the "
             "answer makes: it recomputes the run with each mistake made (as attn trace --mistake ID makes it), "
             "so a mistake is recognised in every later stage too, and names the one whose stage the answer "
             "matches, with the fix, and for the masked, softmax and dropout stages where it first shows (\"query 0 → "
             "key 1 (batch 0, head 0) has weight 0.31 where the causal mask forbids it\"). When none fits, the "
             "answer's structure may still say what departs (planes transposed, weight where the mask forbids, none where it "
             "allows, rows not summing to 1); unknown when nothing does. The right numbers in another shape "
             "([B·H,Sq,Sk] from bmm, an extra axis of 1) are right_values_other_shape, with the .view(...) "
             "that fixes them.",
             help_width) +
        "\n\n" +
        wrap("Diagnosis ids (stable, for graders): softmax_axis (dim=-2 or dim=1 instead of dim=-1), "
             "missing_scale (no / √dk), wrong_scale (/ √D, / D or / dk), mask_inverted, fill_value (0 instead "
             "of -inf, -1e9 for -inf, ...), split_without_transpose (q.view(B,H,S,dk)), merge_without_transpose "
             "(context.view(B,Sq,D)), weight_not_transposed (x·W), q_k_swapped (K·Qᵀ), missing_bias, "
             "dropout_not_rescaled (weights·keep, no / (1 - p)), dropout_keep_inverted (weights·~keep / (1 - p)), "
             "weights_transposed (weightsᵀ·V), mask_not_applied, mask_or_instead_of_and (causal | padding), "
             "causal_only, padding_only, padding_on_queries, diagonal_masked (tril(ones, -1)), window_off_by_one "
             "(|i - j| < W or <= W + 1), masked_after_softmax (softmax, then masked_fill(mask == 0, 0)), "
             "nan_replaced (torch.nan_to_num), log_softmax, sigmoid_instead_of_softmax, scale_multiplied "
             "(· √dk), heads_interleaved (view(B,S,dk,H).permute(0,3,1,2)), causal_misaligned (a KV-cache "
             "step's causal mask aligned upper-left), kv_heads_tiled (k.repeat(1, H/G, 1, 1) for repeat_interleave), "
             "rope_positions_from_zero (a decoding step's new q and k rotated from position 0), rope_pairs_mixed "
             "(rotate_half and rotate_every_two swapped), alibi_sign (ALiBi's bias +m·(i - j)); "
             "from the structure: "
             "planes_transposed, weight_where_masked, zero_where_allowed, rows_not_normalized; "
             "right_values_other_shape; unknown.",
             help_width) +
        "\n\n"
        "Examples:\n"
        "  attn check --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --stage softmax --answer w.npy\n"
        "  attn check --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --stage 12 --answer context.json\n"
        "  attn check --stage transpose --tensor k --answer k.npy --atol 1e-4\n"
        "  attn check --stage softmax --answer w.json --format json | jq -r .diagnosis.id\n"
        "  attn trace --mistake softmax_axis --stage softmax   # what softmax_axis looks like\n\n"
        "Exit status: 0 the answer matches, 1 it does not (the report says why),\n"
        "2 bad flags (a message on stderr says which). A file that cannot be read exits 1 too,\n"
        "with one line on stderr and no report: --format json then prints {\"match\": null,\n"
        "\"error\": {\"id\": \"unreadable_answer\", ...}} where a mismatch has \"match\": false.");

    cmd->option_defaults()->group("What to check");
    cmd->add_option("--stage", o->stage, "the stage the answer is for, by name or number: softmax or 10")
        ->type_name("STAGE");
    cmd->add_option("--tensor", o->tensor, "the stage's tensor, for a stage with several: q, k or v; dropout's keep")
        ->default_str("the stage's first")
        ->type_name("NAME");
    cmd->add_option("--answer", o->answer, "the answer: .json nested arrays (tensor.tolist()), .npy (np.save) or .npz (np.savez: its one array, or the one named STAGE.TENSOR as --format npz dumps name it); an .npy's or .npz member's shape is checked from its header before its data is read")
        ->transform(path_name())->type_name("FILE");
    cmd->add_option("--atol", o->tol.atol, "absolute tolerance")
        ->default_val(o->tol.atol)
        ->transform(number())
        ->type_name("A");
    cmd->add_option("--rtol", o->tol.rtol, "relative tolerance, times |expected|")
        ->default_val(o->tol.rtol)
        ->transform(number())
        ->type_name("R");
    add_choice(cmd, "--format", o->format, {"table", "json"}, "FORMAT",
               "table (for reading) or json (one object: match, stage, tensor, expected_shape, answer_shape, "
               "max_error, max_error_at, diagnosis {id, message, made_at})");
    add_max_memory_flag(cmd, o->run.max_memory);

    add_run_flags(cmd, o->run);
    cmd->get_option("--mistake")->group("");  // trace's; hidden here, and refused with a word on why

    cmd->callback([o, cmd] { run_check(*o, flags_given_to(cmd)); });
}

}  // namespace attn_app
