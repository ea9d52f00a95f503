// `attn trace`: the flags of CLI.md's "attn trace" section, turned into a
// config and render options; then one pass of the library.
#include "trace_command.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <unistd.h>

#include "attn/io/atomic_file.hpp"
#include "attn/compute/attention.hpp"
#include "attn/compute/config.hpp"
#include "attn/compute/error.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/compute/inputs.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/memory.hpp"
#include "attn/render/render_json.hpp"
#include "attn/render/render_npz.hpp"
#include "attn/render/render_table.hpp"
#include "attn/render/render_torch.hpp"
#include "attn/io/replay.hpp"
#include "help_format.hpp"
#include "messages.hpp"

namespace attn_app {
namespace {

/// Everything the flags say, before defaults that depend on other flags are applied.
struct trace_options {
    attn::config cfg;
    attn::size_flags sizes;
    attn::input_paths files;
    std::string from;  // --from DUMP: replay it
    bool no_qkv_bias = false, no_out_proj = false;
    std::string mask = "none";
    std::vector<std::int64_t> lengths;
    std::optional<std::int64_t> window;
    std::string fill = "-inf";
    std::string mask_convention;  // empty: each file's own PyTorch convention
    bool cross = false;
    std::string seed = "0";

    std::string format = "table";
    std::string stages;
    std::string out;
    int precision = 4;
    std::string sci_mode = "auto";
    bool full = false;
    std::string color = "auto";
    std::uint64_t max_memory = 0;  // 0: most of the machine's memory
};

/// torch.manual_seed takes any Python int; a negative one wraps mod 2^64.
std::uint64_t parse_seed(const std::string& text) {
    try {
        std::size_t used = 0;
        const bool negative = !text.empty() && text[0] == '-';
        const std::uint64_t value =
            negative ? static_cast<std::uint64_t>(std::stoll(text, &used)) : std::stoull(text, &used);
        if (used == text.size() && !text.empty() && text[0] != '+' && text[0] != ' ') return value;
    } catch (const std::exception&) {
    }
    throw attn::usage_error("--seed " + text + ": expected a whole number (negative ones wrap as in torch.manual_seed)");
}

float parse_fill(const std::string& text) {
    if (text == "-inf") return -std::numeric_limits<float>::infinity();
    try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::abs(value) <= std::numeric_limits<float>::max())
            return static_cast<float>(value);
    } catch (const std::exception&) {
    }
    throw attn::usage_error("--fill " + text + ": expected -inf or a finite number such as -1e9");
}

/// Why this run has no stage called `name` (stage_in_run says so), for --stage's messages.
std::string absent_because(std::string_view name) {
    if (name == "output") return "it is off with --no-out-proj";
    if (name == "dropout") return "it needs --dropout P with P > 0 and --train";
    if (name == "input" || name == "params") return "the run starts at the projections, with --q --k --v";
    return "it needs --mask, --mask-file or --key-padding-mask";
}

/// "softmax (10)": a stage as --stage's messages name it.
std::string name_and_step(const attn::stage_info& info) {
    return std::string(info.name) + " (" + std::to_string(info.step) + ")";
}

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

/// The stage numbered `text` (as --stage was given it in `entry`), or an error.
const attn::stage_info& stage_numbered(std::string_view text, const std::string& entry) {
    const attn::stage_info* info = attn::find_stage_info(small_number(text));
    if (info == nullptr)
        throw attn::usage_error("--stage " + entry + ": there is no stage " + std::string(text) +
                                " (the stages are numbered 1 to " + std::to_string(attn::stage_table.size()) + ")");
    return *info;
}

/// A name that is no stage's: the tensor of that name, and the stage to ask for instead.
[[noreturn]] void no_stage_called(const std::string& name, const attn::config& c) {
    const std::vector<const attn::stage_info*> holders = attn::stages_holding(name);
    if (holders.empty())
        throw attn::usage_error("--stage " + name + ": no stage is called " + name + " (the stages: " +
                                attn::stage_names_list() + "; or their numbers, 1 to " +
                                std::to_string(attn::stage_table.size()) + ")");
    std::string where;
    const attn::stage_info* in_run = nullptr;
    for (std::size_t i = 0; i < holders.size(); ++i) {
        where += (i == 0 ? "" : i + 1 == holders.size() ? " and " : ", ") + name_and_step(*holders[i]);
        if (in_run == nullptr && attn::stage_in_run(c, holders[i]->name)) in_run = holders[i];
    }
    const std::string opening = "--stage " + name + ": no stage is called " + name + "; the tensor " + name +
                                " is in stage " + where;
    if (in_run != nullptr) throw attn::usage_error(opening + ": --stage " + std::string(in_run->name));
    throw attn::usage_error(opening + ", which this run does not have (" + absent_because(holders[0]->name) + ")");
}

