#pragma once
// The keys of a run's config, listed once. Each row is one key of attn.trace/1's "config"
// (CLI.md): the flag that sets it, its JSON Schema and description, when and how it is
// written, how a dump's value is read back (--from, exercise files), and how the flag,
// given on top of a replayed dump, replaces the dump's setting. config_to_json,
// config_from_json (replay.hpp), the replay's flags (app/run_flags.cpp) and the "config"
// of share/attn/trace.schema.json (a test compares it with config_schema) all read this list.
//
// A key's default is config{}'s (config.hpp): what a config without the key reads as.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "attn/compute/config.hpp"
#include "attn/io/config_reader.hpp"

namespace attn {

struct config_field {
    const char* key;     // "heads": its name in "config"
    const char* flag;    // "--heads": the flag that sets it; "" for a key derived from others
    bool required;       // written by every run (the schema's "required"); else only when it says something
    const char* schema;  // its JSON Schema without "description" and "enum", as JSON text
    const char* doc;     // the schema's "description"; "" for none
    /// The names the key takes (the schema's "enum"), from the parser's own list; nullptr: none.
    std::vector<std::string> (*choices)();
    /// Its value in `c`'s config, nullopt when the run leaves it out.
    std::optional<nlohmann::ordered_json> (*value)(const config& c);
    /// Reads it from a config into `c` (the rows before it already read); nullptr: a key
    /// config_from_json checks on its own (derived, or a run that does not replay).
    void (*read)(config_reader& k, config& c);
    /// The flag given on top of a replayed dump: `flags`' setting replaces `c`'s. nullptr: the
    /// flag is one load_replay checks against the dump's tensors (a size, a file).
    void (*take)(const config& flags, config& c);
};

/// Every key, in the order config_to_json writes them.
const std::vector<config_field>& config_fields();

/// The config block of a JSON document, npz dump or exercise: each field's value, in order.
nlohmann::ordered_json config_to_json(const config& c);

/// The JSON Schema of that block: {"type": "object", "required": [...], "properties": {...}}.
nlohmann::ordered_json config_schema();

}  // namespace attn
