#pragma once
// The flags that say which run to compute (shapes, tensors from files, parameters, masks,
// dropout), shared by the commands that compute one; here they become a config and inputs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "attn/compute/config.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn_app {

/// Everything the run flags say, before defaults that depend on other flags are applied.
struct run_options {
    attn::config cfg;
    attn::size_flags sizes;
    attn::input_paths files;
    std::string from;  // --from DUMP: replay it
    bool no_qkv_bias = false, no_out_proj = false;
    std::string mask = "none";
    std::vector<std::int64_t> lengths;
    std::optional<std::int64_t> window;
    std::string causal_align = "upper-left";
    std::string fill = "-inf";
    bool safe_softmax = false;
    std::string mask_convention;  // empty: each file's own PyTorch convention
    bool cross = false;
    std::string mistake = "none";  // --mistake ID
    std::int64_t past = 0;         // --past N: a decoding step with N cached tokens
    std::int64_t kv_heads = 0;     // --kv-heads G (0: as many as --heads)
    std::string pos = "none";          // --pos
    std::string rope_style = "half";   // --rope-style
    std::string arch = "auto";         // --arch: whose names --params holds
    std::int64_t layer = 0;            // --layer L: which layer of a model's file
    std::string tokens;                // --tokens IDS or @FILE, parsed by load_run_inputs
    std::string text;                  // --text TEXT or @FILE, tokenized by load_run_inputs
    std::string max_memory;        // --max-memory as byte_size_or_none() left it: "" = 80% of usable memory, "0" = none
};

/// Whether a flag ("--seq") was given on the command line (not a default).
using flag_given = std::function<bool(const char*)>;

/// Whether a flag was given to `cmd`; false for a flag `cmd` does not have (attn mask's --pos).
flag_given flags_given_to(const CLI::App* cmd);

/// Adds the groups Shapes, Tensors from files, Parameters, Positions, Masks, Dropout and Mistakes
/// to `cmd`, writing into `o` (which must outlive parsing).
void add_run_flags(CLI::App* cmd, run_options& o);

/// --max-memory SIZE, the same flag and default for every command that computes a run
/// (trace, check, mask, exercise show|check), into `into` ("" until given).
CLI::Option* add_max_memory_flag(CLI::App* cmd, std::string& into);

/// The bytes --max-memory allows: `flag_value` as add_max_memory_flag left it; "" is 80% of
/// the memory this process may use (RAM, a container's cgroup limit, ulimit -v); 0 means no limit.
std::uint64_t memory_limit(const std::string& flag_value);

/// The bytes a run's files may fill within `limit` (memory_limit's; 0: no limit).
attn::read_budget read_budget_of(std::uint64_t limit);

/// For the commands that compute the right run whole (check, exercise): refuses `c` when it
/// needs more than `limit` bytes (memory_limit's; 0: no limit), before anything is computed.
void check_whole_run_memory(const attn::config& c, std::uint64_t limit);

/// The groups Shapes and Masks alone, for attn mask.
void add_shape_flags(CLI::App* cmd, run_options& o);
void add_mask_flags(CLI::App* cmd, run_options& o);

/// The run the flags describe: the files read, the sizes resolved and validated; with
/// --from, the dump's config and tensors with the flags given on top. Every size, from a
/// flag or a file, is checked against o.max_memory (memory_limit) before anything large
/// is read or allocated; the config carries that limit.
attn::loaded_inputs load_run_inputs(const run_options& o, const flag_given& given);

/// "Inputs are drawn as PyTorch would: ...", wrapped for a command's --help footer.
std::string draw_order_help();

}  // namespace attn_app