/// --stage a,b,c: stage names, numbers (10 = softmax) or ranges of numbers (6-10),
/// in any order; each named or numbered stage must be in this run, and a range
/// takes the stages of this run within it. Returns the stage names.
std::vector<std::string> parse_stages(const std::string& text, const attn::config& c) {
    std::vector<std::string> names;
    if (text.empty()) return names;
    for (std::string entry : CLI::detail::split(text, ',')) {
        entry = CLI::detail::trim_copy(entry);
        if (entry.empty())
            throw attn::usage_error("--stage " + text + ": an empty entry (give names or numbers joined by commas, "
                                    "as in --stage 6,softmax)");
        const std::size_t dash = entry.find('-');
        if (dash != std::string::npos && dash > 0 && small_number(entry.substr(0, dash)) >= 0) {  // a range a-b
            if (small_number(entry.substr(dash + 1)) < 0)
                throw attn::usage_error("--stage " + entry + ": expected a range of stage numbers such as 6-10");
            const attn::stage_info& first = stage_numbered(entry.substr(0, dash), entry);
            const attn::stage_info& last = stage_numbered(entry.substr(dash + 1), entry);
            if (first.step > last.step)
                throw attn::usage_error("--stage " + entry + ": a range goes up, as in " + std::to_string(last.step) +
                                        "-" + std::to_string(first.step));
            const std::size_t before = names.size();
            for (int step = first.step; step <= last.step; ++step)
                if (attn::stage_in_run(c, attn::find_stage_info(step)->name))
                    names.emplace_back(attn::find_stage_info(step)->name);
            if (names.size() == before)
                throw attn::usage_error("--stage " + entry + ": this run has none of these stages (" +
                                        std::string(first.name) + ": " + absent_because(first.name) + ")");
            continue;
        }
        const attn::stage_info* info =
            small_number(entry) >= 0 ? &stage_numbered(entry, entry) : attn::find_stage_info(entry);
        if (info == nullptr) no_stage_called(entry, c);
        if (!attn::stage_in_run(c, info->name))
            throw attn::usage_error("--stage " + entry + ": this run has no " + std::string(info->name) + " stage (" +
                                    absent_because(info->name) + ")");
        names.emplace_back(info->name);
    }
    return names;
}

/// --mask-convention: how the mask files given on the command line read.
void apply_mask_convention(const trace_options& o, attn::config& c) {
    if (o.mask_convention.empty()) return;
    if (o.files.mask.empty() && o.files.key_padding_mask.empty())
        throw attn::usage_error("--mask-convention " + o.mask_convention +
                                " says how to read a mask file: give --mask-file or --key-padding-mask");
    c.mask.file_convention = c.mask.key_padding_convention = *attn::parse_mask_convention(o.mask_convention);
}

/// The flags as a config (sizes still open) for attn::load_inputs to complete.
attn::config base_config(const trace_options& o) {
    attn::config c = o.cfg;
    c.qkv_bias = !o.no_qkv_bias;
    c.out_proj = !o.no_out_proj;
    attn::parse_mask_kinds(o.mask, c.mask);
    c.mask.lengths = o.lengths;
    c.mask.window_size = o.window;
    c.fill = parse_fill(o.fill);
    c.fill_text = o.fill;  // as typed ("-1e9"), for the formula, the table and warnings
    c.seed = parse_seed(o.seed);
    c.separate_kv = o.cross;
    apply_mask_convention(o, c);
    return c;
}

/// Whether a flag ("--seq") was given on the command line (not a default).
using flag_given = std::function<bool(const char*)>;

