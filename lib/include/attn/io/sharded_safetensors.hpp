#pragma once
// A checkpoint split into shards, as Hugging Face saves a large model:
//   model.safetensors.index.json   {"metadata": {...}, "weight_map": {"model.layers.0.self_attn.q_proj.weight":
//                                   "model-00001-of-00002.safetensors", ...}}
//   model-00001-of-00002.safetensors, ...   beside it
// `--params model.safetensors.index.json` reads it as one .safetensors file: each shard's header
// is read once, and only the tensors a run wants are read, from the shards that hold them.
// A shard named with a folder ("../x", "/x", "a/b") is refused: shards are the index's
// siblings. Each error is one attn::error line naming the index (or the shard) and the key.
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "attn/io/safetensors.hpp"
#include "attn/io/tensor_file.hpp"

namespace attn {

/// The index's largest accepted size: a 400-billion-parameter model's is under 200 kB.
inline constexpr std::uint64_t max_shard_index_bytes = std::uint64_t(16) << 20;

struct sharded_checkpoint {
    std::vector<std::string> shard_paths;        // each shard once, in the order the index first names it
    std::vector<std::string> shard_whats;        // how messages name each: "--params dir/model-00001-of-00002.safetensors"
    std::vector<safetensors_header> headers;     // each shard's, read once
    std::map<std::string, std::size_t> shard_of;  // a tensor's name -> its shard
    std::vector<safetensors_entry> entries;      // every tensor of the weight_map, from its shard's header
};

/// Whether `path` names a sharded checkpoint's index: its name ends in ".safetensors.index.json".
bool is_shard_index(const std::string& path);

/// The index and every shard's header (each within `budget`); attn::error for an index that
/// is not JSON, has no weight_map object, names a shard with a folder or one that is missing,
/// or a tensor its shard does not hold.
sharded_checkpoint read_shard_index(const std::string& path, const std::string& what, read_budget* budget = nullptr);

/// read_safetensors over the shards: every tensor `wanted` accepts, each from its own shard.
std::map<std::string, loaded_tensor> read_sharded(const sharded_checkpoint& c, const std::function<bool(const std::string&)>& wanted,
                                                  read_budget* budget = nullptr);

/// read_safetensors_rows of the shard holding `name`.
loaded_tensor read_sharded_rows(const sharded_checkpoint& c, const std::string& name, const std::vector<std::int64_t>& rows,
                                read_budget* budget = nullptr);

}  // namespace attn
