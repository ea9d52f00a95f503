#pragma once
// `attn trace --from DUMP`: a dump written by --format npz or --format json, read
// back as the run that wrote it. Its "config" gives the run's settings; the tensors
// it holds of the stages a run starts from (input, params, the projections when the
// run started there, a mask from a file) are taken as given, and what it lacks is
// drawn from the seed exactly as the original run drew it.
//
//   dump d = read_dump("t.npz");
//   /* the app applies the flags given on top of d.cfg */
//   loaded_inputs in = load_replay(std::move(d), cfg, sizes, paths);
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/io/file_inputs.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

/// A dump read back.
struct dump {
    std::string what;  // "--from t.npz": how messages name it
    config cfg;        // the run as its "config" records it (validated)
    /// The tensors a replay can start from, by their dump names: input.x, input.x_kv,
    /// params.w_q ... params.b_o, projections.q/k/v, mask.mask (those it holds).
    std::map<std::string, loaded_tensor> tensors;
    /// The run had a model's block after attention (config "block"): a replay leaves it out, saying so.
    bool block_left_out = false;
};

/// Whether `name` ("params.w_q") is one of the tensors a dump is read for.
bool replay_reads(const std::string& name);

/// Reads the dump at `path`: an .npz of --format npz (its "config" text member and the
/// arrays replay_reads accepts) or a .json of --format json ("attn.trace/1"), numbers
/// as the same float32 bits. Throws attn::error "--from <path>: ..." for a file that
/// cannot be read, is not a dump, or whose config is malformed. Within `budget`
/// (--max-memory): a .json dump's size is checked before it is read, an .npz member's
/// declared size before it is inflated.
dump read_dump(const std::string& path, read_budget* budget = nullptr);

/// The config that config_to_json (render_json.hpp) wrote as `j`. Throws attn::error
/// "<what>: config ..." naming a key missing, of the wrong type or unknown, or what
/// makes the run impossible.
config config_from_json(const nlohmann::json& j, const std::string& what);

/// The inputs of a replay: `c` is d.cfg with the flags given applied on top; `sizes`
/// and `paths` are the size and file flags given. A file flag replaces the dump's
/// tensor. Throws usage_error naming both for a flag that contradicts a tensor taken
/// from the dump (a size, --seed against drawn tensors, a mask kind already ANDed into
/// its mask, a flag that moves the start of the run), and attn::error naming the
/// array when the original run read a tensor from a file and the dump lacks it.
loaded_inputs load_replay(dump d, config c, const size_flags& sizes, const input_paths& paths);

}  // namespace attn