/// A replay's config: the dump's, with each flag that was given on top. A size
/// flag and a file flag are left to attn::load_replay, which checks them against
/// the dump's tensors.
attn::config replay_config(const trace_options& o, attn::config c, const flag_given& given) {
    if (given("--heads")) c.heads = o.cfg.heads;
    if (given("--seed")) c.seed = parse_seed(o.seed);
    if (given("--no-qkv-bias")) c.qkv_bias = false;
    if (given("--no-out-proj")) c.out_proj = false;
    if (given("--mask")) {
        attn::parse_mask_kinds(o.mask, c.mask);
        if (!c.mask.padding) c.mask.lengths.clear();  // the dump's, for a kind no longer asked for
        if (!c.mask.window) c.mask.window_size.reset();
    }
    if (given("--lengths")) c.mask.lengths = o.lengths;
    if (given("--window")) c.mask.window_size = o.window;
    if (given("--mask-seed")) c.mask.random_seed = o.cfg.mask.random_seed;
    if (given("--mask-keep")) c.mask.random_keep = o.cfg.mask.random_keep;
    if (given("--mask-file")) c.mask.file_convention = attn::mask_convention::keep;
    if (given("--key-padding-mask")) c.mask.key_padding_convention = attn::mask_convention::mha;
    apply_mask_convention(o, c);
    if (given("--cross")) c.separate_kv = true;
    if (given("--fill")) {
        c.fill = parse_fill(o.fill);
        c.fill_text = o.fill;
    }
    if (given("--dropout")) c.dropout.p = o.cfg.dropout.p;
    if (given("--train")) c.dropout.train = true;
    if (given("--dropout-seed")) c.dropout.seed = o.cfg.dropout.seed;
    return c;
}

/// --from DUMP: the dump's config and tensors, the flags given on top.
attn::loaded_inputs replay_inputs(const trace_options& o, const flag_given& given) {
    attn::dump d = attn::read_dump(o.from);
    const attn::config c = replay_config(o, d.cfg, given);
    return attn::load_replay(std::move(d), c, o.sizes, o.files);
}

bool use_color(const trace_options& o) {
    if (o.color != "auto") return o.color == "always";
    const char* no_color = std::getenv("NO_COLOR");
    const char* term = std::getenv("TERM");
    return o.out.empty() && isatty(STDOUT_FILENO) && (no_color == nullptr || *no_color == '\0') &&
           !(term != nullptr && std::string(term) == "dumb");
}

/// Most of the physical memory: what a run may use unless --max-memory says otherwise.
std::uint64_t default_memory_limit() {
    const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
    if (pages <= 0 || page_size <= 0) return std::uint64_t(8) << 30;
    return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size) / 10 * 8;
}

attn::sci_mode parse_sci_mode(const std::string& text) {
    return text == "on" ? attn::sci_mode::on : text == "off" ? attn::sci_mode::off : attn::sci_mode::automatic;
}

/// Renders the trace in `format` to `out`; jsonl streams each stage as it is computed.
attn::warning_list emit(const std::string& format, const attn::config& c, const attn::inputs& in,
                              const attn::render_options& view, std::ostream& out) {
    if (format == "jsonl") {
        const auto stream_stage = [&](const attn::trace& t, const attn::stage& s) {
            if (!view.shows(s.name())) return;
            attn::render_json_line(t, s, out);
            out.flush();  // a reader sees each stage as soon as it is computed
        };
        return attn::compute_trace(c, in, stream_stage).warnings;
    }
    const attn::trace t = attn::compute_trace(c, in);
    if (format == "json")
        attn::render_json(t, view, out);
    else if (format == "torch")
        attn::render_torch(t, view, out);
    else
        attn::render_table(t, view, out);
    return t.warnings;
}

void warn(const attn::warning_list& warnings) {
    for (const auto& w : warnings) std::cerr << "attn: warning: " << w.text << "\n";
}

