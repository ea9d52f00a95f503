// The run flags (run_flags.hpp): CLI11 wiring, and the config they make.
#include "run_flags.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include <sys/resource.h>
#include <unistd.h>

#include "attn/compute/error.hpp"
#include "attn/compute/mask.hpp"
#include "attn/compute/memory.hpp"
#include "attn/io/byte_level_bpe.hpp"
#include "attn/io/config_fields.hpp"
#include "attn/io/replay.hpp"
#include "attn/io/token_input.hpp"
#include "help_format.hpp"
#include "messages.hpp"

namespace attn_app {
namespace {

float parse_fill(const std::string& text) {
    if (text == "-inf") return -std::numeric_limits<float>::infinity();
    try {
        std::size_t used = 0;
        const double value = std::stod(text, &used);
        if (used == text.size() && std::abs(value) <= std::numeric_limits<float>::max()) {
            const std::string underflow = attn::fill_underflow(value);
            if (!underflow.empty()) throw attn::usage_error("--fill " + text + ": " + underflow);
            return static_cast<float>(value);
        }
    } catch (const std::invalid_argument&) {
    } catch (const std::out_of_range&) {  // beyond double's range, or below it (1e-400)
    }
    throw attn::usage_error("--fill " + text + ": expected -inf or a finite number such as -1e9");
}

/// --fill as typed when the table and a PyTorch line can show it so ("-1e9"); otherwise
/// (0x1p3, " 8") empty, and they show its value (8).
std::string fill_as_typed(const std::string& text) { return attn::is_decimal_number(text) ? text : ""; }

/// --mask-convention: how the mask files given on the command line read.
void apply_mask_convention(const run_options& o, attn::config& c) {
    if (o.mask_convention.empty()) return;
    if (o.files.mask.empty() && o.files.key_padding_mask.empty())
        throw attn::usage_error("--mask-convention " + o.mask_convention +
                                " says how to read a mask file: give --mask-file or --key-padding-mask");
    c.mask.file_convention = c.mask.key_padding_convention = *attn::parse_mask_convention(o.mask_convention);
}

/// The flags as a config (sizes still open) for attn::load_inputs to complete.
attn::config base_config(const run_options& o) {
    attn::config c = o.cfg;
    c.qkv_bias = !o.no_qkv_bias;
    c.out_proj = !o.no_out_proj;
    attn::parse_mask_kinds(o.mask, c.mask);
    c.mask.lengths = o.lengths;
    c.mask.window_size = o.window;
    c.fill = parse_fill(o.fill);
    c.fill_text = fill_as_typed(o.fill);  // as typed ("-1e9"), for the formula, the table and warnings
    c.separate_kv = o.cross;
    c.mask.causal_align = *attn::parse_causal_alignment(o.causal_align);
    c.safe_softmax = o.safe_softmax;
    c.past = o.past;
    c.kv_heads = o.kv_heads;
    c.mistake = *attn::parse_mistake(o.mistake);
    c.pos = *attn::parse_position_encoding(o.pos);
    c.rope_style = *attn::parse_rope_pairing(o.rope_style);
    apply_mask_convention(o, c);
    return c;
}

/// --rope-base and --rope-style say how rope rotates: without --pos rope they would do nothing.
void check_rope_flags(const attn::config& c, const flag_given& given) {
    if (c.pos == attn::position_encoding::rope) return;
    for (const char* flag : {"--rope-base", "--rope-style"})
        if (given(flag))
            throw attn::usage_error(std::string(flag) + " says how --pos rope rotates q and k, but --pos is " +
                                    std::string(attn::position_encoding_name(c.pos)) + "; add --pos rope");
}

/// What the flags say that a model's --params file (its config.json, its architecture) also decides.
attn::model_choice model_choice(const run_options& o, const flag_given& given) {
    attn::model_choice m;
    if (o.arch != "auto") m.arch = attn::parse_model_arch(o.arch);
    if (given("--layer")) m.layer = o.layer;
    if (given("--heads")) m.heads = o.cfg.heads;
    if (given("--kv-heads")) m.kv_heads = o.kv_heads;
    if (given("--pos")) m.pos = attn::parse_position_encoding(o.pos);
    if (given("--rope-base")) m.rope_base = o.cfg.rope_base;
    if (given("--rope-style")) m.rope_style = attn::parse_rope_pairing(o.rope_style);
    m.mask_given = given("--mask") || !o.files.mask.empty() || !o.files.key_padding_mask.empty();
    m.fill_given = given("--fill");
    return m;
}

/// A replay's config: the dump's, with each flag that was given on top (config_fields.hpp:
/// each key's flag and how it replaces the dump's setting). A size flag and a file flag are
/// left to attn::load_replay, which checks them against the dump's tensors.
attn::config replay_config(const run_options& o, attn::config c, const flag_given& given) {
    const attn::config flags = base_config(o);
    for (const attn::config_field& field : attn::config_fields())
        if (field.take != nullptr && given(field.flag)) field.take(flags, c);
    // a decoding step's causal mask ends at the last key, unless --causal-align says otherwise
    if (given("--past") && c.past > 0 && !given("--causal-align")) c.mask.causal_align = attn::causal_alignment::lower_right;
    c.limits = o.cfg.limits;  // this run's limit, never the dump's
    return c;
}

/// --from DUMP: the dump's config and tensors, the flags given on top.
attn::loaded_inputs replay_inputs(const run_options& o, const flag_given& given) {
    attn::read_budget budget = read_budget_of(o.cfg.limits.max_memory);
    attn::dump d = attn::read_dump(o.from, &budget);
    const attn::config c = replay_config(o, d.cfg, given);
    return attn::load_replay(std::move(d), c, o.sizes, o.files);
}

/// `--NAME N`, a whole number: a size, or --window.
template <class T>
CLI::Option* add_size(CLI::App* cmd, const std::string& name, T& into, const std::string& help) {
    return cmd->add_option(name, into, help)->transform(whole_number())->type_name("N");
}

/// `--NAME N`, a seed for torch.manual_seed (0 by default).
CLI::Option* add_seed(CLI::App* cmd, const std::string& name, std::uint64_t& into, const std::string& help) {
    return cmd->add_option(name, into, help)->transform(seed_number())->type_name("N")->default_val(0);
}

/// `--NAME P`, a probability.
CLI::Option* add_probability(CLI::App* cmd, const std::string& name, double& into, const std::string& help) {
    return cmd->add_option(name, into, help)->transform(number())->type_name("P");
}

void add_file_flags(CLI::App* cmd, run_options& o) {
    attn::input_paths& f = o.files;
    cmd->option_defaults()->group("Tensors from files (.json nested arrays as tensor.tolist(), .npy, .npz, .safetensors)");
    cmd->add_option("--input", f.input,
                    "x [B,Sq,Din] instead of torch.randn. From an .npz: the array our dumps "
                    "name after the flag (input.x, input.x_kv, projections.q, mask.mask, ...) "
                    "or the archive's only array")
        ->transform(path_name())->type_name("FILE");
    cmd->add_option("--kv-input", f.kv_input, "x_kv [B,Sk,Dkv]: keys and values from it (cross-attention)")
        ->transform(path_name())->type_name("FILE");
    cmd->add_option("--params", f.params,
                    ".json object, .npz or .safetensors (F32, F16, BF16 or F64; a sharded checkpoint by its "
                    "model.safetensors.index.json) with w_q b_q w_k b_k w_v b_v w_o b_o in nn.Linear "
                    "layout [out,in] (keys may be prefixed params., as in our npz dumps), or a real model's "
                    "checkpoint in its own names: GPT-2 (h.L.attn.c_attn, a Conv1D [in,out] whose thirds, "
                    "transposed, are w_q w_k w_v), BERT (encoder.layer.L.attention.self.query ...), Llama "
                    "(layers.L.self_attn.q_proj ...) or nn.MultiheadAttention's state_dict (in_proj_weight "
                    "[3D,D], its rows in thirds); only one layer's tensors are decoded. A Hugging Face "
                    "config.json beside it gives --heads, --kv-heads, the norm's eps, rope_theta and sliding_window "
                    "(a flag that says otherwise is an error; a key attn does not reproduce, such as rope_scaling, "
                    "is refused naming it); without one, give --heads. GPT-2 and Llama "
                    "layers add stage norm (ln_1 or RMSNorm before the projections; --input is then the "
                    "residual stream, Hugging Face's hidden_states[L]) and are causal with the fill "
                    "torch.finfo(float32).min, as their code is, unless --mask or --fill says otherwise. "
                    "Example: attn trace --params gpt2/model.safetensors --layer 1 --input hidden.npy --stage softmax")
        ->transform(path_name())->type_name("FILE");
    add_choice(cmd, "--arch", o.arch, {"auto", "gpt2", "bert", "llama", "mha", "attn"}, "NAME",
               "whose names --params holds: auto (default) tells them by their names; gpt2, bert, llama, mha "
               "(nn.MultiheadAttention) or attn (w_q ...) insists, and a file without that architecture's "
               "names is an error saying what it looks like");
    add_size(cmd, "--layer", o.layer,
             "L, which layer of a model's --params file to read, 0 unless given; a file without layers "
             "(nn.MultiheadAttention, attn's own names) refuses it, and a layer the file lacks is an error "
             "naming the layers it has");
    cmd->add_option("--tokens", o.tokens,
                    "layer 0 of a GPT-2, BERT or Llama --params checkpoint from these token ids, comma-separated "
                    "(464,2068,7586), or @FILE holding them (B = 1, Sq = their count): stage embed looks up "
                    "their rows of the token table (and GPT-2's wpe, BERT's position and token_type rows), "
                    "input.x is the sum, and the norm stage follows as the model computes it (ln_1, "
                    "input_layernorm, BERT's embeddings.LayerNorm). Not with --input or a --layer above 0 "
                    "(attn computes one layer, not the ones before it: give their output with --input)")
        ->type_name("IDS");
    cmd->add_option("--text", o.text,
                    "layer 0 of a GPT-2 --params checkpoint from this text (or @FILE, UTF-8), tokenized by the "
                    "checkpoint's own tokenizer beside it (vocab.json and merges.txt: byte-level BPE, as openai/gpt-2's "
                    "encoder and Hugging Face's GPT2Tokenizer), then as --tokens with those ids, the tokens on the axes "
                    "(--vocab is vocab.json). `attn tokens` shows the ids and pieces alone. "
                    "Example: attn trace --params gpt2/model.safetensors --text \"The robot reads\" --stage softmax")
        ->type_name("TEXT");
    cmd->add_option("--vocab", f.vocab,
                    "the tokenizer's vocab.json ({\"token\": id} as Hugging Face saves it, or {\"id\": \"token\"}): "
                    "with --tokens, tables, --explain and pictures label queries and keys with the tokens, "
                    "shown as the tokenizer writes them (GPT-2's Ġ and SentencePiece's ▁ mark a word start), "
                    "and json adds config.token_text")
        ->transform(path_name())->type_name("FILE");
    cmd->add_option("--q", f.q, "Q [B,Sq,D]; with --k and --v the run starts at the projections")->transform(path_name())->type_name("FILE");
    cmd->add_option("--k", f.k, "K [B,Sk,D]")->transform(path_name())->type_name("FILE");
    cmd->add_option("--v", f.v, "V [B,Sk,D]")->transform(path_name())->type_name("FILE");
    cmd->add_option("--from", o.from,
                    "replay a dump of attn trace (--format npz or json): its config, and its "
                    "input, params, projections (when the run started there) and mask (when "
                    "it came from a file); what it lacks is drawn as the run drew it. Flags "
                    "given too override it; one that contradicts its tensors is an error. A dump "
                    "whose config contradicts its own tensors (its sizes, or a tensor it says was "
                    "drawn that is not the seed's draw: set \"input_file\": true for an edited x) "
                    "is refused")
        ->transform(path_name())->type_name("DUMP");
}

void add_parameter_flags(CLI::App* cmd, run_options& o) {
    cmd->option_defaults()->group("Parameters");
    add_seed(cmd, "--seed", o.cfg.seed,
             "torch.manual_seed(N) for the weights and x; a negative N wraps, as in PyTorch");
    cmd->add_flag("--no-qkv-bias", o.no_qkv_bias, "nn.Linear(..., bias=False) for q, k and v");
    cmd->add_flag("--no-out-proj", o.no_out_proj, "no output projection: the result is the concat stage");
}

void add_dropout_flags(CLI::App* cmd, run_options& o) {
    attn::dropout_spec& d = o.cfg.dropout;
    cmd->option_defaults()->group("Dropout");
    add_probability(cmd, "--dropout", d.p,
                    "P, nn.Dropout(p) on the weights; it acts only with --train, as eval mode is the identity")
        ->default_val(0.0);
    cmd->add_flag("--train", d.train, "training mode: adds stage 11, dropout.weights = weights·keep/(1-P)");
    add_seed(cmd, "--dropout-seed", d.seed,
             "torch.manual_seed(N); keep = torch.rand(B,H,Sq,Sk) < 1-P. PyTorch's own "
             "dropout draws with bernoulli_, whose numbers depend on how PyTorch was "
             "built, so these are reproducible but not PyTorch's nn.Dropout numbers");
}

void add_flash_flag(CLI::App* cmd, run_options& o) {
    cmd->option_defaults()->group("Flash attention");
    cmd->add_option("--flash-block", o.cfg.flash_block,
                    "N, keys per block: adds stage flash, flash attention's tiled (online) softmax next to the "
                    "exact one. Per query row, keys come N at a time: m = max(m, rowmax(S_j)), rescale = "
                    "exp(m_old - m) (0 at the first block), l = rescale·l + sum(exp(S_j - m)) (summed left to right in float32), acc = rescale·acc + "
                    "exp(S_j - m)·V_j, and context = acc / l, with no [Sq,Sk] plane held (memory O(Sq·N), not "
                    "O(Sq·Sk)). The stage reports max_abs_diff, the largest |flash - exact| of the contexts, and "
                    "warns above its tolerance, 1e-5 × max(1, max|v|). A row with no allowed key gives 0 "
                    "(FlashAttention-2), where the exact softmax with --fill -inf gives NaN (such rows are left "
                    "out of max_abs_diff). The PyTorch it mirrors: a loop over k[:, :, j:j+N] and v[:, :, j:j+N]. "
                    "Not with --train --dropout (flash never forms the weights dropout acts on). "
                    "Example: attn trace --seq 6 --mask causal --flash-block 4 --stage flash")
        ->transform(whole_number(1, std::int64_t{1} << 40))
        ->type_name("N");
}

void add_position_flags(CLI::App* cmd, run_options& o) {
    cmd->option_defaults()->group("Positions");
    add_choice(cmd, "--pos", o.pos, {"none", "rope", "alibi", "sinusoidal"}, "KIND",
               "how the tokens' positions enter (attention alone ignores order): rope rotates q and k after the "
               "head split by angles pos/base^(2i/dk), as Hugging Face's Llama (q*cos + rotate_half(q)*sin), "
               "stage rope; alibi adds -m_h*(i-j) to the scaled scores, slopes 2^(-8(h+1)/H) for H a power of 2 "
               "(else 2^(-8(h+1)/P) for h < P = 2^floor(log2 H), then 2^(-4(2(h-P)+1)/P)) as Press et al.'s "
               "get_slopes, stages alibi and biased; sinusoidal adds the Annotated Transformer's "
               "PE[pos,2i] = sin(pos/10000^(2i/Din)), PE[pos,2i+1] = cos(...) to x before the projections, stage "
               "positions. rope and alibi need self-attention. Example: attn trace --pos rope --stage rope");
    cmd->add_option("--rope-base", o.cfg.rope_base,
                    "B, rope's base: inv_freq = 1.0 / (B ** (torch.arange(0, dk, 2).float() / dk)); Llama 2 "
                    "uses 10000, Llama 3 500000 (a larger base turns the slow pairs slower). Needs --pos rope")
        ->transform(number())->type_name("B")->default_val(10000.0);
    add_choice(cmd, "--rope-style", o.rope_style, {"half", "interleaved"}, "PAIRS",
               "which coordinates rope rotates together: half, (i, i+dk/2) as Hugging Face's rotate_half, "
               "torch.cat((-x2, x1), -1); interleaved, (2i, 2i+1) as GPT-J and Meta's original Llama code "
               "(rotate_every_two). Needs --pos rope");
}

void add_mistake_flag(CLI::App* cmd, run_options& o) {
    std::vector<std::string> ids{"none"};
    for (attn::mistake m : attn::all_mistakes()) ids.emplace_back(attn::mistake_id(m));
    cmd->option_defaults()->group("Mistakes, on purpose");
    add_choice(cmd, "--mistake", o.mistake, ids, "ID",
               "make a common mistake on purpose, at the stage where students make it, so every later "
               "stage shows what it does (a warning says so): softmax_axis (dim=-2), missing_scale, "
               "wrong_scale (/ √D), mask_inverted, fill_value (0 instead of the fill; -inf when the fill is 0), "
               "split_without_transpose (q.view(B,H,S,dk)), merge_without_transpose (context.view(B,Sq,D)), "
               "weight_not_transposed (x·W; needs Din == D), q_k_swapped (K·Qᵀ; needs Sq == Sk), "
               "missing_bias (Q, K, V without bias), dropout_not_rescaled (weights·keep; needs --dropout P --train), "
               "dropout_keep_inverted (weights·~keep / (1 - p); the same), weights_transposed (weightsᵀ·V; needs "
               "Sq == Sk), mask_not_applied (masked = scaled), mask_or_instead_of_and (causal | padding; needs two "
               "mask kinds), causal_only and padding_only (one kind of two), padding_on_queries (i < length), "
               "diagonal_masked (tril(ones, -1)), window_off_by_one (|i - j| < W), masked_after_softmax "
               "(softmax, then the masked weights zeroed), nan_replaced (nan_to_num after softmax; needs fill -inf), "
               "log_softmax, sigmoid_instead_of_softmax, scale_multiplied (· √dk), heads_interleaved "
               "(view(B,S,dk,H).permute(0,3,1,2)), causal_misaligned (upper-left for --causal-align lower-right, or "
               "back; needs Sq != Sk, as with --past N), kv_heads_tiled (k.repeat(1, H/G, 1, 1) for "
               "repeat_interleave; needs --kv-heads G, 1 < G < H), rope_positions_from_zero (the new q and k "
               "rotated at 0..Sq-1, not N..N+Sq-1; needs --pos rope --past N), rope_pairs_mixed (rotate_half for "
               "--rope-style interleaved, or back; needs --pos rope, dk >= 4), alibi_sign (bias +m·(i - j), far "
               "keys favoured; needs --pos alibi). attn check names the same ids");
}

}  // namespace

flag_given flags_given_to(const CLI::App* cmd) {
    return [cmd](const char* flag) {
        const CLI::Option* opt = cmd->get_option_no_throw(flag);
        return opt != nullptr && opt->count() > 0;
    };
}

attn::loaded_inputs load_run_inputs(const run_options& flags, const flag_given& given) {
    run_options o = flags;
    o.cfg.limits.max_memory = memory_limit(o.max_memory);  // 0: none
    const auto has = [&](const char* flag) {  // mask and exercise commands have no --tokens
        try {
            return given(flag);
        } catch (const std::exception&) {
            return false;
        }
    };
    if (!o.from.empty() && (has("--tokens") || has("--vocab") || has("--text")))
        throw attn::usage_error(std::string(has("--tokens") ? "--tokens" : has("--text") ? "--text" : "--vocab") +
                                " cannot be used with --from (a dump replays its own input)");
    if (!o.from.empty()) {
        attn::loaded_inputs loaded = replay_inputs(o, given);
        check_rope_flags(loaded.cfg, given);
        return loaded;
    }
    o.files.model = model_choice(o, given);
    if (has("--tokens")) o.files.tokens = attn::parse_token_ids(o.tokens);
    if (has("--text")) {
        if (has("--tokens")) throw attn::usage_error("--text and --tokens both give layer 0's tokens: give one of them");
        if (o.files.params.empty())
            throw attn::usage_error("--text is tokenized by a checkpoint's own tokenizer: give --params FILE (GPT-2's, with "
                                    "vocab.json and merges.txt beside it)");
        const attn::read_budget budget = read_budget_of(o.cfg.limits.max_memory);
        attn::text_tokens t = attn::tokenize_beside(o.files.params, o.text, &budget);
        for (const attn::token_piece& piece : t.tokens) o.files.tokens.push_back(piece.id);
        o.files.tokens_from_text = true;
        if (o.files.vocab.empty()) o.files.vocab = t.vocab_path;  // the tokens on the axes
    }
    if (o.files.params.empty() && (o.files.model.arch || o.files.model.layer))
        throw attn::usage_error(std::string(o.files.model.arch ? "--arch " + o.arch : "--layer " + std::to_string(o.layer)) +
                                " says how to read --params FILE, a model's weights: give --params");
    attn::config c = base_config(o);
    // a decoding step's causal mask aligns lower-right by itself: the last query is the last token
    // (an explicit --causal-align upper-left stays allowed: it is the mistake a student makes)
    if (c.past > 0 && !given("--causal-align")) c.mask.causal_align = attn::causal_alignment::lower_right;
    attn::loaded_inputs loaded = attn::load_inputs(c, o.sizes, o.files);
    check_rope_flags(loaded.cfg, given);
    return loaded;
}

CLI::Option* add_max_memory_flag(CLI::App* cmd, std::string& into) {
    return cmd->add_option("--max-memory", into,
                           "refuse sizes whose stages need more than SIZE, e.g. 4GiB, before anything is read or "
                           "computed (files too: every file attn reads, .npz members, text members, JSON documents and "
                           "the values parsed from them, .safetensors headers, vocabularies, pipes, a PNG's canvas, "
                           "is refused when larger than SIZE, before it is read); the message "
                           "names the largest stages. 0 or none: no limit. Usable memory: the RAM, or a container's "
                           "limit or ulimit -v when less")
        ->default_str("80% of usable memory")
        ->transform(byte_size_or_none())
        ->type_name("SIZE");
}

namespace {

/// What ulimit -v must leave beside the run's tensors: the program and its libraries, and the
/// address space OpenBLAS's buffers, the threads' stacks and the C library's arenas map
/// without using (a 150 MiB run maps about 380 MiB).
constexpr std::uint64_t address_space_beside_tensors = std::uint64_t(256) << 20;

/// The bytes this process may use: the machine's RAM, a container's limit (cgroup v2
/// memory.max, v1 memory.limit_in_bytes) and its address-space limit (ulimit -v), the least.
std::uint64_t usable_memory() {
    std::uint64_t usable = std::uint64_t(8) << 30;  // when the RAM cannot be read
    const long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page_size > 0) usable = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
    for (const char* limit_file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(limit_file);
        std::uint64_t limit = 0;
        if (in >> limit && limit > 0) usable = std::min(usable, limit);  // "max" reads as no number
    }
    rlimit address_space{};
    if (getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY) {
        const std::uint64_t limit = address_space.rlim_cur;
        const std::uint64_t beside = std::min(address_space_beside_tensors, limit / 2);
        usable = std::min(usable, limit - beside);
    }
    return usable;
}

}  // namespace

