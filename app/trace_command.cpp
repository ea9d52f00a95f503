// `attn trace`: the run flags (run_flags.hpp) and trace's output flags, turned
// into a config and render options; then one pass of the library.
#include "commands.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/memory.hpp"
#include "attn/compute/work.hpp"
#include "attn/compute/threads.hpp"
#include "attn/io/output_file.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/io/output_space.hpp"
#include "attn/render/heatmap_panels.hpp"
#include "attn/render/output_format.hpp"
#include "attn/teach/advice.hpp"
#include "attn/text/join.hpp"
#include "attn/text/printable_text.hpp"
#include "help_format.hpp"
#include "messages.hpp"
#include "progress.hpp"
#include "run_flags.hpp"
#include "standard_output.hpp"
#include "picture_flags.hpp"
#include "view_flags.hpp"

namespace attn_app {
namespace {

/// Everything the flags say: the run's (run_flags.hpp), then how to show it.
struct trace_options {
    run_options run;

    std::string format = "table";
    std::string stages;
    std::string out;
    int precision = 4;
    std::string sci_mode = "auto";
    bool full = false;
    std::string color = "auto";
    view_flags views;              // --batch-index, --head, --row
    picture_flags pictures;        // --vmin, --vmax, --layout
    bool explain = false;
    bool shapes = false;           // --shapes: the chain of shapes and strides, nothing computed
    bool graph = false;            // --graph: the run's stages drawn as a graph (svg, png), nothing computed
    int threads = 0;               // --threads N; 0: $ATTN_THREADS, else every core
    std::size_t block_rows = 0;    // --block-rows N (hidden, for tests): the [B,H,Sq,Sk] stages in blocks of N rows
    bool stats = false;            // --stats: each shown tensor's statistics
    bool quiet = false;  // no progress line
    bool no_space_check = false;  // --no-space-check: write --out even when its file system looks too full
};

/// Why this run has no stage `info` (stage_in_run says so), for --stage's messages.
std::string absent_because(const attn::stage_info& info) { return std::string(attn::absent_because(info.id)); }

/// "softmax (10)": a stage as --stage's messages name it.
std::string name_and_step(const attn::stage_info& info) { return std::string(info.name) + " (" + info.step.text() + ")"; }

/// The number `text` is made of (at most 1000: no stage has a larger one), or -1
/// when it is not only digits.
int small_number(std::string_view text) {
    if (text.empty()) return -1;
    int n = 0;
    for (char ch : text) {
        if (ch < '0' || ch > '9') return -1;
        n = std::min(n * 10 + (ch - '0'), 1000);
    }
    return n;
}

/// Whether `text` is meant as a stage number ("10", "5a"): names start with a letter.
bool numbered(std::string_view text) { return !text.empty() && text[0] >= '0' && text[0] <= '9'; }

/// The stage numbered `text` (as --stage was given it in `entry`), or an error. A number the
/// stages added since 15 had before they were lettered (21: alibi, now 7a) is taken, with a warning.
const attn::stage_info& stage_numbered(std::string_view text, const std::string& entry) {
    const std::optional<attn::stage_step> step = attn::parse_step(text);
    const attn::stage_info* info = step ? attn::find_stage_info(*step) : nullptr;
    if (info == nullptr && step && step->plain() && (info = attn::find_former_step(step->number)) != nullptr)
        std::cerr << "attn: warning: --stage " << entry << ": " << text << " is the old number of " << info->name
                  << "; it is numbered " << info->step.text() << " now\n";
    if (info == nullptr)
        throw attn::usage_error("--stage " + entry + ": there is no stage " + std::string(text) +
                                " (the stages are numbered " + attn::stage_numbers_list() + ")");
    return *info;
}

/// A name that is no stage's: the tensor of that name, and the stage to ask for instead.
[[noreturn]] void no_stage_called(const std::string& name, const attn::config& c) {
    const std::vector<const attn::stage_info*> holders = attn::stages_holding(name);
    if (holders.empty())
        throw attn::usage_error("--stage " + name + ": no stage is called " + name + " (" + attn::stage_choices() + ")");
    std::vector<std::string> where;
    const attn::stage_info* in_run = nullptr;
    for (const attn::stage_info* holder : holders) {
        where.push_back(name_and_step(*holder));
        if (in_run == nullptr && attn::stage_in_run(c, holder->id)) in_run = holder;
    }
    const std::string opening = "--stage " + name + ": no stage is called " + name + "; the tensor " + name +
                                " is in stage " + attn::join(where, ", ", " and ");
    if (in_run != nullptr) throw attn::usage_error(opening + ": --stage " + std::string(in_run->name));
    throw attn::usage_error(opening + ", which this run does not have (" + absent_because(*holders[0]) + ")");
}

/// --stage a,b,c: stage names, numbers (10 = softmax, 5a = rope) or ranges of numbers (6-10,
/// 5a-7), in any order; each named or numbered stage must be in this run, and a range takes
/// the stages of this run from its first to its last, as they are printed (6-10: 7a and 7b too).
std::vector<attn::stage_id> parse_stages(const std::string& text, const attn::config& c) {
    std::vector<attn::stage_id> ids;
    if (text.empty()) return ids;
    for (std::string entry : CLI::detail::split(text, ',')) {
        entry = CLI::detail::trim_copy(entry);
        if (entry.empty())
            throw attn::usage_error("--stage " + text + ": an empty entry (give names or numbers joined by commas, "
                                    "as in --stage 6,softmax)");
        const std::size_t dash = entry.find('-');
        if (dash != std::string::npos && numbered(entry.substr(0, dash))) {  // a range a-b
            if (!attn::parse_step(entry.substr(dash + 1)))
                throw attn::usage_error("--stage " + entry + ": expected a range of stage numbers such as 6-10");
            const attn::stage_info& first = stage_numbered(entry.substr(0, dash), entry);
            const attn::stage_info& last = stage_numbered(entry.substr(dash + 1), entry);
            if (first.id > last.id)
                throw attn::usage_error("--stage " + entry + ": a range goes up, as in " + last.step.text() + "-" +
                                        first.step.text());
            const std::size_t before = ids.size();
            for (const attn::stage_info& info : attn::stage_table)
                if (info.id >= first.id && info.id <= last.id && attn::stage_in_run(c, info.id)) ids.push_back(info.id);
            if (ids.size() == before)
                throw attn::usage_error("--stage " + entry + ": this run has none of these stages (" +
                                        std::string(first.name) + ": " + absent_because(first) + ")");
            continue;
        }
        const attn::stage_info* info =
            numbered(entry) ? &stage_numbered(entry, entry) : attn::find_stage_info(entry);
        if (info == nullptr) no_stage_called(entry, c);
        if (!attn::stage_in_run(c, info->id))
            throw attn::usage_error("--stage " + entry + ": this run has no " + std::string(info->name) + " stage (" +
                                    absent_because(*info) + ")");
        ids.push_back(info->id);
    }
    return ids;
}

/// The stages of --stage as the renderers take them: 0 when none were given (all of them).
attn::stage_set stage_set_of(const std::vector<attn::stage_id>& ids) {
    attn::stage_set set = 0;
    for (const attn::stage_id id : ids) set |= attn::stage_bit(id);
    return set;
}

bool use_color(const trace_options& o) {
    return (o.color != "auto" || o.out.empty()) && color_on_standard_output(o.color);  // auto: never into --out
}

/// The terminal's width in columns (for --format heatmap's panels side by side):
/// the terminal's own, else $COLUMNS, else 80.
std::size_t terminal_width() {
    winsize size{};
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
    const char* columns = std::getenv("COLUMNS");
    const int n = columns != nullptr ? small_number(columns) : -1;
    return n > 0 ? static_cast<std::size_t>(n) : 80;
}

attn::sci_mode parse_sci_mode(const std::string& text) {
    return text == "on" ? attn::sci_mode::on : text == "off" ? attn::sci_mode::off : attn::sci_mode::automatic;
}

/// The output: --out FILE, opened at once (a directory, a read-only file or a dangling link
/// is refused before anything is computed: output_file.hpp), else stdout.
class trace_output {
public:
    explicit trace_output(const std::string& path)
        : file_(path.empty() ? nullptr : std::make_unique<attn::output_file>(path, "--out " + path)),
          what_(path.empty() ? "standard output" : "--out " + path) {}
    std::ostream& stream() { return file_ ? file_->stream() : std::cout; }
    const std::string& what() const { return what_; }
    void commit() {
        if (file_) file_->commit();
        else std::cout.flush();  // standard_output.hpp: a write error throws
    }

private:
    std::unique_ptr<attn::output_file> file_;
    std::string what_;
};

/// The command line attn was started with, for --format py's header (remember_command_line).
std::string& command_line() {
    static std::string line = "attn trace";
    return line;
}

/// What the flags ask to show of the run `c`, checked against its sizes.
attn::render_options view_of(const trace_options& o, const flag_given& given, const attn::config& c) {
    const attn::output_format& format = attn::output_format_named(o.format, false);
    attn::render_options view;
    view.stages = stage_set_of(parse_stages(o.stages, c));
    view.precision = o.precision;
    view.notation = parse_sci_mode(o.sci_mode);
    view.full = o.full;
    view.color = use_color(o);
    set_views(o.views, given, c, format, view);
    set_picture_options(o.pictures, given, format, view);
    view.explain = o.explain;
    view.stats = o.stats;
    view.graph = o.graph;  // html: the graph beside the stages
    view.input_file = o.run.files.input;  // py: the script loads them
    view.kv_input_file = o.run.files.kv_input;
    view.params_file = o.run.files.params;
    view.q_file = o.run.files.q;
    view.k_file = o.run.files.k;
    view.v_file = o.run.files.v;
    view.mask_file = o.run.files.mask;
    view.key_padding_file = o.run.files.key_padding_mask;
    return view;
}

/// The run's work, stage by stage, in seconds on this machine: measured speeds when the
/// run may take long and someone will be told (`told`: measuring costs a few
/// milliseconds), else nominal ones (the shares are what the progress line counts).
/// `measured` says which.
std::vector<progress_step> work_steps(const attn::config& c, const attn::stage_plan& plan, bool told,
                                      bool& measured) {
    const attn::run_plan run = attn::make_plan(c, plan);
    attn::machine_speed speed{2e11, 4e8, 2e9};  // a fast machine's: products, draws, elementwise
    double seconds = 0;
    for (const attn::planned_stage& s : run.stages) seconds += attn::seconds_of(s.cost, speed);
    measured = told && seconds > 1;
    if (measured) speed = attn::measure_speed();
    std::vector<progress_step> steps;
    for (const attn::planned_stage& s : run.stages)
        if (s.computed) steps.push_back({s.instance().name(), attn::seconds_of(s.cost, speed)});
    return steps;
}

/// For a run that will take long, says so before it starts: "attn trace: this run
/// computes for about 40 s on this machine (--quiet: not said)".
void say_if_long(const std::vector<progress_step>& steps) {
    double seconds = 0;
    for (const progress_step& s : steps) seconds += s.cost;
    if (seconds < 10) return;
    const auto largest = std::max_element(steps.begin(), steps.end(),
                                          [](const progress_step& a, const progress_step& b) { return a.cost < b.cost; });
    std::cerr << "attn trace: this run computes for about " << static_cast<long long>(seconds + 0.5)
              << " s on this machine, most of it in " << largest->name << "\n";
}

/// The bytes free where --out `path` goes: $ATTN_TEST_FREE_BYTES when set (a hook for the
/// tests, which cannot fill a disk), else the file system's (output_space.hpp).
std::optional<std::uint64_t> free_bytes_at(const std::string& path) {
    if (const char* told = std::getenv("ATTN_TEST_FREE_BYTES")) return std::strtoull(told, nullptr, 10);
    return attn::free_bytes_for(path);
}

/// --out FILE: the fewest bytes the format writes (output_format.hpp) against the space free
/// there; refused before anything is computed.
void check_output_space(const trace_options& o, const attn::output_format& format, const attn::config& c,
                        const attn::render_options& view) {
    if (o.out.empty() || o.no_space_check) return;
    const std::uint64_t need = attn::least_format_bytes(c, format, view);
    if (need == 0) return;
    if (const std::optional<std::uint64_t> free = free_bytes_at(o.out)) attn::check_free_space(need, *free, "--out " + o.out);
}

/// The progress line of a run of `plan` (none with --quiet), after saying so when the run will take long.
progress_line progress_of(const trace_options& o, const attn::config& c, const attn::stage_plan& plan) {
    bool measured = false;
    std::vector<progress_step> steps = work_steps(c, plan, !o.quiet, measured);
    if (measured) say_if_long(steps);
    return progress_line(progress_wanted(o.quiet), std::move(steps));
}

/// --shapes, --format dot and --graph: the flags they cannot go with, refused before anything is read.
void check_plan_flags(const trace_options& o, const attn::output_format& format, const flag_given& given) {
    const bool graph = format.graph == attn::format_graph::text || o.graph;
    if (o.graph && format.graph != attn::format_graph::drawn && format.graph != attn::format_graph::text)
        throw attn::usage_error("--graph draws the run's stages with --format svg, png or html (or writes them with "
                                "--format dot), not --format " + o.format);
    if (o.graph && o.shapes) throw attn::usage_error("--graph draws what --shapes prints: give one of them");
    if (!format.shapes && !graph)
        throw attn::usage_error("--shapes prints a table or JSON (--format table or json), not --format " + o.format);
    const std::string what = graph ? std::string(o.graph ? "--graph" : "--format dot") +
                                         " draws the run's stages and layouts, nothing computed; "
                                   : "--shapes shows whole tensors' layouts in the right computation; ";
    for (const char* flag : {"--batch-index", "--head", "--row", "--explain", "--mistake", "--stats"})
        if (given(flag) && !(graph && std::string_view(flag) == "--mistake"))  // the graph marks a mistake's step
            throw attn::usage_error(what + flag + " is for their numbers: leave out one of them");
}

/// --shapes, --format dot and --graph: every stage's shapes and strides from the sizes alone
/// (run_plan.hpp); no input is drawn and no stage computed, so any --seq answers at once.
void run_plan(const trace_options& o, const attn::output_format& format, const flag_given& given) {
    check_plan_flags(o, format, given);
    const attn::loaded_inputs loaded = load_run_inputs(o.run, given);
    attn::render_options view;
    view.stages = stage_set_of(parse_stages(o.stages, loaded.cfg));
    view.color = use_color(o);
    trace_output out(o.out);
    attn::write_plan(loaded.cfg, format, o.graph, view, out.stream());
    out.commit();
}

/// A run the flags describe, ready to compute: its config and the tensors read from files, what
/// to show, the format and the plan (output_format.hpp: within --max-memory), and --out's space checked.
struct prepared_trace {
    attn::loaded_inputs loaded;
    attn::render_options view;
    const attn::output_format& format;
    attn::stage_plan plan;
};

prepared_trace prepare_trace(const trace_options& o, const flag_given& given) {
    attn::loaded_inputs loaded = load_run_inputs(o.run, given);
    attn::render_options view = view_of(o, given, loaded.cfg);
    const attn::output_format& format = attn::output_format_named(o.format, view.row.has_value());
    attn::fit_view_to_format(loaded.cfg, format, o.stages, view);
    attn::stage_plan plan = attn::plan_output(loaded.cfg, format, view, o.block_rows);
    attn::check_format_fits(loaded.cfg, format, view, plan);  // a PNG's canvas, before the run
    check_output_space(o, format, loaded.cfg, view);
    return {std::move(loaded), std::move(view), format, std::move(plan)};
}

/// The run's inputs, drawn as PyTorch would where no file gave them, with the warnings of
/// reading the files and the advice about the settings: the trace repeats them next to their stage.
attn::inputs draw_run_inputs(attn::loaded_inputs& loaded) {
    attn::inputs in = attn::draw_inputs(loaded.cfg, std::move(loaded.given));
    in.warnings = std::move(loaded.warnings);
    for (attn::warning& w : attn::run_advice(loaded.cfg)) in.warnings.push_back(std::move(w));
    return in;
}

void run_trace(const trace_options& o, const flag_given& given) {
    check_threads_fit(o.threads, "--threads ");  // libgomp ends the process when a thread cannot start
    const attn::output_format& named = attn::output_format_named(o.format, false);
    if (attn::plan_only(named, o.shapes, o.graph)) return run_plan(o, named, given);
    if (!named.writes.empty() && o.out.empty() && isatty(STDOUT_FILENO))
        throw attn::usage_error("--format " + o.format + " writes " + std::string(named.writes) + ": give --out FILE." +
                                o.format + " (or redirect stdout to a file)");
    prepared_trace run = prepare_trace(o, given);
    const attn::config& c = run.loaded.cfg;
    if (o.threads != 0) attn::set_thread_count(o.threads);
    trace_output out(o.out);
    progress_line progress = progress_of(o, c, run.plan);
    const attn::warning_list warnings = attn::write_output(run.format, c, draw_run_inputs(run.loaded), run.plan, run.view,
                                                           {out.stream(), out.what(), command_line(), terminal_width()}, progress);
    out.commit();
    progress.finish();
    for (const attn::warning& w : warnings) std::cerr << "attn: warning: " << attn_app::terminal_line(w.text) << "\n";
}

/// The stages by number and name, from stage_table, for trace's --help: at most five
/// columns (85 characters), numbered down the columns.
std::string stages_help() {
    std::string text = "Stages, in order (--stage takes the name or the number):\n";
    const std::size_t n = attn::stage_table.size(), rows = (n + 4) / 5;
    for (std::size_t row = 0; row < rows; ++row) {
        std::string line = " ";
        for (std::size_t i = row; i < n; i += rows) {
            const attn::stage_info& info = attn::stage_table[i];
            const std::string step = info.step.text();
            std::string cell = std::string(3 - step.size(), ' ') + step + " " + std::string(info.name);
            line += cell + std::string(i + rows < n ? 17 - cell.size() : 0, ' ');
        }
        text += line + "\n";
    }
    return text +
           wrap("The numbers increase down the page: 1 to 15 are the classic stages (10 is softmax in every run), "
                "and a stage added since has the number of the one before it and a letter (5a rope, 7a alibi). "
                "A range takes every stage printed from its first number to its last: 6-10 takes 7a and 7b too, "
                "5a-7 rope to scaled. 16 to 25, the added stages' numbers before they had letters, still work, "
                "with a warning that names the new number.",
                help_width) +
           "\n\n" + wrap("Not every run has them all: input and params not with --q --k --v, mask and masked "
                       "only with a mask, dropout only with --train, output not with --no-out-proj, positions only "
                       "with --pos sinusoidal, rope with --pos rope, alibi and biased with --pos alibi, cache and "
                       "append only with --past N, repeat_kv only with --kv-heads G < H, flash only with "
                       "--flash-block N, norm only with a GPT-2 or Llama layer's --params (their norm before "
                       "attention; BERT's embeddings.LayerNorm with --tokens), embed only with --tokens, and "
                       "residual, mlp_norm, mlp and block (the rest of the model's block: the residual sum, the "
                       "MLP's norm, the MLP, the block's output, Hugging Face's hidden_states[L+1]) only with a "
                       "GPT-2, BERT or Llama layer whose --params file holds its MLP.",
                       help_width) +
           "\n\n" +
           wrap("view, transpose and merge are views of the tensor before them, as in PyTorch: new strides, "
                "no data moves. concat copies merge into row-major order (merge.contiguous(); with one head or "
                "one query merge is contiguous already, and concat a view too). The table and json show each "
                "tensor's strides and whether it is contiguous, as t.stride() and t.is_contiguous().",
                help_width);
}

}  // namespace

void remember_command_line(int argc, char** argv) {
    std::string line = "attn";
    for (int i = 1; i < argc; ++i) line += " " + shell_word(argv[i]);
    command_line() = line;
}

std::vector<attn::stage_id> stages_from_flag(const std::string& text, const attn::config& c) {
    return parse_stages(text, c);
}

void setup_trace(CLI::App& app) {
    auto o = std::make_shared<trace_options>();
    CLI::App* cmd = app.add_subcommand(
        "trace",
        "Compute multi-head attention and show every intermediate stage.");
    cmd->footer(
        draw_order_help() +
        "\n\n" + stages_help() +
        "\n\n"
        "Examples:\n"
        "  attn trace --heads 4 --mask causal\n"
        "  attn trace --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --no-out-proj --stage 9,10\n"
        "  attn trace --batch 2 --seq 5 --heads 4 --mask causal --shapes\n"
        "  attn trace --heads 4 --shapes --format json | jq -c .stages.transpose.tensors.k.strides\n"
        "  attn trace --heads 4 --mask causal --format dot --out plan.dot && dot -Tsvg plan.dot -o plan.svg\n"
        "  attn trace --batch 2 --mask causal+padding --lengths 4,2 --fill -1e9\n"
        "  attn trace --kv-seq 6 --d-kv-in 12 --format json | jq '.stages.softmax.tensors.weights.data[0][0]'\n"
        "  attn trace --q q.json --k k.json --v v.json --mask-file m.json --fill -1e9 --format torch\n"
        "  attn trace --input x.npy --params p.npz --format npz --out trace.npz\n"
        "  attn trace --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --format png --out weights.png\n"
        "  attn trace --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --stage scaled,softmax \\\n"
        "    --format png --layout slide --out slide.png\n"
        "  attn trace --mask causal --stage scaled --format heatmap --vmin -2 --vmax 2\n"
        "  attn trace --pos sinusoidal --seq 64 --d-model 128 --stage positions --format png --out pe.png\n"
        "  attn trace --mask causal --format html --out trace.html\n"
        "  attn trace --params gpt2/model.safetensors --tokens 464,2068,7586 --vocab gpt2/vocab.json \\\n"
        "    --stage softmax --format png --out tokens.png\n"
        "  attn trace --heads 2 --mask causal --format py --out lab.py && python3 lab.py\n"
        "  attn trace --from trace.npz --stage softmax --mask causal\n\n"
        "Exit status: 0 ok, 2 bad flags, 1 anything else (a message on stderr says which);\n"
        "130, 143, 129 when stopped by SIGINT, SIGTERM, SIGHUP (no temporary file is left);\n"
        "141, quietly, when the reader of stdout goes away (attn trace | head -1).");

    add_run_flags(cmd, o->run);

    cmd->option_defaults()->group("Output");
    add_choice(cmd, "--format", o->format, attn::output_format_names(), "FORMAT",
               "table (for reading; view and merge as one [S, H·dk] table per batch item, the heads' "
               "columns side by side), json (one document), jsonl (one stage per line, as "
               "computed), npz (NumPy arrays named stage.tensor, plus config; needs --out "
               "or a redirected stdout), torch (each tensor exactly as PyTorch's print(t), "
               "under '# stage.tensor'), py (a runnable PyTorch script: the run computed stage by stage as a "
               "notebook would, each stage asserted equal to attn's numbers, --flash-block's as its loop over "
               "blocks of keys, the files it read loaded with NumPy: --input, --kv-input, --params (a model's checkpoint, "
               ".safetensors read by NumPy, its weights copied into the layers), --tokens through the model's tables, "
               "--q --k --v, --mask-file, --key-padding-mask; a lab starter), heatmap (the attention weights, or the --stage "
               "stages' [.., Sq, Sk] tensors, as coloured grids in the terminal; with --pos also the positions: "
               "--stage positions draws pe [S,Din] and --stage rope cos and sin [Sq,dk], positions down and "
               "features across on -1 .. 1, --stage alibi the bias, a grid per head), svg and png (the "
               "same, drawn for slides: a titled panel per batch item and head), html (one "
               "self-contained page: every stage explained, its tensors as tables and heatmaps), dot (the run's "
               "stages as a Graphviz graph, nothing computed: a box per stage with its tensors' shapes and strides, "
               "an edge from each stage it reads, dashed where it is a view; dot -Tsvg draws it); svg, "
               "png and html need --out or a redirected stdout");
    cmd->add_option("--stage", o->stages,
                    "only these stages, by name or number (see below), comma-separated: "
                    "masked,softmax or 9,10 or 9-10; heatmap, svg and png draw softmax unless given, and can draw " +
                        attn::heatmap::drawable_stages_text())
        ->default_str("all")
        ->type_name("STAGES");
    cmd->add_option("--out", o->out,
                    "write to FILE instead of stdout: a file is replaced whole or not at all (keeping its "
                    "permissions; a read-only one is refused), a symlink is written through, a device or FIFO "
                    "is written to directly, /dev/stdout and /dev/fd/N are that descriptor")
        ->transform(path_name())->type_name("FILE");
    cmd->add_flag("--no-space-check", o->no_space_check,
                  "write --out even when its file system has less space free than the output needs: by default "
                  "json, jsonl, npz (and torch or table with --full) are refused at once, before anything is "
                  "computed, when the fewest bytes they can take are more than statvfs says is free there");
    cmd->add_option("--precision", o->precision, "digits after the decimal point (table, torch)")
        ->default_val(4)
        ->transform(whole_number(0, 12))
        ->type_name("N");
    add_choice(cmd, "--sci-mode", o->sci_mode, {"auto", "on", "off"}, "WHEN",
               "scientific notation: auto, on or off, as torch.set_printoptions(sci_mode=None, True or False)");
    cmd->add_flag("--full", o->full, "print every element; by default tensors over 1000 elements "
                                     "show their first and last 3 along each axis, as PyTorch does");
    add_choice(cmd, "--color", o->color, {"auto", "always", "never"}, "WHEN",
               "auto (only on a terminal, never with NO_COLOR), always, never");
    cmd->add_flag("--explain", o->explain,
                  "explain every stage: what it computes in words, its shapes with this run's numbers, the "
                  "einsum, the line of PyTorch, whether memory is copied, and why the step exists (table, "
                  "json, jsonl)");
    cmd->add_flag("--shapes", o->shapes,
                  "only the chain of shapes and strides: a line per stage with each tensor's shape in letters "
                  "and in this run's numbers, its strides as t.stride() reports them after the notebook's "
                  "operations, and whether it is a view or a copy. Nothing is computed, so any size answers at "
                  "once. Table, or json (attn.shapes/1: the trace JSON's paths, .stages.S.tensors.T.strides, "
                  "without data); with --stage; not with --batch-index, --head, --row, --explain, --mistake or --stats");
    cmd->add_flag("--graph", o->graph,
                  "draw the run's stages as a graph with --format svg or png (laid out by Graphviz): a box per "
                  "stage with its tensors' shapes and strides, an edge from each stage it reads, dashed where it is "
                  "a view; nothing computed. With --format html the page shows it beside the stages, each box a "
                  "link to its stage. --format dot writes the same graph as text");
    cmd->add_flag("--stats", o->stats,
                  "statistics of each shown tensor, over all of it (every row is computed, printed or not; a view "
                  "such as --head prints part of a tensor but its statistics are the whole tensor's): min, max, "
                  "mean and std over the finite values (std as torch.std: unbiased, divided by n-1), and how many "
                  "values are 0, nan, inf and -inf (a masked score is -inf: counted, not averaged). scores and "
                  "scaled add their variance: for q and k with independent entries of mean 0 and variance 1, "
                  "Var(q·k) = dk, so scores' var/dk is about 1 and dividing by √dk brings scaled's var to about 1, "
                  "whatever dk is: that is why softmax is not saturated. (attn's own random weights, as "
                  "nn.Linear's, give q and k entries of variance near 1/3, so var/dk near 1/9 there; --q --k from "
                  "torch.randn give 1.) The weights (softmax, dropout) add, for each row, its entropy "
                  "-Σ p·ln p in nats (0 when all weight is on one key, ln n when spread evenly over n keys) and "
                  "its largest weight with that key (as weights.max(dim=-1)); and for the tensor the mean entropy "
                  "beside ln(keys with a weight above 0) of a uniform row: how peaked the attention is (after "
                  "dropout a row no longer sums to 1, its kept weights scaled by 1/(1-p): the formula's value, not "
                  "a distribution's entropy). Table: a "
                  "stats: line under each tensor and each row's entropy after it; torch: a # stats: line; json, "
                  "jsonl: a \"stats\" object in each tensor (per-row arrays nested [B,H,Sq]); npz: float32 "
                  "members stats.STAGE.TENSOR.STAT; html, heatmap, svg, png: a line under each tensor");
    add_max_memory_flag(cmd, o->run.max_memory);
    cmd->add_option("--threads", o->threads,
                    "threads for the [B,H,Sq,Sk] stages, softmax, the mask and the small per-head products; "
                    "the results are the same bits for any N. Large products run on OpenBLAS's own threads, "
                    "as in PyTorch (every core, or $OPENBLAS_NUM_THREADS): their last bits depend on that "
                    "count. Idle threads sleep at once ($OMP_WAIT_POLICY=passive unless set), so that "
                    "attn does not take cores from other programs between stages. Under an address-space limit (ulimit -v) "
                    "N is refused above the threads whose stacks fit in half of it (ulimit -s each, or "
                    "$OMP_STACKSIZE), and every core is cut to that many")
        ->default_str("$ATTN_THREADS, else every core")
        ->transform(whole_number(1, attn::max_threads))
        ->type_name("N");
    cmd->add_option("--block-rows", o->block_rows,
                    "compute the [B,H,Sq,Sk] stages in blocks of N query rows (json, jsonl, npz; for tests)")
        ->transform(whole_number(1, std::numeric_limits<std::int64_t>::max()))
        ->group("");  // hidden: --max-memory chooses blocks itself
    cmd->add_option("--batch-index", o->views.batch_index,
                    "show only batch item I of every tensor with a batch axis (0 is the first; alibi's bias, the "
                    "same for every item, shows its one); json, jsonl and npz keep the axis with size 1, as t[1:2] "
                    "does, and torch prints t[1:2]")
        ->transform(whole_number())
        ->type_name("I");
    cmd->add_option("--head", o->views.head,
                    "show only head H of every tensor with a head axis (the mask, the same for every head, stays "
                    "whole); kept with size 1 like --batch-index")
        ->transform(whole_number())
        ->type_name("H");
    cmd->add_option("--row", o->views.row,
                    "one query: the table draws query Q's softmax weights over the keys as bars, its top keys "
                    "named (--stage scores, scaled, masked or dropout for those); json, jsonl, npz and torch keep "
                    "query Q of every tensor with a query axis (query, or seq on the query side)")
        ->transform(whole_number())
        ->type_name("Q");
    add_picture_flags(cmd, o->pictures);
    cmd->add_flag("--quiet", o->quiet,
                  "no progress line and no estimate: runs longer than a second show one on stderr (stage, share of "
                  "the work done, time left) when stderr is a terminal and CI is not set, and runs of 10 s or "
                  "more say so before they start");

    cmd->callback([o, cmd] { run_trace(*o, flags_given_to(cmd)); });
}

void check_threads_fit(int threads, const std::string& how) {
    const int fit = attn::threads_that_fit();
    if (threads <= fit) return;
    rlimit address_space{};
    getrlimit(RLIMIT_AS, &address_space);
    throw attn::usage_error(how + std::to_string(threads) + ": ulimit -v " +
                            attn::format_bytes(static_cast<std::uint64_t>(address_space.rlim_cur)) + " holds at most " +
                            std::to_string(fit) + " thread" + (fit == 1 ? "" : "s") + " (each a stack of " +
                            attn::format_bytes(attn::thread_stack_bytes()) + ", " +
                            (std::getenv("OMP_STACKSIZE") ? "OMP_STACKSIZE" : "ulimit -s") +
                            ", and a 64 MiB malloc arena, in half of what attn leaves free); give " + how +
                            std::to_string(fit) + " or fewer");
}

}  // namespace attn_app