void run_trace(const trace_options& o, const flag_given& given) {
    if (o.format == "npz" && o.out.empty() && isatty(STDOUT_FILENO))
        throw attn::usage_error("--format npz writes a zip archive: give --out FILE.npz (or redirect stdout to a file)");
    attn::loaded_inputs loaded =
        o.from.empty() ? attn::load_inputs(base_config(o), o.sizes, o.files) : replay_inputs(o, given);
    const attn::config& c = loaded.cfg;
    attn::render_options view;
    view.stages = parse_stages(o.stages, c);
    view.precision = o.precision;
    view.notation = parse_sci_mode(o.sci_mode);
    view.full = o.full;
    view.color = use_color(o);
    attn::check_memory(c, o.max_memory != 0 ? o.max_memory : default_memory_limit());

    attn::inputs in = attn::draw_inputs(c, std::move(loaded.given));
    in.warnings = std::move(loaded.warnings);  // the trace repeats them next to their stage
    if (o.format == "npz") {
        const attn::trace t = attn::compute_trace(c, in);
        if (o.out.empty()) {
            attn::render_npz(t, view, std::cout);
            if (!std::cout.flush()) throw attn::error("cannot write to standard output (disk full or closed?)");
        } else {
            attn::render_npz(t, view, o.out, "--out " + o.out);
        }
        warn(t.warnings);
        return;
    }
    attn::warning_list warnings;
    if (o.out.empty()) {
        warnings = emit(o.format, c, in, view, std::cout);
        if (!std::cout.flush()) throw attn::error("cannot write to standard output (disk full or closed?)");
    } else {
        attn::write_file_atomically(o.out, "--out " + o.out,
                                    [&](std::ostream& out) { warnings = emit(o.format, c, in, view, out); });
    }
    warn(warnings);
}

/// The stages by number and name, from stage_table, for trace's --help: three rows,
/// numbered down the columns.
std::string stages_help() {
    std::string text = "Stages, in order (--stage takes the name or the number):\n";
    const std::size_t rows = 3, n = attn::stage_table.size();
    for (std::size_t row = 0; row < rows; ++row) {
        std::string line = " ";
        for (std::size_t i = row; i < n; i += rows) {
            const attn::stage_info& info = attn::stage_table[i];
            std::string cell = (info.step < 10 ? "  " : " ") + std::to_string(info.step) + " " + std::string(info.name);
            line += cell + std::string(i + rows < n ? 17 - cell.size() : 0, ' ');
        }
        text += line + "\n";
    }
    return text + wrap("Not every run has them all: input and params not with --q --k --v, mask and masked "
                       "only with a mask, dropout only with --train, output not with --no-out-proj.",
                       help_width);
}

}  // namespace