std::uint64_t memory_limit(const std::string& flag_value) {
    if (!flag_value.empty()) return std::stoull(flag_value);  // byte_size_or_none() made it digits
    return std::max<std::uint64_t>(usable_memory() / 10 * 8, 1);  // never 0, which means no limit
}

attn::read_budget read_budget_of(std::uint64_t limit) {
    return attn::read_budget(limit == 0 ? attn::read_budget::unlimited : limit);
}

void check_whole_run_memory(const attn::config& c, std::uint64_t limit) {
    if (limit != 0) attn::check_memory(c, limit);
}

std::string draw_order_help() {
    return wrap("Inputs are drawn as PyTorch would: torch.manual_seed(N); nn.Linear(Din,D) for q, "
         "nn.Linear(Dkv,D) for k and v, nn.Linear(D,D) for the output; x = torch.randn(B,Sq,Din); "
         "x_kv = torch.randn(B,Sk,Dkv) for cross-attention only. With --kv-heads G, k and v are "
         "nn.Linear(Dkv,G·dk); with --past N, x = torch.randn(B,N+Sq,Din), the whole sequence. Same seed, same numbers. "
         "A tensor read from a file draws nothing; the rest keep this order. With --q --k --v "
         "only the output layer is drawn (right after the seed), unless --params gives w_o b_o.",
         help_width);
}

