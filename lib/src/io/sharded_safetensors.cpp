// A sharded checkpoint read as one .safetensors file (sharded_safetensors.hpp).
#include "attn/io/sharded_safetensors.hpp"

#include <algorithm>
#include <filesystem>

#include "attn/compute/error.hpp"
#include "attn/io/json_document.hpp"
#include "attn/text/printable_text.hpp"

namespace attn {

bool is_shard_index(const std::string& path) {
    const std::string suffix = ".safetensors.index.json";
    return path.size() > suffix.size() && path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
}

sharded_checkpoint read_shard_index(const std::string& path, const std::string& what, read_budget* budget) {
    const nlohmann::json index = parse_json_document(
        read_bounded_text(path, what, max_shard_index_bytes, "16 MiB; a checkpoint's index is a few hundred kB", budget), what);
    if (!index.is_object() || !index.contains("weight_map") || !index.at("weight_map").is_object())
        throw error(what + ": expected a sharded checkpoint's index, an object with a \"weight_map\" object "
                           "({\"tensor name\": \"model-00001-of-00002.safetensors\", ...})");
    const std::filesystem::path folder = std::filesystem::path(path).parent_path();
    sharded_checkpoint c;
    std::map<std::string, std::size_t> shard_number;  // a shard's file name -> its place in shard_paths
    for (const auto& [name, shard] : index.at("weight_map").items()) {
        if (!shard.is_string())
            throw error(what + ": weight_map[\"" + quoted_field(name) + "\"] is " + json_excerpt(shard) + "; expected a shard's file name");
        const std::string file = shard.get<std::string>();
        if (file.empty() || file.find('/') != std::string::npos || file == "." || file == "..")
            throw error(what + ": weight_map[\"" + quoted_field(name) + "\"] is \"" + quoted_field(file) +
                        "\"; expected a file name beside the index (no folder)");
        auto [at, added] = shard_number.emplace(file, c.shard_paths.size());
        if (added) {
            c.shard_paths.push_back((folder / file).string());
            c.shard_whats.push_back("--params " + printable_text(c.shard_paths.back()));
            c.headers.push_back(read_safetensors_header(c.shard_paths.back(), c.shard_whats.back(), budget));
        }
        c.shard_of[name] = at->second;
    }
    for (const auto& named : c.shard_of) {
        const std::string& name = named.first;  // not a structured binding: clang 14 cannot capture one
        const std::size_t shard = named.second;
        const std::vector<safetensors_entry>& held = c.headers[shard].entries;
        const auto entry = std::find_if(held.begin(), held.end(), [&](const safetensors_entry& e) { return e.name == name; });
        if (entry == held.end())
            throw error(what + ": weight_map puts \"" + quoted_field(name) + "\" in " +
                        printable_text(std::filesystem::path(c.shard_paths[shard]).filename().string()) +
                        ", which does not hold it");
        c.entries.push_back(*entry);
    }
    return c;
}

std::map<std::string, loaded_tensor> read_sharded(const sharded_checkpoint& c, const std::function<bool(const std::string&)>& wanted,
                                                  read_budget* budget) {
    std::map<std::string, loaded_tensor> tensors;
    for (std::size_t shard = 0; shard < c.shard_paths.size(); ++shard) {
        const auto here = [&](const std::string& name) {  // the weight_map's own shard for it, and wanted
            const auto it = c.shard_of.find(name);
            return it != c.shard_of.end() && it->second == shard && (!wanted || wanted(name));
        };
        for (auto& [name, t] : read_safetensors(c.shard_paths[shard], c.shard_whats[shard], c.headers[shard], here, budget))
            tensors[name] = std::move(t);
    }
    return tensors;
}

loaded_tensor read_sharded_rows(const sharded_checkpoint& c, const std::string& name, const std::vector<std::int64_t>& rows,
                                read_budget* budget) {
    const std::size_t shard = c.shard_of.at(name);
    return read_safetensors_rows(c.shard_paths[shard], c.shard_whats[shard], c.headers[shard], name, rows, budget);
}

}  // namespace attn