void setup_trace(CLI::App& app) {
    auto o = std::make_shared<trace_options>();
    CLI::App* cmd = app.add_subcommand(
        "trace",
        "Compute multi-head attention and show every intermediate stage.");
    cmd->footer(
        wrap("Inputs are drawn as PyTorch would: torch.manual_seed(N); nn.Linear(Din,D) for q, "
             "nn.Linear(Dkv,D) for k and v, nn.Linear(D,D) for the output; x = torch.randn(B,Sq,Din); "
             "x_kv = torch.randn(B,Sk,Dkv) for cross-attention only. Same seed, same numbers. "
             "A tensor read from a file draws nothing; the rest keep this order. With --q --k --v "
             "only the output layer is drawn (right after the seed), unless --params gives w_o b_o.",
             help_width) +
        "\n\n" + stages_help() +
        "\n\n"
        "Examples:\n"
        "  attn trace --heads 4 --mask causal\n"
        "  attn trace --seed 24 --batch 2 --seq 5 --heads 4 --mask causal --no-out-proj --stage 9,10\n"
        "  attn trace --batch 2 --mask causal+padding --lengths 4,2 --fill -1e9\n"
        "  attn trace --kv-seq 6 --d-kv-in 12 --format json | jq '.stages.softmax.tensors.weights.data[0][0]'\n"
        "  attn trace --q q.json --k k.json --v v.json --mask-file m.json --fill -1e9 --format torch\n"
        "  attn trace --input x.npy --params p.npz --format npz --out trace.npz\n"
        "  attn trace --from trace.npz --stage softmax --mask causal\n\n"
        "Exit status: 0 ok, 2 bad flags, 1 anything else (a message on stderr says which).");

    attn::config& c = o->cfg;
    attn::size_flags& sz = o->sizes;
    const std::string shapes = "Shapes (a size not given comes from the input files, else the default)";
    cmd->add_option("--batch", sz.batch, "B, sequences in the batch")
        ->default_str("1")
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_option("--seq", sz.seq, "Sq, query (and by default key) length")
        ->default_str("4")
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_option("--kv-seq", sz.kv_seq, "Sk, key/value length; differing from Sq = cross-attention")
        ->default_str("--seq")
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_option("--d-model", sz.d_model, "D, model width: q, k, v and output width")
        ->default_str("8, or Din when a file gives Din")
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_option("--heads", c.heads, "H, attention heads; dk = D / H must be whole")
        ->default_val(2)
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_option("--d-in", sz.d_in, "Din, query-side input width")
        ->default_str("--d-model")
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_option("--d-kv-in", sz.d_kv_in, "Dkv, key/value-side input width")
        ->default_str("--d-in")
        ->transform(whole_number())
        ->type_name("N")
        ->group(shapes);
    cmd->add_flag("--cross", o->cross,
                  "cross-attention even when the sizes match: keys and values from their own "
                  "x_kv = torch.randn(B,Sk,Dkv), drawn after x (a decoder attending an encoder)")
        ->group(shapes);

    const std::string files = "Tensors from files (.json nested arrays as tensor.tolist(), .npy, or .npz)";
    attn::input_paths& f = o->files;
    cmd->add_option("--input", f.input,
                    "x [B,Sq,Din] instead of torch.randn. From an .npz: the array our dumps "
                    "name after the flag (input.x, input.x_kv, projections.q, mask.mask, ...) "
                    "or the archive's only array")
        ->type_name("FILE")
        ->group(files);
    cmd->add_option("--kv-input", f.kv_input, "x_kv [B,Sk,Dkv]: keys and values from it (cross-attention)")
        ->type_name("FILE")
        ->group(files);
    cmd->add_option("--params", f.params,
                    ".json object or .npz with w_q b_q w_k b_k w_v b_v w_o b_o in nn.Linear "
                    "layout [out,in] (keys may be prefixed params., as in our npz dumps)")
        ->type_name("FILE")
        ->group(files);
    cmd->add_option("--q", f.q, "Q [B,Sq,D]; with --k and --v the run starts at the projections")
        ->type_name("FILE")
        ->group(files);
    cmd->add_option("--k", f.k, "K [B,Sk,D]")->type_name("FILE")->group(files);
    cmd->add_option("--v", f.v, "V [B,Sk,D]")->type_name("FILE")->group(files);
    cmd->add_option("--from", o->from,
                    "replay a dump of attn trace (--format npz or json): its config, and its "
                    "input, params, projections (when the run started there) and mask (when "
                    "it came from a file); what it lacks is drawn as the run drew it. Flags "
                    "given too override it; one that contradicts its tensors is an error")
        ->type_name("DUMP")
        ->group(files);

    const std::string params = "Parameters";
    cmd->add_option("--seed", o->seed, "torch.manual_seed(N) for the weights and x; a negative N wraps, as in PyTorch")
        ->type_name("N")
        ->default_val("0")
        ->transform(seed_number())
        ->group(params);
    cmd->add_flag("--no-qkv-bias", o->no_qkv_bias, "nn.Linear(..., bias=False) for q, k and v")->group(params);
    cmd->add_flag("--no-out-proj", o->no_out_proj, "no output projection: the result is the concat stage")
        ->group(params);

    const std::string masks = "Masks";
    cmd->add_option("--mask", o->mask,
                    "none, or kinds joined by '+': causal (j <= i), padding (needs --lengths), "
                    "window (needs --window), random (--mask-seed, --mask-keep)")
        ->type_name("KINDS")
        ->default_val("none")
        ->group(masks);
    cmd->add_option("--lengths", o->lengths, "padding: the valid key length of each batch item, e.g. 5,3")
        ->delimiter(',')
        ->transform(whole_number().name("whole numbers joined by commas, such as 5,3"))
        ->type_name("N,N,...")
        ->group(masks);
    cmd->add_option("--window", o->window, "window: query i may attend keys j with |i - j| <= W")
        ->transform(whole_number())
        ->type_name("W")
        ->group(masks);
    cmd->add_option("--mask-seed", c.mask.random_seed, "random: torch.manual_seed(N); torch.rand(B,1,Sq,Sk) < P")
        ->default_val(0)
        ->transform(seed_number())
        ->type_name("N")
        ->group(masks);
    cmd->add_option("--mask-keep", c.mask.random_keep, "random: P, the chance that a key may be attended")
        ->default_val(0.5)
        ->transform(number())
        ->type_name("P")
        ->group(masks);
    cmd->add_option("--fill", o->fill,
                    "value where the mask is false: -inf, which gives a row with no allowed key "
                    "NaN weights as in PyTorch, or a number such as -1e9, which gives it uniform weights")
        ->type_name("V")
        ->default_val("-inf")
        ->group(masks);
    cmd->add_option("--mask-file", f.mask,
                    "an explicit mask [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk] (.json, .npy or .npz), "
                    "true/1 = may attend unless --mask-convention says otherwise; combined with --mask by AND")
        ->type_name("FILE")
        ->group(masks);
    cmd->add_option("--key-padding-mask", f.key_padding_mask,
                    "[B,Sk], true/1 = padded key, as nn.MultiheadAttention's key_padding_mask (with "
                    "--mask-convention keep: 1 = real token, as a padding mask of 1s and 0s)")
        ->type_name("FILE")
        ->group(masks);
    cmd->add_option("--mask-convention", o->mask_convention,
                    "how the mask files read: keep (true = may attend, as F.scaled_dot_product_attention), "
                    "mha (true = NOT allowed, as nn.MultiheadAttention's attn_mask and key_padding_mask, "
                    "torch.triu(..., 1).bool()) or additive (0 = may attend, -inf or <= -1e4 = may not)")
        ->transform(one_of({"keep", "mha", "additive"}))
        ->default_str("keep for --mask-file, mha for --key-padding-mask")
        ->type_name("HOW")
        ->group(masks);

    const std::string dropout = "Dropout";
    cmd->add_option("--dropout", c.dropout.p,
                    "P, nn.Dropout(p) on the weights; it acts only with --train, as eval mode is the identity")
        ->default_val(0.0)
        ->transform(number())
        ->type_name("P")
        ->group(dropout);
    cmd->add_flag("--train", c.dropout.train, "training mode: adds stage 11, dropout.weights = weights·keep/(1-P)")
        ->group(dropout);
    cmd->add_option("--dropout-seed", c.dropout.seed,
                    "torch.manual_seed(N); keep = torch.rand(B,H,Sq,Sk) < 1-P. PyTorch's own "
                    "dropout draws with bernoulli_, whose numbers depend on how PyTorch was "
                    "built, so these are reproducible but not PyTorch's nn.Dropout numbers")
        ->default_val(0)
        ->transform(seed_number())
        ->type_name("N")
        ->group(dropout);

    const std::string output = "Output";
    cmd->add_option("--format", o->format,
                    "table (for reading), json (one document), jsonl (one stage per line, as "
                    "computed), npz (NumPy arrays named stage.tensor, plus config; needs --out "
                    "or a redirected stdout), torch (each tensor exactly as PyTorch's print(t), "
                    "under '# stage.tensor')")
        ->transform(one_of({"table", "json", "jsonl", "npz", "torch"}))
        ->type_name("FORMAT")
        ->default_val("table")
        ->group(output);
    cmd->add_option("--stage", o->stages,
                    "only these stages, by name or number (see below), comma-separated: "
                    "masked,softmax or 9,10 or 9-10")
        ->default_str("all")
        ->type_name("STAGES")
        ->group(output);
    cmd->add_option("--out", o->out, "write to FILE instead of stdout (whole or not at all)")
        ->type_name("FILE")
        ->group(output);
    cmd->add_option("--precision", o->precision, "digits after the decimal point (table, torch)")
        ->default_val(4)
        ->transform(whole_number(0, 12))
        ->type_name("N")
        ->group(output);
    cmd->add_option("--sci-mode", o->sci_mode,
                    "scientific notation: auto, on or off, as torch.set_printoptions(sci_mode=None, True or False)")
        ->transform(one_of({"auto", "on", "off"}))
        ->type_name("WHEN")
        ->default_val("auto")
        ->group(output);
    cmd->add_flag("--full", o->full, "print every element; by default tensors over 1000 elements "
                                     "show their first and last 3 along each axis, as PyTorch does")
        ->group(output);
    cmd->add_option("--color", o->color, "auto (only on a terminal, never with NO_COLOR), always, never")
        ->transform(one_of({"auto", "always", "never"}))
        ->type_name("WHEN")
        ->default_val("auto")
        ->group(output);
    cmd->add_option("--max-memory", o->max_memory,
                    "refuse sizes whose stages need more than SIZE, e.g. 4GiB; the message names the "
                    "largest stages")
        ->default_str("80% of RAM")
        ->transform(byte_size())
        ->type_name("SIZE")
        ->group(output);

    cmd->callback([o, cmd] { run_trace(*o, [cmd](const char* flag) { return cmd->count(flag) > 0; }); });
}

}  // namespace attn_app