void add_run_flags(CLI::App* cmd, run_options& o) {
    add_shape_flags(cmd, o);
    cmd->option_defaults()->group("Shapes (a size not given comes from the input files, else the default)");
    add_size(cmd, "--kv-heads", o.kv_heads,
             "G, key/value heads: grouped-query attention (1 = multi-query, as Llama 2 70B and Mistral use G < H). "
             "w_k and w_v become nn.Linear(Dkv, G·dk); the repeat_kv stage copies k and v to H heads with "
             "k.repeat_interleave(H/G, dim=1), so query head h reads kv head h // (H/G). G must divide H. "
             "Example: --heads 4 --kv-heads 2")
        ->default_str("--heads");
    add_file_flags(cmd, o);
    add_parameter_flags(cmd, o);
    add_position_flags(cmd, o);
    add_mask_flags(cmd, o);
    add_dropout_flags(cmd, o);
    add_flash_flag(cmd, o);
    add_mistake_flag(cmd, o);
}

void add_shape_flags(CLI::App* cmd, run_options& o) {
    attn::size_flags& sz = o.sizes;
    cmd->option_defaults()->group("Shapes (a size not given comes from the input files, else the default)");
    add_size(cmd, "--batch", sz.batch, "B, sequences in the batch")->default_str("1");
    add_size(cmd, "--seq", sz.seq, "Sq, query (and by default key) length")->default_str("4");
    add_size(cmd, "--kv-seq", sz.kv_seq, "Sk, key/value length; differing from Sq = cross-attention")
        ->default_str("--seq");
    add_size(cmd, "--d-model", sz.d_model, "D, model width: q, k, v and output width")
        ->default_str("8, or Din when a file gives Din");
    add_size(cmd, "--heads", o.cfg.heads, "H, attention heads; dk = D / H must be whole")->default_val(2);
    add_size(cmd, "--d-in", sz.d_in, "Din, query-side input width")->default_str("--d-model");
    add_size(cmd, "--d-kv-in", sz.d_kv_in, "Dkv, key/value-side input width")->default_str("--d-in");
    add_size(cmd, "--past", o.past,
             "N, tokens already in the KV cache: one decoding step. x = torch.randn(B, N+Sq, Din); the queries "
             "are the last Sq tokens, the cache stage holds k and v of the first N (same weights), the append "
             "stage is torch.cat((past_k, k), dim=2), so Sk = N + Sq; causal aligns lower-right by itself. "
             "Self-attention, not cross. Example: --past 6 --seq 1 --mask causal")
        ->default_str("0");
    cmd->add_flag("--cross", o.cross,
                  "cross-attention even when the sizes match: keys and values from their own "
                  "x_kv = torch.randn(B,Sk,Dkv), drawn after x (a decoder attending an encoder)");
}

