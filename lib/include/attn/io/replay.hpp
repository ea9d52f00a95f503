#pragma once
// `attn trace --from DUMP`: a dump written by --format npz or --format json, read
// back as the run that wrote it. Its "config" gives the run's settings; the
// tensors it holds of the stages a run starts from (input, params, the
// projections when the run started there, a mask from a file) are taken as
// given. What it lacks is drawn from the seed exactly as the original run drew it.
//
//   dump d = read_dump("t.npz");                    // config + input tensors
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
};

/// Whether `name` ("params.w_q") is one of the tensors a dump is read for.
bool replay_reads(const std::string& name);

/// Reads the dump at `path`: an .npz from --format npz (the "config" text member
/// and the arrays replay_reads accepts; the rest are skipped unread) or a .json
/// document from --format json ("format": "attn.trace/1"). Numbers come back as
/// the same float32 bits. Throws attn::error "--from <path>: ..." for a file that
/// cannot be read, is not a dump, or whose config is malformed.
dump read_dump(const std::string& path);

/// The config that config_to_json wrote as `j` (render_json.hpp); the inverse of it.
/// Throws attn::error "<what>: config ..." naming the key that is missing, of the
/// wrong type or unknown, or what makes the run impossible.
config config_from_json(const nlohmann::json& j, const std::string& what);

/// The inputs of a replay. `c` is d.cfg with the flags given applied on top (shapes,
/// heads, seed, masks, fill, dropout: the app does that); `sizes` and `paths` are
/// the size and file flags given. A file flag replaces the dump's tensor; every
/// other tensor the dump holds of input, params, and (when the run started there)
/// the projections and (when it came from a file or a key padding mask) the mask is
/// given, and the rest is drawn as the original run drew it. Throws usage_error
/// naming both for a flag that contradicts a tensor taken from the dump (a size,
/// --no-qkv-bias, --seed against drawn tensors, a mask kind already ANDed into the
/// dump's mask, a flag that moves the start of the run), and attn::error naming the
/// array when the original run read a tensor from a file and the dump lacks it.
loaded_inputs load_replay(dump d, config c, const size_flags& sizes, const input_paths& paths);

}  // namespace attn
