#pragma once
// A dump's "config" object read key by key, each value checked for the type its key takes.
// Every message names the dump and the key: `--from t.npz: config "seq" is "4"; expected a
// whole number`.
#include <cstdint>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace attn {

class config_reader {
public:
    /// Throws attn::error when `j` is not an object. `what` names the dump in messages.
    config_reader(const nlohmann::json& j, const std::string& what);

    /// Whether the key is there; asking marks it known (no_others).
    bool has(const char* key);
    /// The key's value; attn::error when it is absent.
    const nlohmann::json& at(const char* key);

    std::int64_t whole(const char* key);            // an integer that fits int64
    std::uint64_t unsigned_whole(const char* key);  // 0 or more, up to 2^64 - 1 (a seed)
    double number(const char* key);
    double number_from(const char* key, double lo, double hi);  // lo <= value <= hi, as the flag takes it
    bool flag(const char* key);                                 // true or false
    /// A string: a name or a fill as typed, at most 64 bytes (a dump is data: nothing from it
    /// is printed beyond what a flag could say).
    std::string text(const char* key);

    /// Throws attn::error: the key's value is not `expected`.
    [[noreturn]] void wrong(const char* key, const std::string& expected) const;
    /// Throws for a key no call asked about: a setting this attn cannot replay.
    void no_others() const;

    const std::string& what() const { return what_; }

private:
    template <class T>
    T typed(const char* key, bool (nlohmann::json::*is)() const noexcept, const char* expected);

    const nlohmann::json& j_;
    const std::string& what_;
    std::set<std::string> seen_;
};

}  // namespace attn