void add_mask_flags(CLI::App* cmd, run_options& o) {
    attn::input_paths& f = o.files;
    cmd->option_defaults()->group("Masks");
    cmd->add_option("--mask", o.mask,
                    "none, or kinds joined by '+': causal (j <= i), padding (needs --lengths), "
                    "window (needs --window), random (--mask-seed, --mask-keep)")
        ->type_name("KINDS")
        ->default_val("none");
    add_choice(cmd, "--causal-align", o.causal_align, {"upper-left", "lower-right"}, "WHERE",
               "where causal puts its diagonal when Sq != Sk: upper-left, as torch.tril(torch.ones(Sq, Sk)) "
               "and SDPA's is_causal (query i may attend keys j <= i); or lower-right, as "
               "torch.tril(torch.ones(Sq, Sk), diagonal=Sk-Sq), flash-attention and KV-cache decoding "
               "(j <= i+Sk-Sq: the last query sees every key)");
    cmd->add_option("--lengths", o.lengths, "padding: the valid key length of each batch item, e.g. 5,3")
        ->delimiter(',')
        ->transform(whole_number().name("whole numbers joined by commas, such as 5,3"))
        ->type_name("N,N,...");
    add_size(cmd, "--window", o.window, "window: query i may attend keys j with |i - j| <= W")->type_name("W");
    add_seed(cmd, "--mask-seed", o.cfg.mask.random_seed, "random: torch.manual_seed(N); torch.rand(B,1,Sq,Sk) < P");
    add_probability(cmd, "--mask-keep", o.cfg.mask.random_keep, "random: P, the chance that a key may be attended")
        ->default_val(0.5);
    cmd->add_option("--fill", o.fill,
                    "value where the mask is false: -inf, which gives a row with no allowed key "
                    "NaN weights as in PyTorch, or a number such as -1e9, which gives it uniform weights. "
                    "Shown as typed when written in decimal, else by its value (0x1p3: 8); one that "
                    "float32 cannot hold (1e-50, which it makes 0) is refused")
        ->type_name("V")
        ->default_val("-inf");
    cmd->add_flag("--safe-softmax", o.safe_softmax,
                  "a row with no allowed key gets 0 weights instead of NaN, as torch._safe_softmax in "
                  "F.scaled_dot_product_attention (PyTorch 2.5 and later); other rows are unchanged. "
                  "It acts on rows that are all -inf, so it needs --fill -inf");
    cmd->add_option("--mask-file", f.mask,
                    "an explicit mask [Sq,Sk], [B,Sq,Sk] or [B,1,Sq,Sk] (.json, .npy or .npz), "
                    "true/1 = may attend unless --mask-convention says otherwise; combined with --mask by AND")
        ->transform(path_name())->type_name("FILE");
    cmd->add_option("--key-padding-mask", f.key_padding_mask,
                    "[B,Sk], true/1 = padded key, as nn.MultiheadAttention's key_padding_mask (with "
                    "--mask-convention keep: 1 = real token, as a padding mask of 1s and 0s)")
        ->transform(path_name())->type_name("FILE");
    cmd->add_option("--mask-convention", o.mask_convention,
                    "how the mask files read: keep (true = may attend, as F.scaled_dot_product_attention), "
                    "mha (true = NOT allowed, as nn.MultiheadAttention's attn_mask and key_padding_mask, "
                    "torch.triu(..., 1).bool()) or additive (0 = may attend, -inf or <= -1e4 = may not)")
        ->transform(one_of({"keep", "mha", "additive"}))
        ->default_str("keep for --mask-file, mha for --key-padding-mask")
        ->type_name("HOW");
}

}  // namespace attn_app
